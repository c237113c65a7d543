import { EmberscopeError } from "../domain/errors";
import { nowIso } from "../domain/ids";
import type { ToolBinding, ToolContract, WorkflowRecord } from "../domain/workflow";
import type { SqliteDatabase } from "./control-store";
import { laterThan, listRevisions, recordRevision } from "./revisions";

/** Reviewed tool contracts and compiled workflows in the control store (documents in the object store). */

interface ContractRow {
  tool: string;
  side_effect: ToolContract["side_effect"];
  note: string;
  reviewed_by: string;
  handler: string | null;
  handler_digest: string | null;
  binding: string | null;
  revision: number;
  created_at: string;
  updated_at: string;
}

function contractFromRow(row: ContractRow): ToolContract {
  return { ...row, binding: row.binding === null ? null : (JSON.parse(row.binding) as ToolBinding) };
}

/** The code a review binds: the registered handler, its digest and what it declared. */
export interface HandlerBinding {
  handler: string;
  handler_digest: string;
  binding: ToolBinding;
}

const CONTRACT_REVISIONS = { table: "tool_contract_revisions", key: "tool" };

export function listContractRows(db: SqliteDatabase, limit: number): ToolContract[] {
  return (db.prepare("SELECT * FROM tool_contracts ORDER BY tool LIMIT ?").all(limit) as ContractRow[]).map(contractFromRow);
}

export function getContractRow(db: SqliteDatabase, tool: string): ToolContract | null {
  const row = db.prepare("SELECT * FROM tool_contracts WHERE tool = ?").get(tool) as ContractRow | undefined;
  return row ? contractFromRow(row) : null;
}

export function contractSideEffects(db: SqliteDatabase): Map<string, ToolContract["side_effect"]> {
  const rows = db.prepare("SELECT tool, side_effect FROM tool_contracts").all() as Pick<ContractRow, "tool" | "side_effect">[];
  return new Map(rows.map((r) => [r.tool, r.side_effect]));
}

/** Records a person's review of a tool: a new contract, or the next revision of its contract. */
export function upsertContract(
  db: SqliteDatabase,
  draft: { tool: string; side_effect: ToolContract["side_effect"]; note: string; reviewed_by: string; expected_revision: number | null; bound: HandlerBinding | null },
): ToolContract {
  const current = getContractRow(db, draft.tool);
  const bound = draft.bound ?? { handler: null, handler_digest: null, binding: null };
  const expected = draft.expected_revision;
  if (expected !== null && (current?.revision ?? 0) !== expected) {
    throw new EmberscopeError("REVISION_CONFLICT", `The tool's contract changed since it was read (revision ${current?.revision ?? 0}, not ${expected}).`, {
      details: { tool: draft.tool, expected_revision: expected, current_revision: current?.revision ?? 0 },
      recovery: { operation: "tools.list", arguments: {}, safe_to_repeat: true },
    });
  }
  if (!current) {
    const now = nowIso();
    const next: ToolContract = { tool: draft.tool, side_effect: draft.side_effect, note: draft.note, reviewed_by: draft.reviewed_by, ...bound, revision: 1, created_at: now, updated_at: now };
    db.prepare("INSERT INTO tool_contracts (tool, side_effect, note, reviewed_by, handler, handler_digest, binding, revision, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").run(
      next.tool,
      next.side_effect,
      next.note,
      next.reviewed_by,
      next.handler,
      next.handler_digest,
      next.binding === null ? null : JSON.stringify(next.binding),
      next.revision,
      next.created_at,
      next.updated_at,
    );
    recordRevision(db, CONTRACT_REVISIONS, next.tool, next);
    return next;
  }
  const next: ToolContract = { ...current, side_effect: draft.side_effect, note: draft.note, reviewed_by: draft.reviewed_by, ...bound, revision: current.revision + 1, updated_at: laterThan(current.updated_at) };
  db.prepare("UPDATE tool_contracts SET side_effect = ?, note = ?, reviewed_by = ?, handler = ?, handler_digest = ?, binding = ?, revision = ?, updated_at = ? WHERE tool = ? AND revision = ?").run(
    next.side_effect,
    next.note,
    next.reviewed_by,
    next.handler,
    next.handler_digest,
    next.binding === null ? null : JSON.stringify(next.binding),
    next.revision,
    next.updated_at,
    next.tool,
    current.revision,
  );
  recordRevision(db, CONTRACT_REVISIONS, next.tool, next);
  return next;
}

