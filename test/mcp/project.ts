import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { initWorkspace } from "../../server/store/workspace";
import { REPO_ROOT } from "../helpers/cli";

/**
 * A copy of examples/demo that lives for a whole describe block (tempProject() is removed after
 * each test). With `init: false` there is no workspace yet: the agent walkthrough creates it.
 */
export function suiteDemoProject(options: { init: boolean }): { root: string; remove: () => void } {
  const root = mkdtempSync(path.join(tmpdir(), "emberscope-mcp-"));
  cpSync(path.join(REPO_ROOT, "examples", "demo"), root, { recursive: true, filter: (src) => !src.includes(".emberscope") });
  if (options.init) initWorkspace(root).close();
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
