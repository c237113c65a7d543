import { fork, type ChildProcess } from "node:child_process";
import { cpus } from "node:os";
import { nowIso } from "../server/domain/ids";
import { CLI_ENTRY } from "../server/package-root";
import { isProcessAlive } from "../server/store/operations";
import { openWorkspace, type Workspace } from "../server/store/workspace";

export interface Supervisor {
  workers(): { pid: number | null }[];
  stop(): Promise<void>;
}

/** Default pool size: one worker per core but one, at least one. */
export function defaultWorkerCount(): number {
  return Math.max(1, cpus().length - 1);
}

/** How often the supervisor looks for a worker holding an expired lease. */
const WATCHDOG_MS = 2000;

/**
 * Pids of these workers that hold the lease of a running operation past its expiry: a worker
 * renews its leases every 100 ms, so one that let a lease expire has a blocked event loop (tool
 * code spinning in it) and has lost that job anyway. Checked by the process's start time too.
 */
export function workersHoldingExpiredLeases(ws: Workspace, pids: number[]): number[] {
  if (pids.length === 0) return [];
  const rows = ws.db
    .prepare(`SELECT DISTINCT lease_pid, lease_process_start FROM operations WHERE state IN ('running', 'cancelling') AND lease_expires_at < ? AND lease_pid IN (${pids.map(() => "?").join(", ")})`)
    .all(nowIso(), ...pids) as { lease_pid: number; lease_process_start: string | null }[];
  return rows.filter((r) => isProcessAlive(r.lease_pid, r.lease_process_start)).map((r) => r.lease_pid);
}

/**
 * Keeps `count` supervised workers alive for one project (restarting any that die). Workers are
 * forked with an IPC channel, so they notice when this process goes away — even by kill -9 —
 * and stop, cancelling their job and killing its process group. A watchdog stops (SIGKILL) a
 * worker whose lease expired while it still runs — code that blocks its event loop and ignores
 * every signal it is given — and the supervisor starts another; the expired operation is
 * recovered as interrupted like any other.
 */
export function startSupervisor(projectRoot: string, count: number, log: (message: string) => void): Supervisor {
  const children = new Set<ChildProcess>();
  let stopping = false;
  let ws: Workspace | null = null;
  const watchdog = setInterval(() => {
    try {
      ws ??= openWorkspace({ cwd: projectRoot, projectRoot });
      const stuck = new Set(workersHoldingExpiredLeases(ws, [...children].flatMap((c) => (c.pid === undefined ? [] : [c.pid]))));
      for (const child of children) {
        if (child.pid === undefined || !stuck.has(child.pid)) continue;
        log(`worker ${child.pid} let its lease expire (its event loop is blocked by the code it runs); stopping it`);
        child.kill("SIGKILL");
      }
    } catch {
      // The workspace is being re-created or is not there yet: the next tick looks again.
      ws?.close();
      ws = null;
    }
  }, WATCHDOG_MS);
  watchdog.unref();
  const launch = () => {
    const child = fork(CLI_ENTRY, ["worker", "--supervised", "--project-root", projectRoot, "--quiet"], { cwd: projectRoot, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    children.add(child);
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (stopping) return;
      log(`worker ${child.pid} exited (${signal ?? code}); starting another`);
      setTimeout(launch, 500).unref();
    });
  };
  for (let i = 0; i < count; i++) launch();
  return {
    workers: () => [...children].map((c) => ({ pid: c.pid ?? null })),
    stop: async () => {
      stopping = true;
      clearInterval(watchdog);
      ws?.close();
      await Promise.all(
        [...children].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null) return resolve();
              child.once("exit", () => resolve());
              child.kill("SIGTERM");
              setTimeout(() => child.kill("SIGKILL"), 5000).unref();
            }),
        ),
      );
    },
  };
}