export function contractRevisions(db: SqliteDatabase, tool: string, limit: number): ToolContract[] {
  return listRevisions<ToolContract>(db, CONTRACT_REVISIONS, tool, null, limit);
}

interface WorkflowRow {
  id: string;
  object_id: string;
  size_bytes: number;
  run_id: string;
  commit_id: string;
  version: number;
  status: WorkflowRecord["status"];
  blocked_tools: string;
  node_count: number;
  edge_count: number;
  report: string;
  created_by_actor: string;
  created_at: string;
}

function fromRow(row: WorkflowRow): WorkflowRecord {
  return {
    workflow_id: row.id,
    digest: row.object_id,
    size_bytes: row.size_bytes,
    run_id: row.run_id,
    commit_id: row.commit_id,
    version: row.version,
    status: row.status,
    blocked_tools: JSON.parse(row.blocked_tools) as string[],
    node_count: row.node_count,
    edge_count: row.edge_count,
    report: JSON.parse(row.report) as WorkflowRecord["report"],
    created_by: row.created_by_actor,
    created_at: row.created_at,
  };
}

export function workflowNotFound(id: string): EmberscopeError {
  return new EmberscopeError("WORKFLOW_NOT_FOUND", "No workflow has that id.", {
    details: { workflow_id: id },
    recovery: { operation: "workflows.list", arguments: {}, safe_to_repeat: true },
  });
}

export function getWorkflowRow(db: SqliteDatabase, id: string): WorkflowRecord {
  const row = db.prepare("SELECT * FROM workflows WHERE id = ?").get(id) as WorkflowRow | undefined;
  if (!row) throw workflowNotFound(id);
  return fromRow(row);
}

/** The run's workflow with that content, if one was stored before. */
export function findWorkflow(db: SqliteDatabase, runId: string, objectId: string): WorkflowRecord | null {
  const row = db.prepare("SELECT * FROM workflows WHERE run_id = ? AND object_id = ?").get(runId, objectId) as WorkflowRow | undefined;
  return row ? fromRow(row) : null;
}

/** Stores a compiled workflow as the run's next version. */
export function insertWorkflow(db: SqliteDatabase, record: Omit<WorkflowRecord, "version" | "created_at">): WorkflowRecord {
  const { next } = db.prepare("SELECT coalesce(max(version), 0) + 1 AS next FROM workflows WHERE run_id = ?").get(record.run_id) as { next: number };
  const created = nowIso();
  db.prepare(
    `INSERT INTO workflows (id, object_id, size_bytes, run_id, commit_id, version, status, blocked_tools, node_count, edge_count, report, created_by_actor, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    record.workflow_id,
    record.digest,
    record.size_bytes,
    record.run_id,
    record.commit_id,
    next,
    record.status,
    JSON.stringify(record.blocked_tools),
    record.node_count,
    record.edge_count,
    JSON.stringify(record.report),
    record.created_by,
    created,
  );
  return { ...record, version: next, created_at: created };
}

/** Newest first, keyset after (created_at, id); optionally one run's. */
export function listWorkflowRows(db: SqliteDatabase, filter: { runId: string | null; after: [string, string] | null; limit: number }): WorkflowRecord[] {
  const rows = db
    .prepare(
      `SELECT * FROM workflows
       WHERE (? IS NULL OR run_id = ?) AND (? IS NULL OR (created_at, id) < (?, ?))
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .all(filter.runId, filter.runId, filter.after?.[0] ?? null, filter.after?.[0] ?? null, filter.after?.[1] ?? null, filter.limit) as WorkflowRow[];
  return rows.map(fromRow);
}
