import { runCaptureOperation } from "../server/capture/run-capture";
import { runExperimentOperation } from "../server/capture/run-experiment";
import { runWorkflowOperation } from "../server/workflow/run-operation";
import type { WorkspaceLocator } from "../server/store/layout";
import { claimNextOperation, getOperation, requestCancel } from "../server/store/operations";
import { heartbeatWorker, registerWorker, stopWorker, type WorkerMode } from "../server/store/workers";
import { openWorkspace } from "../server/store/workspace";
import { reconcileOperations } from "../server/services/operations";

export interface WorkerOptions {
  mode: WorkerMode;
  /** Detached workers exit after this long without work; supervised ones never do. */
  idleExitMs: number | null;
  log: (message: string) => void;
}

/**
 * A pool worker: claims queued operations from the control store with a lease, runs them, and
 * renews its own registration. A supervised worker stops (cancelling its job, so the workload's
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
    stopWorker(ws.db, identity);
    ws.close();
  }
  return { operations: done, retired };
}
