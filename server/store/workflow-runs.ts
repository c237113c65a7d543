import { EmberscopeError } from "../domain/errors";
import { nowIso } from "../domain/ids";
import type { SqliteDatabase } from "./control-store";

/** Workflow runs (replays and benchmarks, each held by an operation) and the approvals that allow a workflow's side effects. */

export interface ApprovalRow {
  workflow_id: string;
  tool: string;
  workflow_digest: string;
  note: string;
  approved_by: string;
  approved_at: string;
  revoked_at: string | null;
}

export function listApprovals(db: SqliteDatabase, workflowId: string): ApprovalRow[] {
  return db.prepare("SELECT * FROM workflow_approvals WHERE workflow_id = ? ORDER BY tool").all(workflowId) as ApprovalRow[];
}

/** The tools a person approved for this workflow's content (an approval for other content does not count). */
export function approvedTools(db: SqliteDatabase, workflowId: string, digest: string): Set<string> {
  const rows = db.prepare("SELECT tool FROM workflow_approvals WHERE workflow_id = ? AND workflow_digest = ? AND revoked_at IS NULL").all(workflowId, digest) as { tool: string }[];
  return new Set(rows.map((r) => r.tool));
}

export function upsertApproval(db: SqliteDatabase, draft: { workflow_id: string; tool: string; workflow_digest: string; note: string; approved_by: string; revoke: boolean }): ApprovalRow {
  const now = nowIso();
  if (draft.revoke) {
    db.prepare("UPDATE workflow_approvals SET revoked_at = ? WHERE workflow_id = ? AND tool = ? AND revoked_at IS NULL").run(now, draft.workflow_id, draft.tool);
  } else {
    db.prepare(
      `INSERT INTO workflow_approvals (workflow_id, tool, workflow_digest, note, approved_by, approved_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL)
       ON CONFLICT (workflow_id, tool) DO UPDATE SET workflow_digest = excluded.workflow_digest, note = excluded.note, approved_by = excluded.approved_by, approved_at = excluded.approved_at, revoked_at = NULL`,
    ).run(draft.workflow_id, draft.tool, draft.workflow_digest, draft.note, draft.approved_by, now);
  }
  const row = db.prepare("SELECT * FROM workflow_approvals WHERE workflow_id = ? AND tool = ?").get(draft.workflow_id, draft.tool) as ApprovalRow | undefined;
  if (!row) {
    throw new EmberscopeError("INVALID_ARGUMENTS", "That tool was never approved for this workflow, so there is nothing to revoke.", { details: { argument: "tool", workflow_id: draft.workflow_id } });
  }
  return row;
}

export type WorkflowRunKind = "run" | "benchmark";
export type WorkflowRunState = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface WorkflowRunRow {
  id: string;
  workflow_id: string;
  operation_id: string;
  kind: WorkflowRunKind;
  mode: "frozen" | "controlled" | "live";
  state: WorkflowRunState;
  summary: string | null;
  replay_run_id: string | null;
  created_by_actor: string;
  created_at: string;
  updated_at: string;
}

export function insertWorkflowRun(db: SqliteDatabase, row: Omit<WorkflowRunRow, "state" | "summary" | "replay_run_id" | "created_at" | "updated_at">): WorkflowRunRow {
  const now = nowIso();
  const full: WorkflowRunRow = { ...row, state: "queued", summary: null, replay_run_id: null, created_at: now, updated_at: now };
  db.prepare(
    "INSERT INTO workflow_runs (id, workflow_id, operation_id, kind, mode, state, summary, replay_run_id, created_by_actor, created_at, updated_at) VALUES (@id, @workflow_id, @operation_id, @kind, @mode, @state, @summary, @replay_run_id, @created_by_actor, @created_at, @updated_at)",
  ).run(full);
  return full;
}

export function workflowRunNotFound(id: string): EmberscopeError {
  return new EmberscopeError("WORKFLOW_RUN_NOT_FOUND", "No workflow run has that id.", { details: { workflow_run_id: id }, recovery: { operation: "workflows.runs", arguments: {}, safe_to_repeat: true } });
}

export function getWorkflowRunRow(db: SqliteDatabase, id: string): WorkflowRunRow {
  const row = db.prepare("SELECT * FROM workflow_runs WHERE id = ?").get(id) as WorkflowRunRow | undefined;
  if (!row) throw workflowRunNotFound(id);
  return row;
}

export function workflowRunOfOperation(db: SqliteDatabase, operationId: string): WorkflowRunRow | null {
  return (db.prepare("SELECT * FROM workflow_runs WHERE operation_id = ?").get(operationId) as WorkflowRunRow | undefined) ?? null;
}

export function patchWorkflowRun(db: SqliteDatabase, id: string, patch: { state?: WorkflowRunState; summary?: unknown; replay_run_id?: string }): void {
  db.prepare("UPDATE workflow_runs SET state = coalesce(?, state), summary = coalesce(?, summary), replay_run_id = coalesce(?, replay_run_id), updated_at = ? WHERE id = ?").run(
    patch.state ?? null,
    patch.summary === undefined ? null : JSON.stringify(patch.summary),
    patch.replay_run_id ?? null,
    nowIso(),
    id,
  );
}

/** Newest first, keyset after (created_at, id); optionally one workflow's. */
export function listWorkflowRunRows(db: SqliteDatabase, filter: { workflowId: string | null; after: [string, string] | null; limit: number }): WorkflowRunRow[] {
  return db
    .prepare(
      `SELECT * FROM workflow_runs WHERE (? IS NULL OR workflow_id = ?) AND (? IS NULL OR (created_at, id) < (?, ?))
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .all(filter.workflowId, filter.workflowId, filter.after?.[0] ?? null, filter.after?.[0] ?? null, filter.after?.[1] ?? null, filter.limit) as WorkflowRunRow[];
}
