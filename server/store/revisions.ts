import { EmberscopeError, type Recovery } from "../domain/errors";
import { nowIso } from "../domain/ids";
import { writeTransaction, type SqliteDatabase } from "./control-store";

/**
 * Revisable records (investigations, cells, hypotheses, findings): every revision's snapshot is
 * kept in `<record>_revisions`, and an update is a compare-and-set on the revision the caller
 * read. One implementation here, so each record's store only says how to read and write its row.
 */

export interface Revisable {
  revision: number;
  updated_at: string;
}

export interface RevisionTable {
  /** e.g. "cell_revisions" */
  table: string;
  /** e.g. "cell_id" */
  key: string;
}

export function recordRevision<T extends Revisable>(db: SqliteDatabase, t: RevisionTable, id: string, record: T): void {
  db.prepare(`INSERT INTO ${t.table} (${t.key}, revision, snapshot, recorded_at) VALUES (?, ?, ?, ?)`).run(id, record.revision, JSON.stringify(record), record.updated_at);
}

/** Snapshots newest first, strictly before `beforeRevision` when given. */
export function listRevisions<T>(db: SqliteDatabase, t: RevisionTable, id: string, beforeRevision: number | null, limit: number): T[] {
  const rows = db
    .prepare(`SELECT snapshot FROM ${t.table} WHERE ${t.key} = ? AND (? IS NULL OR revision < ?) ORDER BY revision DESC LIMIT ?`)
    .all(id, beforeRevision, beforeRevision, limit) as { snapshot: string }[];
  return rows.map((r) => JSON.parse(r.snapshot) as T);
}

export interface CasSpec<T extends Revisable> {
  /** What the record is called in messages ("cell"). */
  noun: string;
  /** The id field in error details ("cell_id"). */
  idKey: string;
  revisions: RevisionTable;
  read: (db: SqliteDatabase, id: string) => T;
  /** Writes `next` over the row, guarded by `WHERE revision = expected`; returns rows changed. */
  write: (db: SqliteDatabase, next: T, expected: number) => number;
  /** How to re-read it after a conflict. */
  reread: (current: T) => Recovery;
}

export function revisionConflict<T extends Revisable>(spec: CasSpec<T>, id: string, expected: number, current: T): EmberscopeError {
  return new EmberscopeError("REVISION_CONFLICT", `The ${spec.noun} changed since it was read (revision ${current.revision}, not ${expected}).`, {
    details: {
      [spec.idKey]: id,
      // Every notebook record names its investigation (audit targets and the page find it by it).
      ...("investigation_id" in current ? { investigation_id: current.investigation_id } : {}),
      expected_revision: expected,
      current_revision: current.revision,
      updated_at: current.updated_at,
    },
    recovery: spec.reread(current),
  });
}

/**
 * Compare-and-set: in one write transaction, reads the record, refuses a stale `expected`
 * (REVISION_CONFLICT with the current revision), lets `change` check the current record (it may
 * throw) and give the fields to change, then writes the next revision and keeps its snapshot.
 */
export function compareAndSet<T extends Revisable>(db: SqliteDatabase, spec: CasSpec<T>, id: string, expected: number, change: (current: T) => Partial<T>): T {
  return writeTransaction(db, () => {
    const current = spec.read(db, id);
    if (current.revision !== expected) throw revisionConflict(spec, id, expected, current);
    const next: T = { ...current, ...change(current), revision: current.revision + 1, updated_at: laterThan(current.updated_at) };
    if (spec.write(db, next, expected) !== 1) throw revisionConflict(spec, id, expected, spec.read(db, id));
    recordRevision(db, spec.revisions, id, next);
    return next;
  });
}

/** Now, or a millisecond after `previous` when the clock has not moved past it (revisions stay ordered in time). */
export function laterThan(previous: string): string {
  const now = nowIso();
  if (now > previous) return now;
  return nowIso(Date.parse(previous) + 1);
}

/** A unique index's refusal, e.g. a cell name taken by a concurrent writer. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "SQLITE_CONSTRAINT_UNIQUE";
}
