import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { initWorkspace, type Workspace } from "../../server/store/workspace";

const made: string[] = [];

/** A fresh, empty project directory under the OS temp dir, removed after the test. */
export function tempProject(prefix = "emberscope-test-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

afterEach(() => {
  while (made.length) rmSync(made.pop()!, { recursive: true, force: true });
});

/** Runs `use` on a workspace initialized in a fresh temp project, and closes it after, whatever happens. */
export async function withWorkspace<T>(use: (ws: Workspace) => Promise<T>): Promise<T> {
  const ws = initWorkspace(tempProject());
  try {
    return await use(ws);
  } finally {
    ws.close();
  }
}
