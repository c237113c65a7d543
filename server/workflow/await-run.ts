import { EmberscopeError } from "../domain/errors";
import { writeTransaction } from "../store/control-store";
import { finishOperation, getOperation, isProcessAlive, requestCancel, type Operation } from "../store/operations";
import { getWorkflowRunRow, patchWorkflowRun, type WorkflowRunRow } from "../store/workflow-runs";
import type { Workspace } from "../store/workspace";
import { sleep } from "../services/leased-operation";

/** How often a caller waiting on a workflow run reads its operation. */
const POLL_MS = 40;
/** A worker whose lease was not renewed for this long has a blocked event loop (it renews every 100 ms). */
export const WORKER_STALL_MS = 1000;
/** Past its budget (or a cancel), a stalled worker gets this much longer before it is stopped. */
export const WATCHDOG_GRACE_MS = 750;

interface LeaseRow {
  state: Operation["state"];
  phase: string | null;
  lease_pid: number | null;
  lease_process_start: string | null;
  lease_heartbeat_at: string | null;
}

/**
 * Stops the pool worker holding a workflow run's lease (a kill of its process, checked by pid and
 * start time, never this process) and ends the operation and its workflow run with `error`: the
 * worker's event loop is blocked by tool code, so it can neither time the call out nor answer a
 * cancel. Its supervisor (or the next ensureWorker) starts a fresh worker.
 */
function stopStalledWorker(ws: Workspace, operationId: string, workflowRunId: string, lease: LeaseRow, state: "failed" | "cancelled", error: EmberscopeError): void {
  const pid = lease.lease_pid;
  if (pid !== null && pid !== process.pid && isProcessAlive(pid, lease.lease_process_start)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  writeTransaction(ws.db, () => {
    if (!["running", "cancelling"].includes(getOperation(ws.db, operationId).state)) return;
    finishOperation(ws.db, operationId, { state, result: { workflow_run_id: workflowRunId }, error: error.toDocument() });
    patchWorkflowRun(ws.db, workflowRunId, { state, summary: { state, worker_stopped: true, error: error.toDocument() } });
  });
}

/**
 * Waits for a workflow run a pool worker runs (an exposed workflow's call) to end, and keeps the
 * caller in charge of it: `signal` aborting requests the operation's cancel, and a worker that
 * neither finishes its calls within `budgetMs` (the sum of the calls' timeouts, counted from the
 * first call) nor answers a cancel within WATCHDOG_GRACE_MS, while its lease stays unrenewed, is
 * stopped (stopStalledWorker): a handler that blocks and ignores its signal ends with its worker.
 */
export async function awaitWorkflowRun(ws: Workspace, run: { operationId: string; workflowRunId: string; budgetMs: number; signal?: AbortSignal }): Promise<{ operation: Operation; row: WorkflowRunRow }> {
  const never = new AbortController().signal;
  let callsSince: number | null = null;
  let cancelSince: number | null = null;
  for (;;) {
    const lease = ws.db.prepare("SELECT state, phase, lease_pid, lease_process_start, lease_heartbeat_at FROM operations WHERE id = ?").get(run.operationId) as LeaseRow;
    if (!["queued", "running", "cancelling"].includes(lease.state)) break;
    const now = Date.now();
    if (run.signal?.aborted && cancelSince === null) {
      cancelSince = now;
      requestCancel(ws.db, run.operationId);
    }
    if (lease.phase === "nodes" && callsSince === null) callsSince = now;
    const stalled = lease.state !== "queued" && lease.lease_heartbeat_at !== null && now - Date.parse(lease.lease_heartbeat_at) > WORKER_STALL_MS;
    if (stalled && cancelSince !== null && now - cancelSince > WATCHDOG_GRACE_MS) {
      stopStalledWorker(ws, run.operationId, run.workflowRunId, lease, "cancelled", new EmberscopeError("CANCELLED", "The call was cancelled; its worker was blocked by a tool call that ignores its signal, so the worker was stopped.", { details: { workflow_run_id: run.workflowRunId, reason: "worker_stopped" } }));
    } else if (stalled && callsSince !== null && now - callsSince > run.budgetMs + WATCHDOG_GRACE_MS) {
      stopStalledWorker(
        ws,
        run.operationId,
        run.workflowRunId,
        lease,
        "failed",
        new EmberscopeError("TOOL_TIMEOUT", `The workflow's calls ran past their timeouts (${run.budgetMs} ms in all) and the pool worker running them stopped answering: a tool handler blocks and ignores its signal. The worker was stopped; nothing of the call is left running.`, {
          details: { workflow_run_id: run.workflowRunId, operation_id: run.operationId, timeout_ms: run.budgetMs, reason: "worker_stopped" },
        }),
      );
    }
    await sleep(POLL_MS, never);
  }
  return { operation: getOperation(ws.db, run.operationId), row: getWorkflowRunRow(ws.db, run.workflowRunId) };
}
