import { EmberscopeError } from "../domain/errors";
import { nowIso } from "../domain/ids";
import type { SqliteDatabase } from "./control-store";
import { isUniqueViolation, laterThan, recordRevision } from "./revisions";

/** Workflows exposed as MCP tools (a person's act; see migration-workflow-exposures.ts). */

/** One tool's reviewed contract as the exposure bound it. */
export interface BoundContract {
  tool: string;
  revision: number;
  handler_digest: string;
}

/** What `tools/list` shows for an exposed workflow. */
export interface ExposureListing {
  description: string;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  open_world: boolean;
}

export interface ExposureRow {
  workflow_id: string;
  tool_name: string;
  state: "exposed" | "withdrawn";
  workflow_digest: string;
  contracts: BoundContract[];
  contracts_digest: string;
  listing: ExposureListing;
  note: string;
  changed_by: string;
  revision: number;
  created_at: string;
  updated_at: string;
}

interface StoredRow extends Omit<ExposureRow, "contracts" | "listing"> {
  contracts: string;
  listing: string;
}

const REVISIONS = { table: "workflow_exposure_revisions", key: "workflow_id" };

function fromRow(row: StoredRow): ExposureRow {
  return { ...row, contracts: JSON.parse(row.contracts) as BoundContract[], listing: JSON.parse(row.listing) as ExposureListing };
}

export function getExposureRow(db: SqliteDatabase, workflowId: string): ExposureRow | null {
  const row = db.prepare("SELECT * FROM workflow_exposures WHERE workflow_id = ?").get(workflowId) as StoredRow | undefined;
  return row ? fromRow(row) : null;
}

/** The exposure currently holding this tool name, if any. */
export function exposedByTool(db: SqliteDatabase, toolName: string): ExposureRow | null {
  const row = db.prepare("SELECT * FROM workflow_exposures WHERE tool_name = ? AND state = 'exposed'").get(toolName) as StoredRow | undefined;
  return row ? fromRow(row) : null;
}

/** The last exposure (of any state) that had this tool name: says a withdrawn tool was withdrawn. */
export function lastExposureOfTool(db: SqliteDatabase, toolName: string): ExposureRow | null {
  const row = db.prepare("SELECT * FROM workflow_exposures WHERE tool_name = ? ORDER BY updated_at DESC LIMIT 1").get(toolName) as StoredRow | undefined;
  return row ? fromRow(row) : null;
}

export function listExposureRows(db: SqliteDatabase, filter: { exposedOnly: boolean; limit: number }): ExposureRow[] {
  const rows = db
    .prepare(`SELECT * FROM workflow_exposures WHERE (? = 0 OR state = 'exposed') ORDER BY tool_name LIMIT ?`)
    .all(filter.exposedOnly ? 1 : 0, filter.limit) as StoredRow[];
  return rows.map(fromRow);
}

/** A digest of what changes the tool list (names, revisions): a long-lived server compares it to announce list_changed. */
export function exposureGeneration(db: SqliteDatabase): string {
  const row = db.prepare("SELECT count(*) AS n, coalesce(max(updated_at), '') AS at, coalesce(sum(revision), 0) AS revs FROM workflow_exposures").get() as { n: number; at: string; revs: number };
  return `${row.n}:${row.revs}:${row.at}`;
}

/**
 * Writes the next revision of a workflow's exposure (the first when it has none), compare-and-set
 * on `expected_revision` when given; keeps the snapshot. The caller holds the write transaction.
 */
export function writeExposure(
  db: SqliteDatabase,
  draft: Omit<ExposureRow, "revision" | "created_at" | "updated_at">,
  expectedRevision: number | null,
): ExposureRow {
  const current = getExposureRow(db, draft.workflow_id);
  if (expectedRevision !== null && (current?.revision ?? 0) !== expectedRevision) {
    throw new EmberscopeError("REVISION_CONFLICT", `The workflow's exposure changed since it was read (revision ${current?.revision ?? 0}, not ${expectedRevision}).`, {
      details: { workflow_id: draft.workflow_id, expected_revision: expectedRevision, current_revision: current?.revision ?? 0 },
      recovery: { operation: "workflows.exposed", arguments: {}, safe_to_repeat: true },
    });
  }
  const now = current ? laterThan(current.updated_at) : nowIso();
  const next: ExposureRow = { ...draft, revision: (current?.revision ?? 0) + 1, created_at: current?.created_at ?? now, updated_at: now };
  const values = [next.tool_name, next.state, next.workflow_digest, JSON.stringify(next.contracts), next.contracts_digest, JSON.stringify(next.listing), next.note, next.changed_by, next.revision, next.created_at, next.updated_at, next.workflow_id];
  try {
    if (current) {
      db.prepare(
        "UPDATE workflow_exposures SET tool_name = ?, state = ?, workflow_digest = ?, contracts = ?, contracts_digest = ?, listing = ?, note = ?, changed_by = ?, revision = ?, created_at = ?, updated_at = ? WHERE workflow_id = ?",
      ).run(...values);
    } else {
      db.prepare(
        "INSERT INTO workflow_exposures (tool_name, state, workflow_digest, contracts, contracts_digest, listing, note, changed_by, revision, created_at, updated_at, workflow_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ).run(...values);
    }
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const holder = exposedByTool(db, next.tool_name);
    throw new EmberscopeError("INVALID_ARGUMENTS", `Another workflow is exposed as ${next.tool_name}; choose another name.`, { details: { argument: "name", workflow_id: holder?.workflow_id ?? null } });
  }
  recordRevision(db, REVISIONS, next.workflow_id, next);
  return next;
}
