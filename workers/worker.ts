import { runCaptureOperation } from "../server/capture/run-capture";
import { runExperimentOperation } from "../server/capture/run-experiment";
import { runWorkflowOperation } from "../server/workflow/run-operation";
import type { WorkspaceLocator } from "../server/store/layout";
import { Worker } from "node:worker_threads";
import { claimNextOperation, getOperation, LEASE_MS, requestCancel } from "../server/store/operations";
import { heartbeatWorker, registerWorker, stopWorker, type WorkerMode } from "../server/store/workers";
import { openWorkspace } from "../server/store/workspace";
import { reconcileOperations } from "../server/services/operations";

export interface WorkerOptions {
  mode: WorkerMode;
  /** Detached workers exit after this long without work; supervised ones never do. */
  idleExitMs: number | null;
  log: (message: string) => void;
}

/** How often the main thread stamps the time for the stall watchdog. */
const STAMP_MS = 200;

/**
 * A thread of this process that kills it (SIGKILL) once its main thread has not stamped the time
 * for `stalledMs`: tool code blocking the event loop and ignoring every signal it is given. Past
 * a lease's length the worker has lost its operations anyway (they are reconciled as interrupted);
 * without this, a detached worker (no supervisor) would spin for ever. The thread is unref'd.
 */
function startStallWatchdog(stalledMs: number): () => void {
  const stamp = new BigInt64Array(new SharedArrayBuffer(8));
  Atomics.store(stamp, 0, BigInt(Date.now()));
  const stamper = setInterval(() => Atomics.store(stamp, 0, BigInt(Date.now())), STAMP_MS);
  stamper.unref();
  const watchdog = new Worker(
    `const { workerData } = require("node:worker_threads");
     const stamp = new BigInt64Array(workerData.buffer);
     setInterval(() => { if (Date.now() - Number(Atomics.load(stamp, 0)) > workerData.stalledMs) process.kill(process.pid, "SIGKILL"); }, 500);`,
    { eval: true, workerData: { buffer: stamp.buffer, stalledMs } },
  );
  watchdog.unref();
  return () => {
    clearInterval(stamper);
    void watchdog.terminate();
  };
}

/**
 * A pool worker: claims queued operations from the control store with a lease, runs them, and
 * renews its own registration; a watchdog thread ends it when tool code blocks its event loop for
 * a lease's length (startStallWatchdog). A supervised worker stops (cancelling its job, so the workload's
 * process group dies with it) when its supervisor goes away.
 */
export async function runWorker(locator: WorkspaceLocator, options: WorkerOptions): Promise<{ operations: number; retired: boolean }> {
  const ws = openWorkspace(locator);
  const identity = registerWorker(ws.db, options.mode);
  let current: string | null = null;
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    options.log(`worker ${identity.id} stopping: ${reason}`);
    if (current) requestCancel(ws.db, current);
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  if (options.mode === "supervised") process.once("disconnect", () => stop("supervisor went away"));
  const beat = setInterval(() => heartbeatWorker(ws.db, identity), 3000);
  const stopWatchdog = startStallWatchdog(LEASE_MS);
  let done = 0;
  let retired = false;
  let idleSince = Date.now();
  try {
    reconcileOperations(ws);
    while (!stopping) {
      const operation = claimNextOperation(ws.db, identity);
      if (!operation) {
        if (options.idleExitMs !== null && Date.now() - idleSince > options.idleExitMs) break;
        await new Promise((r) => setTimeout(r, 150));
        continue;
      }
      current = operation.operation_id;
      options.log(`worker ${identity.id} runs ${operation.operation_id}`);
      const outcome: { status: string; abandoned?: number } =
        operation.kind === "experiment"
          ? await runExperimentOperation(ws, operation.operation_id, identity)
          : operation.kind === "workflow_run"
            ? await runWorkflowOperation(ws, operation.operation_id, identity)
            : await runCaptureOperation(ws, operation.operation_id, identity);
      options.log(`worker ${identity.id} finished ${operation.operation_id}: ${outcome.status}`);
      current = null;
      done++;
      idleSince = Date.now();
      // A tool handler that ignored its abort may still run here: this process retires (the caller
      // exits it, ending that code with it) and its supervisor, or the next ensureWorker, starts a fresh one.
      if (outcome.abandoned) {
        options.log(`worker ${identity.id} retires: ${outcome.abandoned} aborted tool call(s) did not return`);
        retired = true;
        break;
      }
      if (stopping && getOperation(ws.db, operation.operation_id).state === "running") break;
    }
  } finally {
    clearInterval(beat);
    stopWatchdog();
    stopWorker(ws.db, identity);
    ws.close();
  }
  return { operations: done, retired };
}
