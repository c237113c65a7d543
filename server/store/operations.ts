import { readFileSync } from "node:fs";
import { z } from "zod";
import { EmberscopeError, type ErrorDocument, type Recovery } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import type { Run } from "../domain/models";
import { writeTransaction, type SqliteDatabase } from "./control-store";
import { getRun, patchRun } from "./runs";

/** How long a lease lives without a heartbeat; holders renew it far more often (a capture's every 200 ms, an import's every second). */
export const LEASE_MS = 15_000;

export const OperationState = z.enum(["queued", "running", "cancelling", "succeeded", "failed", "cancelled"]);
export type OperationState = z.infer<typeof OperationState>;
const ACTIVE: OperationState[] = ["queued", "running", "cancelling"];

export const Operation = z.object({
  operation_id: z.string(),
  kind: z.string(),
  state: OperationState,
  phase: z.string().nullable(),
  progress: z.object({ completed: z.number().int().nullable(), total: z.number().int().nullable() }),
  run_id: z.string().nullable(),
  result: z.record(z.string(), z.unknown()).nullable(),
  error: z.record(z.string(), z.unknown()).nullable(),
  cancel_requested: z.boolean(),
  worker: z.object({ id: z.string(), pid: z.number().int().nullable(), lease_expires_at: z.string().nullable() }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Operation = z.infer<typeof Operation>;

interface OperationRow {
  id: string;
  kind: string;
  state: OperationState;
  phase: string | null;
  progress_completed: number | null;
  progress_total: number | null;
  run_id: string | null;
  intent: string;
  intent_digest: string;
  result: string | null;
  error: string | null;
  lease_owner: string | null;
  lease_pid: number | null;
  lease_process_start: string | null;
  lease_expires_at: string | null;
  cancel_requested_at: string | null;
  claim: string | null;
  created_at: string;
  updated_at: string;
}

function fromRow(row: OperationRow): Operation {
  return {
    operation_id: row.id,
    kind: row.kind,
    state: row.state,
    phase: row.phase,
    progress: { completed: row.progress_completed, total: row.progress_total },
    run_id: row.run_id,
    result: row.result ? (JSON.parse(row.result) as Record<string, unknown>) : null,
    error: row.error ? (JSON.parse(row.error) as Record<string, unknown>) : null,
    cancel_requested: row.cancel_requested_at !== null,
    worker: row.lease_owner ? { id: row.lease_owner, pid: row.lease_pid, lease_expires_at: row.lease_expires_at } : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function row(db: SqliteDatabase, id: string): OperationRow {
  const found = db.prepare("SELECT * FROM operations WHERE id = ?").get(id) as OperationRow | undefined;
  if (!found) {
    throw new EmberscopeError("OPERATION_NOT_FOUND", "No operation has that id.", {
      details: { operation_id: id },
      recovery: { operation: "operations.list", arguments: {}, safe_to_repeat: true },
    });
  }
  return found;
}

export function getOperation(db: SqliteDatabase, id: string): Operation {
  return fromRow(row(db, id));
}

export function operationIntent<T>(db: SqliteDatabase, id: string): T {
  return JSON.parse(row(db, id).intent) as T;
}

export function listOperationRows(db: SqliteDatabase, filters: { active?: boolean }, after: [string, string] | null, limit: number): Operation[] {
  const rows = db
    .prepare(
      `SELECT * FROM operations
       WHERE (@active IS NULL OR state IN ('queued', 'running', 'cancelling'))
         AND (@after_at IS NULL OR (created_at, id) < (@after_at, @after_id))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    )
    .all({ active: filters.active ? 1 : null, after_at: after?.[0] ?? null, after_id: after?.[1] ?? null, limit }) as OperationRow[];
  return rows.map(fromRow);
}

export interface OperationDraft {
  kind: string;
  intent: unknown;
  intentDigest: string;
  runId: string | null;
  state: "queued" | "running";
  idempotency?: { scope: string; key: string };
  lease?: WorkerIdentity;
}

export function idempotencyConflict(key: string, operationId: string): EmberscopeError {
  return new EmberscopeError("IDEMPOTENCY_CONFLICT", "That idempotency key was already used for a different request.", {
    details: { idempotency_key: key, operation_id: operationId },
    recovery: { operation: "operations.get", arguments: { operation_id: operationId }, safe_to_repeat: true },
  });
}

/**
 * Creates an operation — or, for a known idempotency key with the same intent, returns the one it
 * created before (`created: false`); the same key with another intent is IDEMPOTENCY_CONFLICT.
 */
export function createOperation(db: SqliteDatabase, draft: OperationDraft): { operation: Operation; created: boolean } {
  return writeTransaction(db, () => {
    if (draft.idempotency) {
      const known = db.prepare("SELECT operation_id, intent_digest FROM idempotency_keys WHERE scope = ? AND key = ?").get(draft.idempotency.scope, draft.idempotency.key) as
        | { operation_id: string; intent_digest: string }
        | undefined;
      if (known) {
        if (known.intent_digest !== draft.intentDigest) throw idempotencyConflict(draft.idempotency.key, known.operation_id);
        return { operation: getOperation(db, known.operation_id), created: false };
      }
    }
    const now = nowIso();
    const id = newId("op");
    const lease = draft.lease;
    db.prepare(
      `INSERT INTO operations (id, kind, state, phase, run_id, intent, intent_digest, lease_owner, lease_pid, lease_process_start, lease_heartbeat_at, lease_expires_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      draft.kind,
      draft.state,
      draft.state === "queued" ? "queued" : "planning",
      draft.runId,
      JSON.stringify(draft.intent),
      draft.intentDigest,
      lease?.id ?? null,
      lease?.pid ?? null,
      lease?.processStart ?? null,
      lease ? now : null,
      lease ? nowIso(Date.now() + LEASE_MS) : null,
      now,
      now,
    );
    if (draft.idempotency) {
      db.prepare("INSERT INTO idempotency_keys (scope, key, intent_digest, operation_id, created_at) VALUES (?, ?, ?, ?, ?)").run(draft.idempotency.scope, draft.idempotency.key, draft.intentDigest, id, now);
    }
    return { operation: getOperation(db, id), created: true };
  });
}

export function attachRun(db: SqliteDatabase, id: string, runId: string): void {
  db.prepare("UPDATE operations SET run_id = ?, updated_at = ? WHERE id = ?").run(runId, nowIso(), id);
}

/** Who holds a lease: the worker id, its pid and the process start time (guards against pid reuse). */
export interface WorkerIdentity {
  id: string;
  pid: number;
  processStart: string | null;
}

/** The kernel's start time of a process (clock ticks since boot), or null where /proc is absent. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

export function isProcessAlive(pid: number, processStart: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return processStart === null || processStartTime(pid) === processStart;
}

/** Claims the oldest queued operation for a worker, in one write transaction. */
export function claimNextOperation(db: SqliteDatabase, worker: WorkerIdentity): Operation | null {
  return writeTransaction(db, () => {
    const next = db.prepare("SELECT id FROM operations WHERE state = 'queued' ORDER BY created_at, id LIMIT 1").get() as { id: string } | undefined;
    if (!next) return null;
    const now = Date.now();
    db.prepare(
      `UPDATE operations SET state = 'running', phase = 'planning', lease_owner = ?, lease_pid = ?, lease_process_start = ?,
         lease_heartbeat_at = ?, lease_expires_at = ?, updated_at = ? WHERE id = ? AND state = 'queued'`,
    ).run(worker.id, worker.pid, worker.processStart, nowIso(now), nowIso(now + LEASE_MS), nowIso(now), next.id);
    return getOperation(db, next.id);
  });
}

/**
 * Renews the lease while the operation is live and this worker holds it; returns whether a cancel
 * was requested and whether the lease is still held (false once it was reconciled or taken).
 */
export function heartbeatOperation(db: SqliteDatabase, id: string, worker: WorkerIdentity): { cancelRequested: boolean; held: boolean } {
  const now = Date.now();
  db.prepare("UPDATE operations SET lease_heartbeat_at = ?, lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND state IN ('running', 'cancelling')").run(
    nowIso(now),
    nowIso(now + LEASE_MS),
    id,
    worker.id,
  );
  return leaseStatus(db, id, worker);
}

/** Whether `worker` still holds the operation's lease (it is live and theirs), and whether a cancel is pending. */
export function leaseStatus(db: SqliteDatabase, id: string, worker: WorkerIdentity): { cancelRequested: boolean; held: boolean } {
  const r = db.prepare("SELECT state, lease_owner, cancel_requested_at FROM operations WHERE id = ?").get(id) as
    | Pick<OperationRow, "state" | "lease_owner" | "cancel_requested_at">
    | undefined;
  return { cancelRequested: r?.cancel_requested_at != null, held: r !== undefined && r.lease_owner === worker.id && (r.state === "running" || r.state === "cancelling") };
}

/**
 * Claims `claim` for a live operation, in one write transaction: `done` when `isDone()` says the
 * work was already done (nothing is claimed), `claimed` when this operation now holds it, or the
 * live operation that holds it. A claim lapses when its operation ends (see operations_by_live_claim).
 */
export function claimForOperation(db: SqliteDatabase, id: string, claim: string, isDone: () => boolean): "done" | "claimed" | { holder: string } {
  return writeTransaction(db, () => {
    if (isDone()) return "done";
    const holder = liveClaimHolder(db, claim);
    if (holder !== null && holder !== id) return { holder };
    db.prepare("UPDATE operations SET claim = ?, updated_at = ? WHERE id = ?").run(claim, nowIso(), id);
    return "claimed";
  });
}

/** The live operation holding `claim`, if any. */
export function liveClaimHolder(db: SqliteDatabase, claim: string): string | null {
  const row = db.prepare("SELECT id FROM operations WHERE claim = ? AND state IN ('queued', 'running', 'cancelling')").get(claim) as { id: string } | undefined;
  return row?.id ?? null;
}

/** Moves to a phase; `completed` never goes backwards within a phase. */
export function reportProgress(db: SqliteDatabase, id: string, phase: string, completed: number | null = null, total: number | null = null): void {
  db.prepare(
    `UPDATE operations SET
       progress_completed = CASE WHEN phase = @phase AND progress_completed IS NOT NULL AND @completed IS NOT NULL
                                 THEN max(progress_completed, @completed) ELSE @completed END,
       progress_total = @total, phase = @phase, updated_at = @now
     WHERE id = @id AND state IN ('running', 'cancelling')`,
  ).run({ id, phase, completed, total, now: nowIso() });
}

export function finishOperation(db: SqliteDatabase, id: string, outcome: { state: "succeeded" | "failed" | "cancelled"; result?: Record<string, unknown>; error?: ErrorDocument }): Operation {
  db.prepare(
    `UPDATE operations SET state = ?, phase = ?, result = ?, error = ?, lease_expires_at = NULL, updated_at = ?
     WHERE id = ? AND state IN ('queued', 'running', 'cancelling')`,
  ).run(outcome.state, outcome.state === "succeeded" ? "done" : outcome.state, outcome.result ? JSON.stringify(outcome.result) : null, outcome.error ? JSON.stringify(outcome.error) : null, nowIso(), id);
  return getOperation(db, id);
}

/**
 * Records a cancel durably. A queued operation is cancelled at once; a running one becomes
 * `cancelling` until its worker has killed the process group and cleaned up.
 */
export function requestCancel(db: SqliteDatabase, id: string): Operation {
  return writeTransaction(db, () => {
    const current = row(db, id);
    if (!ACTIVE.includes(current.state)) return fromRow(current);
    const now = nowIso();
    if (current.state === "queued") {
      db.prepare("UPDATE operations SET state = 'cancelled', phase = 'cancelled', cancel_requested_at = ?, updated_at = ? WHERE id = ?").run(now, now, id);
    } else {
      db.prepare("UPDATE operations SET state = 'cancelling', cancel_requested_at = coalesce(cancel_requested_at, ?), updated_at = ? WHERE id = ?").run(now, now, id);
    }
    return getOperation(db, id);
  });
}

/** What reconciliation knows of an operation whose holder stopped. */
export interface Interruption {
  operationId: string;
  kind: string;
  runId: string | null;
  intent: unknown;
  holder: string | null;
  reason: "holder process gone" | "lease expired";
}

/** The stage states a run still had in progress when its operation ended: they end with it. */
function endedStages(run: Run, state: "failed" | "cancelled"): Partial<Run> {
  const ends = (s: Run["execution_state"]) => (s === "running" || s === "pending" ? state : s);
  return { execution_state: ends(run.execution_state), capture_state: ends(run.capture_state), extraction_state: ends(run.extraction_state) };
}

/**
 * Reconciliation: an operation whose lease expired, or whose holder process is gone, ends
 * `failed` with INTERRUPTED (or `cancelled` when a cancel was pending) — never stays `running` —
 * and its run ends with it, in the same transaction. `describe` adds what the caller knows
 * (the staging left behind, the request to repeat).
 */
export function reconcileExpiredLeases(
  db: SqliteDatabase,
  options: { now?: number; describe?: (interruption: Interruption) => { details?: Record<string, unknown>; recovery?: Recovery } } = {},
): string[] {
  const now = options.now ?? Date.now();
  const candidates = db.prepare("SELECT * FROM operations WHERE state IN ('running', 'cancelling')").all() as OperationRow[];
  const ended: string[] = [];
  for (const op of candidates) {
    const expired = op.lease_expires_at === null || Date.parse(op.lease_expires_at) < now;
    const dead = op.lease_pid !== null && !isProcessAlive(op.lease_pid, op.lease_process_start);
    if (!expired && !dead) continue;
    const cancelled = op.cancel_requested_at !== null;
    const reason = dead ? "holder process gone" : "lease expired";
    const extra = cancelled ? {} : (options.describe?.({ operationId: op.id, kind: op.kind, runId: op.run_id, intent: JSON.parse(op.intent), holder: op.lease_owner, reason }) ?? {});
    const error: ErrorDocument = cancelled
      ? { code: "CANCELLED", message: "The operation was cancelled; its holder stopped before confirming.", retryable: false, details: { operation_id: op.id } }
      : {
          code: "INTERRUPTED",
          message: `The ${op.kind} was interrupted: the process holding its lease stopped before it finished (${reason}).`,
          retryable: true,
          details: { operation_id: op.id, run_id: op.run_id, holder: op.lease_owner, reason, ...extra.details },
          ...(extra.recovery ? { recovery: extra.recovery } : {}),
        };
    const state = cancelled ? "cancelled" : "failed";
    writeTransaction(db, () => {
      const changed = db
        .prepare("UPDATE operations SET state = ?, phase = ?, error = ?, lease_expires_at = NULL, updated_at = ? WHERE id = ? AND state IN ('running', 'cancelling')")
        .run(state, state, JSON.stringify(error), nowIso(now), op.id);
      if (!changed.changes) return;
      ended.push(op.id);
      if (op.run_id === null) return;
      const run = getRun(db, op.run_id);
      if (run.status !== "running" && run.status !== "pending") return;
      patchRun(db, op.run_id, { status: state, ...endedStages(run, state), details: { ...run.details, error } });
    });
  }
  return ended;
}

export const ACTIVE_STATES = ACTIVE;
