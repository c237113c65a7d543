import { EmberscopeError } from "../domain/errors";
import type { EvidenceRef, Finding } from "../domain/notebook";
import type { SqliteDatabase } from "./control-store";
import { authorOf, type AuthorColumns } from "./investigations";
import { compareAndSet, listRevisions, recordRevision, type CasSpec } from "./revisions";

/** Findings of investigations in the control store (limitations, next steps and references as JSON). */

interface FindingRow extends AuthorColumns {
  id: string;
  investigation_id: string;
  title: string;
  claim: string;
  kind: Finding["kind"];
  evidence_level: Finding["evidence_level"];
  assessment: Finding["assessment"];
  lifecycle: Finding["lifecycle"];
  superseded_by: string | null;
  limitations: string;
  next_steps: string;
  evidence_refs: string;
  revision: number;
  created_at: string;
  updated_at: string;
}

function fromRow(row: FindingRow): Finding {
  return {
    finding_id: row.id,
    investigation_id: row.investigation_id,
    title: row.title,
    claim: row.claim,
    kind: row.kind,
    evidence_level: row.evidence_level,
    assessment: row.assessment,
    lifecycle: row.lifecycle,
    superseded_by: row.superseded_by,
    limitations: JSON.parse(row.limitations) as string[],
    next_steps: JSON.parse(row.next_steps) as string[],
    references: JSON.parse(row.evidence_refs) as EvidenceRef[],
    created_by: authorOf(row),
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const REVISIONS = { table: "finding_revisions", key: "finding_id" };

export function findingNotFound(id: string, investigationId?: string): EmberscopeError {
  return new EmberscopeError("FINDING_NOT_FOUND", investigationId ? "The investigation has no finding with that id." : "No finding has that id.", {
    details: { finding_id: id, ...(investigationId ? { investigation_id: investigationId } : {}) },
    recovery: { operation: "findings.list", arguments: investigationId ? { investigation_id: investigationId } : {}, safe_to_repeat: true },
  });
}

export function findFinding(db: SqliteDatabase, id: string): Finding | null {
  const row = db.prepare("SELECT * FROM findings WHERE id = ?").get(id) as FindingRow | undefined;
  return row ? fromRow(row) : null;
}

export function getFinding(db: SqliteDatabase, id: string): Finding {
  const found = findFinding(db, id);
  if (!found) throw findingNotFound(id);
  return found;
}

export function insertFinding(db: SqliteDatabase, f: Finding): void {
  db.prepare(
    `INSERT INTO findings (id, investigation_id, title, claim, kind, evidence_level, assessment, lifecycle, superseded_by, limitations, next_steps, evidence_refs,
       created_by_actor, created_by_client, revision, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    f.finding_id,
    f.investigation_id,
    f.title,
    f.claim,
    f.kind,
    f.evidence_level,
    f.assessment,
    f.lifecycle,
    f.superseded_by,
    JSON.stringify(f.limitations),
    JSON.stringify(f.next_steps),
    JSON.stringify(f.references),
    f.created_by.actor,
    f.created_by.client,
    f.revision,
    f.created_at,
    f.updated_at,
  );
  recordRevision(db, REVISIONS, f.finding_id, f);
}

const CAS: CasSpec<Finding> = {
  noun: "finding",
  idKey: "finding_id",
  revisions: REVISIONS,
  read: getFinding,
  write: (db, next, expected) =>
    db
      .prepare(
        `UPDATE findings SET title = ?, claim = ?, kind = ?, evidence_level = ?, assessment = ?, lifecycle = ?, superseded_by = ?, limitations = ?, next_steps = ?,
           evidence_refs = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?`,
      )
      .run(
        next.title,
        next.claim,
        next.kind,
        next.evidence_level,
        next.assessment,
        next.lifecycle,
        next.superseded_by,
        JSON.stringify(next.limitations),
        JSON.stringify(next.next_steps),
        JSON.stringify(next.references),
        next.revision,
        next.updated_at,
        next.finding_id,
        expected,
      ).changes,
  reread: (current) => ({ operation: "findings.get", arguments: { finding_id: current.finding_id }, safe_to_repeat: true }),
};

export type FindingPatch = Partial<Pick<Finding, "title" | "claim" | "kind" | "evidence_level" | "assessment" | "lifecycle" | "superseded_by" | "limitations" | "next_steps" | "references">>;

export function updateFinding(db: SqliteDatabase, id: string, expected: number, change: (current: Finding) => FindingPatch): Finding {
  return compareAndSet(db, CAS, id, expected, change);
}

export function findingRevisions(db: SqliteDatabase, id: string, beforeRevision: number | null, limit: number): Finding[] {
  return listRevisions<Finding>(db, REVISIONS, id, beforeRevision, limit);
}

export interface FindingFilters {
  investigation_id?: string;
  assessment?: Finding["assessment"];
  lifecycle?: Finding["lifecycle"];
  kind?: Finding["kind"];
}

/** One keyset page, newest first; `after` is the (created_at, id) of the last row seen. */
export function listFindingRows(db: SqliteDatabase, filters: FindingFilters, after: [string, string] | null, limit: number): Finding[] {
  const rows = db
    .prepare(
      `SELECT * FROM findings
       WHERE (@inv IS NULL OR investigation_id = @inv) AND (@assessment IS NULL OR assessment = @assessment)
         AND (@lifecycle IS NULL OR lifecycle = @lifecycle) AND (@kind IS NULL OR kind = @kind)
         AND (@after_at IS NULL OR (created_at, id) < (@after_at, @after_id))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    )
    .all({
      inv: filters.investigation_id ?? null,
      assessment: filters.assessment ?? null,
      lifecycle: filters.lifecycle ?? null,
      kind: filters.kind ?? null,
      after_at: after?.[0] ?? null,
      after_id: after?.[1] ?? null,
      limit,
    }) as FindingRow[];
  return rows.map(fromRow);
}
