import { cpSync, writeFileSync } from "node:fs";
import path from "node:path";
import { initWorkspace } from "../../server/store/workspace";
import { REPO_ROOT } from "./cli";
import { tempProject } from "./project";

/** A fresh copy of examples/demo with an initialized workspace (and optional extra TOML). */
export function demoProject(extraToml = ""): string {
  const root = tempProject("emberscope-demo-");
  cpSync(path.join(REPO_ROOT, "examples", "demo"), root, { recursive: true, filter: (src) => !src.includes(".emberscope") });
  if (extraToml) writeFileSync(path.join(root, "emberscope.toml"), `${extraToml}\n`, { flag: "a" });
  initWorkspace(root).close();
  return root;
}

/** Whether any process of a process group is still alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

// Polling lives apart (no vitest hooks), so that benchmarks can use it too.
export { waitFor } from "./wait";
