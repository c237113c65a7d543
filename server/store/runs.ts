import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import type { Limitation, Run } from "../domain/models";
import { writeTransaction, type SqliteDatabase } from "./control-store";

interface RunRow {
  id: string;
  kind: Run["kind"];
  source: string;
  title: string;
  status: Run["status"];
  execution_state: Run["execution_state"];
  capture_state: Run["capture_state"];
  extraction_state: Run["extraction_state"];
  limitations: string;
  details: string;
  revision: number;
  created_at: string;
  updated_at: string;
}

function runFromRow(row: RunRow): Run {
  return {
    run_id: row.id,
    kind: row.kind,
    source: row.source,
    title: row.title,
    status: row.status,
    execution_state: row.execution_state,
    capture_state: row.capture_state,
    extraction_state: row.extraction_state,
    limitations: JSON.parse(row.limitations) as Limitation[],
    details: JSON.parse(row.details) as Record<string, unknown>,
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type RunDraft = Pick<Run, "kind" | "source" | "title"> &
  Partial<Pick<Run, "status" | "execution_state" | "capture_state" | "extraction_state" | "limitations" | "details">>;

function recordRevision(db: SqliteDatabase, run: Run): void {
  db.prepare("INSERT INTO run_revisions (run_id, revision, snapshot, recorded_at) VALUES (?, ?, ?, ?)").run(
    run.run_id,
    run.revision,
    JSON.stringify(run),
    run.updated_at,
  );
}

export function createRun(db: SqliteDatabase, draft: RunDraft): Run {
  const now = nowIso();
  const run: Run = {
    run_id: newId("run"),
    kind: draft.kind,
    source: draft.source,
    title: draft.title,
    status: draft.status ?? "pending",
    execution_state: draft.execution_state ?? "not_applicable",
    capture_state: draft.capture_state ?? "not_applicable",
    extraction_state: draft.extraction_state ?? "pending",
    limitations: draft.limitations ?? [],
    details: draft.details ?? {},
    revision: 1,
    created_at: now,
    updated_at: now,
  };
  writeTransaction(db, () => {
    db.prepare(
      `INSERT INTO runs (id, kind, source, title, status, execution_state, capture_state, extraction_state,
         limitations, details, revision, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      run.run_id,
      run.kind,
      run.source,
      run.title,
      run.status,
      run.execution_state,
      run.capture_state,
      run.extraction_state,
      JSON.stringify(run.limitations),
      JSON.stringify(run.details),
      run.revision,
      run.created_at,
      run.updated_at,
    );
    recordRevision(db, run);
  });
  return run;
}

export function getRun(db: SqliteDatabase, runId: string): Run {
  const row = db.prepare("SELECT * FROM runs WHERE id = ?").get(runId) as RunRow | undefined;
  if (!row) {
    throw new EmberscopeError("RUN_NOT_FOUND", "No run has that id.", {
      details: { run_id: runId },
      recovery: { operation: "runs.list", arguments: {}, safe_to_repeat: true },
    });
  }
  return runFromRow(row);
}

export type RunPatch = Partial<Omit<Run, "run_id" | "kind" | "revision" | "created_at" | "updated_at">>;

/** Compare-and-set on `expectedRevision`; every revision's snapshot is kept in run_revisions. */
export function updateRun(db: SqliteDatabase, runId: string, expectedRevision: number, patch: RunPatch): Run {
  return writeTransaction(db, () => {
    const current = getRun(db, runId);
    if (current.revision !== expectedRevision) {
      throw new EmberscopeError("REVISION_CONFLICT", "The run changed since it was read.", {
        details: { run_id: runId, expected_revision: expectedRevision, current_revision: current.revision },
        recovery: { operation: "runs.get", arguments: { run_id: runId }, safe_to_repeat: true },
      });
    }
    const next: Run = { ...current, ...patch, revision: current.revision + 1, updated_at: nowIso() };
    db.prepare(
      `UPDATE runs SET source = ?, title = ?, status = ?, execution_state = ?, capture_state = ?, extraction_state = ?,
         limitations = ?, details = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?`,
    ).run(
      next.source,
      next.title,
      next.status,
      next.execution_state,
      next.capture_state,
      next.extraction_state,
      JSON.stringify(next.limitations),
      JSON.stringify(next.details),
      next.revision,
      next.updated_at,
      runId,
      expectedRevision,
    );
    recordRevision(db, next);
    return next;
  });
}

/** Updates the run as it is now (read and written in one transaction: no stale revision to race). */
export function patchRun(db: SqliteDatabase, runId: string, patch: RunPatch | ((run: Run) => RunPatch)): Run {
  return writeTransaction(db, () => {
    const current = getRun(db, runId);
    return updateRun(db, runId, current.revision, typeof patch === "function" ? patch(current) : patch);
  });
}

export function runRevisions(db: SqliteDatabase, runId: string): Run[] {
  const rows = db.prepare("SELECT snapshot FROM run_revisions WHERE run_id = ? ORDER BY revision").all(runId) as {
    snapshot: string;
  }[];
  return rows.map((r) => JSON.parse(r.snapshot) as Run);
}

export interface RunFilters {
  kind?: Run["kind"];
  status?: Run["status"];
}

/** One keyset page, newest first; `after` is the (created_at, id) of the last row seen. */
export function listRunRows(db: SqliteDatabase, filters: RunFilters, after: [string, string] | null, limit: number): Run[] {
  const rows = db
    .prepare(
      `SELECT * FROM runs
       WHERE (@kind IS NULL OR kind = @kind) AND (@status IS NULL OR status = @status)
         AND (@after_at IS NULL OR (created_at, id) < (@after_at, @after_id))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    )
    .all({
      kind: filters.kind ?? null,
      status: filters.status ?? null,
      after_at: after?.[0] ?? null,
      after_id: after?.[1] ?? null,
      limit,
    }) as RunRow[];
  return rows.map(runFromRow);
}
