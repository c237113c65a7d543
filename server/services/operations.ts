import { z } from "zod";
import { EmberscopeError, type Recovery } from "../domain/errors";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { getOperation, listOperationRows, Operation, reconcileExpiredLeases, requestCancel, type Interruption } from "../store/operations";
import { getRun } from "../store/runs";
import { stagingOfOperation, sweepStaleStaging } from "../store/staging";
import { killProcessGroup, processGroupAlive } from "../capture/process";
import type { WorkspaceLocator } from "../store/layout";
import { openWorkspace, type Workspace } from "../store/workspace";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

/** The request that repeats (or resumes) an interrupted operation, by its kind. */
const REPEAT_BY_KIND: Record<string, (intent: Record<string, unknown>) => Recovery> = {
  // An import's intent is that request's input.
  import: (intent) => ({ operation: "imports.import", arguments: intent, safe_to_repeat: true }),
  // An experiment keeps its finished trials; resuming runs the missing ones.
  experiment: (intent) => ({ operation: "experiments.resume", arguments: { experiment_id: intent.experiment_id }, safe_to_repeat: true }),
};

/** What an interrupted operation left: its staging (reported, collectable by gc) and how to repeat it. */
function describeInterruption(ws: Workspace, interruption: Interruption): { details: Record<string, unknown>; recovery?: Recovery } {
  const staging = stagingOfOperation(ws, interruption.operationId);
  const details = { staging, staging_bytes: staging.reduce((sum, s) => sum + s.size_bytes, 0) };
  const repeat = REPEAT_BY_KIND[interruption.kind];
  if (!repeat) return { details };
  return { details, recovery: repeat(interruption.intent as Record<string, unknown>) };
}

/**
 * Ends operations whose holder is gone (expired lease or dead process) and their runs with them
 * (INTERRUPTED, naming the staging they left). Called on start-up by servers and workers, by
 * validate and gc, and before answering about operations.
 */
export function reconcileOperations(ws: Workspace): string[] {
  const ended = reconcileExpiredLeases(ws.db, { describe: (interruption) => describeInterruption(ws, interruption) });
  for (const id of ended) {
    const op = getOperation(ws.db, id);
    if (!op.run_id) continue;
    const run = getRun(ws.db, op.run_id);
    // The worker died without cleaning up: its workload's process group may still be running.
    const pid = typeof run.details.pid === "number" ? run.details.pid : null;
    if (pid !== null && processGroupAlive(pid)) killProcessGroup(pid);
  }
  return ended;
}

/**
 * What a server does as it starts (`serve`, `mcp serve`): ends the operations whose holder died
 * (their runs fail with INTERRUPTED) and removes abandoned staging — never a live lease's.
 */
export async function recoverInterruptedWork(ws: Workspace, log: (message: string) => void = () => undefined): Promise<{ ended: string[]; swept: { entries: number; bytes: number } }> {
  const ended = reconcileOperations(ws);
  if (ended.length) log(`Ended ${ended.length} operation(s) whose holder had stopped (their runs failed with INTERRUPTED).`);
  const swept = await sweepStaleStaging(ws);
  if (swept.entries) log(`Removed ${swept.entries} abandoned staging entr${swept.entries === 1 ? "y" : "ies"} (${swept.bytes} bytes) from .emberscope/tmp.`);
  return { ended, swept };
}

/** recoverInterruptedWork for a server about to serve `locator`'s workspace, when there is one yet. */
export async function recoverWorkspaceAt(locator: WorkspaceLocator, log: (message: string) => void): Promise<void> {
  let ws: Workspace;
  try {
    ws = openWorkspace(locator);
  } catch (error) {
    // A missing or unusable workspace is the tools' to report, as they are called.
    if (error instanceof EmberscopeError) return;
    throw error;
  }
  try {
    await recoverInterruptedWork(ws, log);
  } finally {
    ws.close();
  }
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
