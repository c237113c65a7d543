import { z } from "zod";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { getOperation, listOperationRows, Operation, reconcileExpiredLeases, requestCancel } from "../store/operations";
import { getRun, updateRun } from "../store/runs";
import { killProcessGroup, processGroupAlive } from "../capture/process";
import type { Workspace } from "../store/workspace";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

/**
 * Ends operations whose worker is gone (expired lease or dead process) and their runs with them.
 * Called on start-up by servers and workers, and before answering about operations.
 */
export function reconcileOperations(ws: Workspace): string[] {
  const ended = reconcileExpiredLeases(ws.db);
  for (const id of ended) {
    const op = getOperation(ws.db, id);
    if (!op.run_id) continue;
    const run = getRun(ws.db, op.run_id);
    // The worker died without cleaning up: its workload's process group may still be running.
    const pid = typeof run.details.pid === "number" ? run.details.pid : null;
    if (pid !== null && processGroupAlive(pid)) killProcessGroup(pid);
    if (run.status === "running" || run.status === "pending") {
      updateRun(ws.db, run.run_id, run.revision, {
        status: op.state === "cancelled" ? "cancelled" : "failed",
        details: { ...run.details, error: op.error },
      });
    }
  }
  return ended;
}

export const listOperations = defineService({
  name: "operations.list",
  summary: "List operations (captures and other long work), newest first.",
  kind: "query",
  input: z.object({ limit: Limit, cursor: CursorArg, active: z.boolean().optional() }).strict(),
  output: pageOf(Operation),
  handler: (input, { ws }) => {
    reconcileOperations(ws);
    const filters = { active: input.active };
    return keysetPage({
      ws,
      binding: { query: "operations.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "operations.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listOperationRows(ws.db, filters, after, limit),
      keyOf: (op): [string, string] => [op.created_at, op.operation_id],
    });
  },
});

const OperationId = z.object({ operation_id: z.string().min(1).max(128) }).strict();

export const showOperation = defineService({
  name: "operations.get",
  summary: "Show one operation: state, phase, progress (monotonic completed/total) and its run.",
  kind: "query",
  input: OperationId,
  output: Operation,
  handler: (input, { ws }) => {
    reconcileOperations(ws);
    return getOperation(ws.db, input.operation_id);
  },
});

/**
 * How long cancel waits for the worker to confirm before answering `cancelling`: well inside the
 * 250 ms cancel promises, with room for opening the workspace on a loaded machine (at 200 ms, a
 * loaded CI run once answered in 297 ms).
 */
const CANCEL_WAIT_MS = 120;

export const cancelOperation = defineService({
  name: "operations.cancel",
  summary: "Cancel an operation: recorded durably at once; its workload's process group is killed.",
  kind: "mutation",
  input: OperationId,
  output: Operation,
  handler: async (input, { ws }) => {
    let op = requestCancel(ws.db, input.operation_id);
    const deadline = Date.now() + CANCEL_WAIT_MS;
    for (let left = deadline - Date.now(); op.state === "cancelling" && left > 0; left = deadline - Date.now()) {
      await new Promise((r) => setTimeout(r, Math.min(25, left)));
      op = getOperation(ws.db, input.operation_id);
    }
    return op;
  },
});
