import { createHash } from "node:crypto";
import type { WorkloadSpec } from "./project-config";

/** Inherited by every workload unless the declaration narrows nothing: the basics a program needs. */
export const DEFAULT_ENV_ALLOW = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"];
/** Never inherited, even when allowed: set them explicitly in `env.set` if a workload needs one. */
export const CREDENTIAL_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|KEY|COOKIE|CREDENTIAL)/i;
/** Loader and runtime hooks that change what runs; only an explicit `env.set` may provide them. */
export const LOADER_NAMES = new Set(["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "NODE_OPTIONS", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH"]);

export interface ChildEnvironment {
  env: Record<string, string>;
  /** What a reviewer sees: inherited names (values hidden), explicit values, and what was withheld. */
  review: { inherited: string[]; set: Record<string, string>; withheld: string[] };
  /** Binds inherited values into the plan's digest without showing them. */
  inheritedDigest: string;
}

/** The child's environment: the allowlist from the parent minus credentials and loaders, plus explicit values. */
export function buildChildEnv(workload: WorkloadSpec, parent: NodeJS.ProcessEnv = process.env): ChildEnvironment {
  const env: Record<string, string> = {};
  const inherited: string[] = [];
  const withheld: string[] = [];
  for (const name of [...new Set([...DEFAULT_ENV_ALLOW, ...workload.env.allow])].sort()) {
    const value = parent[name];
    if (value === undefined) continue;
    if (CREDENTIAL_NAME.test(name) || LOADER_NAMES.has(name)) {
      withheld.push(name);
      continue;
    }
    env[name] = value;
    inherited.push(name);
  }
  for (const [name, value] of Object.entries(workload.env.set)) env[name] = value;
  const digest = createHash("sha256");
  for (const name of inherited) digest.update(`${name}=${env[name]}\0`);
  return { env, review: { inherited, set: { ...workload.env.set }, withheld }, inheritedDigest: digest.digest("hex") };
}
