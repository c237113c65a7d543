import { isMainThread, Worker, workerData } from "node:worker_threads";
import { CLI_ENTRY } from "../package-root";

/**
 * Threads an extraction starts: each runs bin/emberscope.js, which in a thread with a role loads
 * the bundle's thread entry (server/evidence/thread-main.ts) and runs that role's loop. Starting
 * one costs 0.15-1 s (a fresh isolate loads the code), so a caller that knows it will need one
 * prepares it ahead.
 */
export const THREAD_ROLES = ["parquet-writer", "range-parser"] as const;
export type ThreadRole = (typeof THREAD_ROLES)[number];

/** An unused prepared thread does not keep the process alive and ends after this long. */
const PREPARED_IDLE_MS = 30_000;

interface Prepared {
  worker: Worker;
  timer: NodeJS.Timeout;
  alive: boolean;
}

const prepared = new Map<ThreadRole, Prepared>();
const stats = new Map<ThreadRole, { started: number; live: number }>(THREAD_ROLES.map((role) => [role, { started: 0, live: 0 }]));

/** Threads of `role` started since the process began, and those still running (tests read these). */
export function threadStats(role: ThreadRole): { started: number; live: number } {
  return { ...stats.get(role)! };
}

function startThread(role: ThreadRole): Worker {
  const worker = new Worker(CLI_ENTRY, { workerData: { role } });
  const counts = stats.get(role)!;
  counts.started++;
  counts.live++;
  worker.once("exit", () => counts.live--);
  return worker;
}

/**
 * Starts a thread of `role` ahead of need, for the next takeThread(role); one that dies meanwhile
 * is not handed out.
 */
export function prepareThread(role: ThreadRole): void {
  if (prepared.get(role)?.alive) return;
  const worker = startThread(role);
  worker.unref();
  const entry: Prepared = { worker, alive: true, timer: setTimeout(() => void worker.terminate(), PREPARED_IDLE_MS) };
  entry.timer.unref();
  worker.on("error", () => undefined);
  worker.once("exit", () => {
    entry.alive = false;
    clearTimeout(entry.timer);
    if (prepared.get(role) === entry) prepared.delete(role);
  });
  prepared.set(role, entry);
}

/** The prepared thread of `role`, if any is alive, else a new one. */
export function takeThread(role: ThreadRole): Worker {
  const entry = prepared.get(role);
  prepared.delete(role);
  if (!entry?.alive) return startThread(role);
  clearTimeout(entry.timer);
  entry.worker.ref();
  return entry.worker;
}

/** The role of this thread when an extraction started it, else null. */
export function threadRole(): ThreadRole | null {
  if (isMainThread) return null;
  const role = (workerData as { role?: string } | null)?.role;
  return THREAD_ROLES.find((r) => r === role) ?? null;
}
