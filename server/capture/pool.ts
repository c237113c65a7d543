import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { CLI_ENTRY } from "../package-root";
import { liveWorkers } from "../store/workers";
import type { Workspace } from "../store/workspace";

/** A worker started for a detached capture exits after this long without work. */
export const DETACHED_IDLE_EXIT_S = 30;

/**
 * Makes sure some pool worker will claim queued operations: the server's supervised workers when
 * `emberscope serve` runs, else a detached worker started here (it outlives this process and
 * exits once idle). Its log goes to .emberscope/logs/worker.log.
 */
export function ensureWorker(ws: Workspace): { started: boolean; pid: number | null } {
  if (liveWorkers(ws.db).length > 0) return { started: false, pid: null };
  const logs = path.join(ws.layout.dir, "logs");
  mkdirSync(logs, { recursive: true });
  const log = openSync(path.join(logs, "worker.log"), "a");
  try {
    const child = spawn(process.execPath, [CLI_ENTRY, "worker", "--project-root", ws.layout.projectRoot, "--idle-exit", String(DETACHED_IDLE_EXIT_S)], {
      cwd: ws.layout.projectRoot,
      detached: true,
      stdio: ["ignore", log, log],
      env: process.env,
    });
    child.unref();
    return { started: true, pid: child.pid ?? null };
  } finally {
    closeSync(log);
  }
}
