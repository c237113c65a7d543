import { fork, type ChildProcess } from "node:child_process";
import { cpus } from "node:os";
import { CLI_ENTRY } from "../server/package-root";

export interface Supervisor {
  workers(): { pid: number | null }[];
  stop(): Promise<void>;
}

/** Default pool size: one worker per core but one, at least one. */
export function defaultWorkerCount(): number {
  return Math.max(1, cpus().length - 1);
}

/**
 * Keeps `count` supervised workers alive for one project (restarting any that die). Workers are
 * forked with an IPC channel, so they notice when this process goes away — even by kill -9 —
 * and stop, cancelling their job and killing its process group.
 */
export function startSupervisor(projectRoot: string, count: number, log: (message: string) => void): Supervisor {
  const children = new Set<ChildProcess>();
  let stopping = false;
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
