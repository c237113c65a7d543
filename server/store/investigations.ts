import { EmberscopeError } from "../domain/errors";
import type { Author, Investigation } from "../domain/notebook";
import type { SqliteDatabase } from "./control-store";
import { compareAndSet, listRevisions, recordRevision, type CasSpec } from "./revisions";

/**
 * Investigations in the control store, behind narrow functions (a PostgreSQL store would be a
 * second implementation of these, DESIGN.md §7).
 */

export interface AuthorColumns {
  created_by_actor: Author["actor"];
  created_by_client: string | null;
}

export function authorOf(row: AuthorColumns): Author {
  return { actor: row.created_by_actor, client: row.created_by_client };
}

interface InvestigationRow extends AuthorColumns {
  id: string;
  title: string;
  question: string;
  status: Investigation["status"];
  imported: string | null;
  revision: number;
  created_at: string;
  updated_at: string;
}

function fromRow(row: InvestigationRow): Investigation {
  return {
    investigation_id: row.id,
    title: row.title,
    question: row.question,
    status: row.status,
    created_by: authorOf(row),
    imported: row.imported ? (JSON.parse(row.imported) as Investigation["imported"]) : null,
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const REVISIONS = { table: "investigation_revisions", key: "investigation_id" };

export function investigationNotFound(id: string): EmberscopeError {
  return new EmberscopeError("INVESTIGATION_NOT_FOUND", "No investigation has that id.", {
    details: { investigation_id: id },
    recovery: { operation: "investigations.list", arguments: {}, safe_to_repeat: true },
  });
}

export function findInvestigation(db: SqliteDatabase, id: string): Investigation | null {
  const row = db.prepare("SELECT * FROM investigations WHERE id = ?").get(id) as InvestigationRow | undefined;
  return row ? fromRow(row) : null;
}

export function getInvestigation(db: SqliteDatabase, id: string): Investigation {
  const found = findInvestigation(db, id);
  if (!found) throw investigationNotFound(id);
  return found;
}

/** Inserts a new investigation (revision as given: 1 when created, the document's when imported) and its first snapshot. */
export function insertInvestigation(db: SqliteDatabase, inv: Investigation): void {
  db.prepare(
    `INSERT INTO investigations (id, title, question, status, created_by_actor, created_by_client, imported, revision, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(inv.investigation_id, inv.title, inv.question, inv.status, inv.created_by.actor, inv.created_by.client, inv.imported ? JSON.stringify(inv.imported) : null, inv.revision, inv.created_at, inv.updated_at);
  recordRevision(db, REVISIONS, inv.investigation_id, inv);
}

const CAS: CasSpec<Investigation> = {
  noun: "investigation",
  idKey: "investigation_id",
  revisions: REVISIONS,
  read: getInvestigation,
  write: (db, next, expected) =>
    db
      .prepare("UPDATE investigations SET title = ?, question = ?, status = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?")
      .run(next.title, next.question, next.status, next.revision, next.updated_at, next.investigation_id, expected).changes,
  reread: (current) => ({ operation: "investigations.get", arguments: { investigation_id: current.investigation_id }, safe_to_repeat: true }),
};

export type InvestigationPatch = Partial<Pick<Investigation, "title" | "question" | "status">>;

export function updateInvestigation(db: SqliteDatabase, id: string, expected: number, change: (current: Investigation) => InvestigationPatch): Investigation {
  return compareAndSet(db, CAS, id, expected, change);
}

export function investigationRevisions(db: SqliteDatabase, id: string, beforeRevision: number | null, limit: number): Investigation[] {
  return listRevisions<Investigation>(db, REVISIONS, id, beforeRevision, limit);
}

export interface InvestigationFilters {
  status?: Investigation["status"];
}

/** One keyset page, newest first; `after` is the (created_at, id) of the last row seen. */
export function listInvestigationRows(db: SqliteDatabase, filters: InvestigationFilters, after: [string, string] | null, limit: number): Investigation[] {
  const rows = db
    .prepare(
      `SELECT * FROM investigations
       WHERE (@status IS NULL OR status = @status) AND (@after_at IS NULL OR (created_at, id) < (@after_at, @after_id))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    )
    .all({ status: filters.status ?? null, after_at: after?.[0] ?? null, after_id: after?.[1] ?? null, limit }) as InvestigationRow[];
  return rows.map(fromRow);
}

/** How many cells, hypotheses and findings an investigation holds (live cells only). */
export function investigationCounts(db: SqliteDatabase, id: string): { cells: number; hypotheses: number; findings: number } {
  return db
    .prepare(
      `SELECT (SELECT count(*) FROM cells WHERE investigation_id = @id AND deleted = 0) AS cells,
              (SELECT count(*) FROM hypotheses WHERE investigation_id = @id) AS hypotheses,
              (SELECT count(*) FROM findings WHERE investigation_id = @id) AS findings`,
    )
    .get({ id }) as { cells: number; hypotheses: number; findings: number };
}
