import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import { EmberscopeError } from "../domain/errors";
import { CONFIG_FILE } from "../store/layout";

/**
 * emberscope.toml — human-owned, at the project root: the workloads a person declared, and the
 * limits and policy that bound captures. Parsed strictly: an unknown key fails naming its path.
 */

const ParameterSpec = z
  .object({
    type: z.enum(["integer", "number", "string", "boolean"]),
    default: z.union([z.number(), z.string(), z.boolean()]),
    description: z.string().max(500).optional(),
  })
  .strict();
export type ParameterSpec = z.infer<typeof ParameterSpec>;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const WorkloadSpec = z
  .object({
    description: z.string().max(1000).optional(),
    argv: z.array(z.string().min(1).max(4096)).min(1).max(256).describe("Program and arguments; {name} is replaced by a parameter."),
    cwd: z.string().max(1024).default("."),
    timeout: z.number().positive().max(24 * 3600).default(120).describe("Seconds before the workload is killed (PROCESS_TIMEOUT)."),
    env: z
      .object({
        allow: z.array(z.string().regex(ENV_NAME)).max(200).default([]),
        set: z.record(z.string().regex(ENV_NAME), z.string().max(4096)).default({}),
      })
      .strict()
      .default({ allow: [], set: {} }),
    parameters: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), ParameterSpec).default({}),
  })
  .strict();
export type WorkloadSpec = z.infer<typeof WorkloadSpec>;

export const ProjectConfig = z
  .object({
    workloads: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/), WorkloadSpec).default({}),
    limits: z
      .object({
        capture_timeout: z.number().positive().max(24 * 3600).default(600).describe("Upper bound on any workload's timeout, in seconds."),
        output_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024).describe("stdout/stderr kept per stream."),
        import_max_bytes: z.number().int().min(1).default(4 * 1024 ** 3),
        measure_repeat_max: z.number().int().min(1).max(1000).default(50),
      })
      .strict()
      .default({ capture_timeout: 600, output_bytes: 1024 * 1024, import_max_bytes: 4 * 1024 ** 3, measure_repeat_max: 50 }),
    policy: z
      .object({
        adapters: z.array(z.string()).optional().describe("Adapters allowed to run; all when absent."),
      })
      .strict()
      .default({}),
    tools: z
      .object({
        folder: z.string().min(1).max(1024).optional().describe("A folder under the project root whose TypeScript modules register workflow tools (server/workflow/registry.ts); none when absent."),
        concurrency: z.number().int().min(1).max(256).default(8).describe("How many tool calls of one workflow run at once, at most (each tool's own limit applies too)."),
      })
      .strict()
      .default({ concurrency: 8 }),
  })
  .strict();
export type ProjectConfig = z.infer<typeof ProjectConfig>;

function issuePath(issue: z.core.$ZodIssue): string {
  const base = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") return issue.keys.map((k) => (base ? `${base}.${k}` : k)).join(", ");
  return base || "(top level)";
}

/** Reads and validates emberscope.toml; a project without one has no workloads. */
export function loadProjectConfig(projectRoot: string): ProjectConfig {
  const file = path.join(projectRoot, CONFIG_FILE);
  if (!existsSync(file)) return ProjectConfig.parse({});
  let raw: unknown;
  try {
    raw = parseToml(readFileSync(file, "utf8"));
  } catch (error) {
    const line = (error as { line?: number }).line;
    throw new EmberscopeError("CONFIG_INVALID", `${CONFIG_FILE} is not valid TOML${line ? ` (line ${line})` : ""}.`, {
      details: { file: CONFIG_FILE, line: line ?? null },
    });
  }
  const parsed = ProjectConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issuePath(issue);
    const message = issue.code === "unrecognized_keys" ? `unknown key ${where}` : `${where}: ${issue.message}`;
    throw new EmberscopeError("CONFIG_INVALID", `${CONFIG_FILE}: ${message}.`, { details: { file: CONFIG_FILE, path: where } });
  }
  return parsed.data;
}

export function getWorkload(config: ProjectConfig, name: string): WorkloadSpec {
  const workload = config.workloads[name];
  if (!workload) {
    throw new EmberscopeError("WORKLOAD_NOT_FOUND", `No workload named ${name} is declared in ${CONFIG_FILE}.`, {
      details: { workload: name, declared: Object.keys(config.workloads) },
      recovery: { operation: "workloads.list", arguments: {}, safe_to_repeat: true },
    });
  }
  return workload;
}
