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

function runNotFound(runId: string): EmberscopeError {
  return new EmberscopeError("RUN_NOT_FOUND", "No run has that id.", {
    details: { run_id: runId },
    recovery: { operation: "runs.list", arguments: {}, safe_to_repeat: true },
  });
}

export function getRun(db: SqliteDatabase, runId: string): Run {
  const row = db.prepare("SELECT * FROM runs WHERE id = ?").get(runId) as RunRow | undefined;
  if (!row) throw runNotFound(runId);
  return runFromRow(row);
}

/** Whether a run has that id. */
export function runExists(db: SqliteDatabase, runId: string): boolean {
  return db.prepare("SELECT 1 FROM runs WHERE id = ?").get(runId) !== undefined;
}

/** RUN_NOT_FOUND unless a run has that id (without reading the run: every evidence answer asks). */
export function assertRunExists(db: SqliteDatabase, runId: string): void {
  if (!runExists(db, runId)) throw runNotFound(runId);
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

/** What the runs list can be narrowed by; every field is optional and they combine with AND. */
export interface RunFilters {
  /** Case-insensitive substring of the title, run id, source, file name or workload. */
  text?: string;
  kind?: Run["kind"];
  status?: Run["status"];
  /** The source as recorded: an import's format, a capture's adapter. */
  source?: string;
  workload?: string;
  /** ISO times: created_at >= created_from and < created_before. */
  created_from?: string;
  created_before?: string;
}

/** The orders the runs list offers, each a total order (the id breaks ties) that keyset pages can resume. */
export const RUN_ORDERS = {
  newest: { columns: ["created_at", "id"], descending: true },
  oldest: { columns: ["created_at", "id"], descending: false },
  title: { columns: ["title COLLATE NOCASE", "id"], descending: false },
} as const;
export type RunOrder = keyof typeof RUN_ORDERS;

/** A keyset position: the order's key of a row, and whether rows after it or before it are wanted. */
export interface RunPosition {
  key: [string, string];
  direction: "after" | "before";
}

/** LIKE pattern for a substring, its wildcards escaped with a backslash. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const FILTER_SQL = `(@kind IS NULL OR kind = @kind) AND (@status IS NULL OR status = @status) AND (@source IS NULL OR source = @source)
  AND (@workload IS NULL OR json_extract(details, '$.workload') = @workload)
  AND (@created_from IS NULL OR created_at >= @created_from) AND (@created_before IS NULL OR created_at < @created_before)
  AND (@pattern IS NULL OR title LIKE @pattern ESCAPE '\\' OR id LIKE @pattern ESCAPE '\\' OR source LIKE @pattern ESCAPE '\\'
    OR json_extract(details, '$.file_name') LIKE @pattern ESCAPE '\\' OR json_extract(details, '$.workload') LIKE @pattern ESCAPE '\\')`;

function filterParameters(filters: RunFilters) {
  return {
    kind: filters.kind ?? null,
    status: filters.status ?? null,
    source: filters.source ?? null,
    workload: filters.workload ?? null,
    created_from: filters.created_from ?? null,
    created_before: filters.created_before ?? null,
    pattern: filters.text ? containsPattern(filters.text) : null,
  };
}

/**
 * Up to `limit` rows in `order` strictly after (or, walking back, before) `position`, from the
 * start when it is null. Rows before a position come back in the order's direction too.
 */
export function listRunRows(db: SqliteDatabase, filters: RunFilters, order: RunOrder, position: RunPosition | null, limit: number): Run[] {
  const { columns, descending } = RUN_ORDERS[order];
  const backwards = position?.direction === "before";
  // Walking back reverses the scan; the rows are put back in the order's direction below.
  const scanDescending = descending !== backwards;
  const keyColumns = `(${columns.join(", ")})`;
  const beyond = scanDescending ? "<" : ">";
  // The bound on the first column alone lets SQLite seek the NOCASE title index (not only scan it).
  const seek = position ? `AND ${columns[0]} ${beyond}= @key0 AND ${keyColumns} ${beyond} (@key0, @key1)` : "";
  const direction = scanDescending ? "DESC" : "ASC";
  const rows = db
    .prepare(`SELECT * FROM runs WHERE ${FILTER_SQL} ${seek} ORDER BY ${columns.map((c) => `${c} ${direction}`).join(", ")} LIMIT @limit`)
    .all({ ...filterParameters(filters), ...(position ? { key0: position.key[0], key1: position.key[1] } : {}), limit }) as RunRow[];
  const runs = rows.map(runFromRow);
  return backwards ? runs.reverse() : runs;
}

/** How many runs the filters match, in every page together. */
export function countRunRows(db: SqliteDatabase, filters: RunFilters): number {
  return (db.prepare(`SELECT count(*) AS n FROM runs WHERE ${FILTER_SQL}`).get(filterParameters(filters)) as { n: number }).n;
}

/** A run's key in `order` (what a keyset position holds). */
export function runOrderKey(run: Run, order: RunOrder): [string, string] {
  return [order === "title" ? run.title : run.created_at, run.run_id];
}

export interface RunFacets {
  /** Each source (format or adapter) with its kind and how many runs have it, most runs first. */
  sources: { source: string; kind: Run["kind"]; runs: number }[];
  workloads: { workload: string; runs: number }[];
  total: number;
}

/** The values the runs list can be filtered by, at most `limit` of each. */
export function runFacets(db: SqliteDatabase, limit: number): RunFacets {
  const sources = db
    .prepare("SELECT source, kind, count(*) AS runs FROM runs GROUP BY source, kind ORDER BY runs DESC, source LIMIT ?")
    .all(limit) as RunFacets["sources"];
  const workloads = db
    .prepare(
      `SELECT json_extract(details, '$.workload') AS workload, count(*) AS runs FROM runs
       WHERE json_extract(details, '$.workload') IS NOT NULL GROUP BY workload ORDER BY runs DESC, workload LIMIT ?`,
    )
    .all(limit) as RunFacets["workloads"];
  const total = (db.prepare("SELECT count(*) AS n FROM runs").get() as { n: number }).n;
  return { sources, workloads, total };
}
