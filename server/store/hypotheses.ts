import { EmberscopeError } from "../domain/errors";
import type { Hypothesis } from "../domain/notebook";
import type { SqliteDatabase } from "./control-store";
import { authorOf, type AuthorColumns } from "./investigations";
import { compareAndSet, listRevisions, recordRevision, type CasSpec } from "./revisions";

/** Hypotheses of investigations in the control store. */

interface HypothesisRow extends AuthorColumns {
  id: string;
  investigation_id: string;
  claim: string;
  prediction: string;
  refuted_by: string;
  status: Hypothesis["status"];
  revision: number;
  created_at: string;
  updated_at: string;
}

function fromRow(row: HypothesisRow): Hypothesis {
  return {
    hypothesis_id: row.id,
    investigation_id: row.investigation_id,
    claim: row.claim,
    prediction: row.prediction,
    refuted_by: row.refuted_by,
    status: row.status,
    created_by: authorOf(row),
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const REVISIONS = { table: "hypothesis_revisions", key: "hypothesis_id" };

export function hypothesisNotFound(id: string, investigationId?: string): EmberscopeError {
  return new EmberscopeError("HYPOTHESIS_NOT_FOUND", investigationId ? "The investigation has no hypothesis with that id." : "No hypothesis has that id.", {
    details: { hypothesis_id: id, ...(investigationId ? { investigation_id: investigationId } : {}) },
    recovery: investigationId ? { operation: "investigations.get", arguments: { investigation_id: investigationId }, safe_to_repeat: true } : { operation: "investigations.list", arguments: {}, safe_to_repeat: true },
  });
}

export function getHypothesis(db: SqliteDatabase, id: string): Hypothesis {
  const row = db.prepare("SELECT * FROM hypotheses WHERE id = ?").get(id) as HypothesisRow | undefined;
  if (!row) throw hypothesisNotFound(id);
  return fromRow(row);
}

export function insertHypothesis(db: SqliteDatabase, h: Hypothesis): void {
  db.prepare(
    `INSERT INTO hypotheses (id, investigation_id, claim, prediction, refuted_by, status, created_by_actor, created_by_client, revision, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(h.hypothesis_id, h.investigation_id, h.claim, h.prediction, h.refuted_by, h.status, h.created_by.actor, h.created_by.client, h.revision, h.created_at, h.updated_at);
  recordRevision(db, REVISIONS, h.hypothesis_id, h);
}

const CAS: CasSpec<Hypothesis> = {
  noun: "hypothesis",
  idKey: "hypothesis_id",
  revisions: REVISIONS,
  read: getHypothesis,
  write: (db, next, expected) =>
    db
      .prepare("UPDATE hypotheses SET claim = ?, prediction = ?, refuted_by = ?, status = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?")
      .run(next.claim, next.prediction, next.refuted_by, next.status, next.revision, next.updated_at, next.hypothesis_id, expected).changes,
  reread: (current) => ({ operation: "investigations.get", arguments: { investigation_id: current.investigation_id }, safe_to_repeat: true }),
};

export type HypothesisPatch = Partial<Pick<Hypothesis, "claim" | "prediction" | "refuted_by" | "status">>;

export function updateHypothesis(db: SqliteDatabase, id: string, expected: number, change: (current: Hypothesis) => HypothesisPatch): Hypothesis {
  return compareAndSet(db, CAS, id, expected, change);
}

export function hypothesisRevisions(db: SqliteDatabase, id: string, beforeRevision: number | null, limit: number): Hypothesis[] {
  return listRevisions<Hypothesis>(db, REVISIONS, id, beforeRevision, limit);
}

/** An investigation's hypotheses, oldest first, at most `limit`. */
export function listHypothesisRows(db: SqliteDatabase, investigationId: string, limit: number): Hypothesis[] {
  return (db.prepare("SELECT * FROM hypotheses WHERE investigation_id = ? ORDER BY created_at, id LIMIT ?").all(investigationId, limit) as HypothesisRow[]).map(fromRow);
}
