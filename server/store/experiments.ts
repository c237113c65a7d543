import { EmberscopeError } from "../domain/errors";
import type { Experiment, Trial } from "../domain/experiment";
import { nowIso } from "../domain/ids";
import type { SqliteDatabase } from "./control-store";
import { authorOf, type AuthorColumns } from "./investigations";
import { compareAndSet, listRevisions, recordRevision, type CasSpec } from "./revisions";

/** Experiments (revisable) and their trials (one row per planned position, written as it runs). */

interface ExperimentRow extends AuthorColumns {
  id: string;
  investigation_id: string;
  hypothesis_id: string | null;
  title: string;
  design: string;
  state: Experiment["state"];
  operation_id: string | null;
  analysis: string | null;
  commit_id: string | null;
  revision: number;
  created_at: string;
  updated_at: string;
}

function fromRow(row: ExperimentRow): Experiment {
  return {
    experiment_id: row.id,
    investigation_id: row.investigation_id,
    hypothesis_id: row.hypothesis_id,
    title: row.title,
    design: JSON.parse(row.design) as Experiment["design"],
    state: row.state,
    operation_id: row.operation_id,
    analysis: row.analysis ? (JSON.parse(row.analysis) as Experiment["analysis"]) : null,
    commit_id: row.commit_id,
    created_by: authorOf(row),
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const REVISIONS = { table: "experiment_revisions", key: "experiment_id" };

export function experimentNotFound(id: string): EmberscopeError {
  return new EmberscopeError("EXPERIMENT_NOT_FOUND", "No experiment has that id.", {
    details: { experiment_id: id },
    recovery: { operation: "experiments.list", arguments: {}, safe_to_repeat: true },
  });
}

export function findExperiment(db: SqliteDatabase, id: string): Experiment | null {
  const row = db.prepare("SELECT * FROM experiments WHERE id = ?").get(id) as ExperimentRow | undefined;
  return row ? fromRow(row) : null;
}

export function getExperiment(db: SqliteDatabase, id: string): Experiment {
  const found = findExperiment(db, id);
  if (!found) throw experimentNotFound(id);
  return found;
}

export function insertExperiment(db: SqliteDatabase, e: Experiment): void {
  db.prepare(
    `INSERT INTO experiments (id, investigation_id, hypothesis_id, title, design, state, operation_id, analysis, commit_id, created_by_actor, created_by_client, revision, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(e.experiment_id, e.investigation_id, e.hypothesis_id, e.title, JSON.stringify(e.design), e.state, e.operation_id, e.analysis ? JSON.stringify(e.analysis) : null, e.commit_id, e.created_by.actor, e.created_by.client, e.revision, e.created_at, e.updated_at);
  recordRevision(db, REVISIONS, e.experiment_id, e);
}

const CAS: CasSpec<Experiment> = {
  noun: "experiment",
  idKey: "experiment_id",
  revisions: REVISIONS,
  read: getExperiment,
  write: (db, next, expected) =>
    db
      .prepare("UPDATE experiments SET title = ?, state = ?, operation_id = ?, analysis = ?, commit_id = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?")
      .run(next.title, next.state, next.operation_id, next.analysis ? JSON.stringify(next.analysis) : null, next.commit_id, next.revision, next.updated_at, next.experiment_id, expected).changes,
  reread: (current) => ({ operation: "experiments.get", arguments: { experiment_id: current.experiment_id }, safe_to_repeat: true }),
};

export type ExperimentPatch = Partial<Pick<Experiment, "title" | "state" | "operation_id" | "analysis" | "commit_id">>;

export function updateExperiment(db: SqliteDatabase, id: string, expected: number, change: (current: Experiment) => ExperimentPatch): Experiment {
  return compareAndSet(db, CAS, id, expected, change);
}

/** Changes the experiment as it is now (the runner is its only writer while it runs). */
export function patchExperiment(db: SqliteDatabase, id: string, patch: ExperimentPatch): Experiment {
  return updateExperiment(db, id, getExperiment(db, id).revision, () => patch);
}

export function experimentRevisions(db: SqliteDatabase, id: string, beforeRevision: number | null, limit: number): Experiment[] {
  return listRevisions<Experiment>(db, REVISIONS, id, beforeRevision, limit);
}

/** Newest first, keyset after (created_at, id), optionally of one investigation. */
export function listExperimentRows(db: SqliteDatabase, filters: { investigation_id?: string }, after: [string, string] | null, limit: number): Experiment[] {
  const rows = db
    .prepare(
      `SELECT * FROM experiments
       WHERE (@inv IS NULL OR investigation_id = @inv)
         AND (@after_at IS NULL OR (created_at, id) < (@after_at, @after_id))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    )
    .all({ inv: filters.investigation_id ?? null, after_at: after?.[0] ?? null, after_id: after?.[1] ?? null, limit }) as ExperimentRow[];
  return rows.map(fromRow);
}

interface TrialRow {
  trial_index: number;
  block: number;
  block_order: number;
  variant: string;
  warmup: number;
  run_id: string | null;
  value: number | null;
  outcome: Trial["outcome"];
  failure: string | null;
  started_at: string | null;
  ended_at: string | null;
}

function trialOf(row: TrialRow): Trial {
  return {
    index: row.trial_index,
    block: row.block,
    order: row.block_order,
    variant: row.variant,
    warmup: row.warmup === 1,
    run_id: row.run_id,
    value: row.value,
    outcome: row.outcome,
    failure: row.failure ? (JSON.parse(row.failure) as Trial["failure"]) : null,
    started_at: row.started_at,
    ended_at: row.ended_at,
  };
}

export function insertTrials(db: SqliteDatabase, experimentId: string, trials: readonly { index: number; block: number; order: number; variant: string; warmup: boolean }[]): void {
  const insert = db.prepare("INSERT INTO experiment_trials (experiment_id, trial_index, block, block_order, variant, warmup, outcome) VALUES (?, ?, ?, ?, ?, ?, 'pending')");
  for (const t of trials) insert.run(experimentId, t.index, t.block, t.order, t.variant, t.warmup ? 1 : 0);
}

/** Every trial in run order. */
export function listTrials(db: SqliteDatabase, experimentId: string): Trial[] {
  return (db.prepare("SELECT * FROM experiment_trials WHERE experiment_id = ? ORDER BY trial_index").all(experimentId) as TrialRow[]).map(trialOf);
}

/** A trial starts: its run is named (a retried trial gets a new run; the interrupted one stays failed). */
export function startTrial(db: SqliteDatabase, experimentId: string, index: number, runId: string): void {
  db.prepare("UPDATE experiment_trials SET run_id = ?, started_at = ?, ended_at = NULL WHERE experiment_id = ? AND trial_index = ? AND outcome = 'pending'").run(runId, nowIso(), experimentId, index);
}

export function finishTrial(db: SqliteDatabase, experimentId: string, index: number, outcome: { value: number } | { failure: { code: string; message: string } }): void {
  const ok = "value" in outcome;
  db.prepare("UPDATE experiment_trials SET outcome = ?, value = ?, failure = ?, ended_at = ? WHERE experiment_id = ? AND trial_index = ? AND outcome = 'pending'").run(
    ok ? "ok" : "failed",
    ok ? outcome.value : null,
    ok ? null : JSON.stringify(outcome.failure),
    nowIso(),
    experimentId,
    index,
  );
}

/** Up to `limit` trials after run-order position `afterIndex` (-1: from the first). */
export function listTrialsAfter(db: SqliteDatabase, experimentId: string, afterIndex: number, limit: number): Trial[] {
  return (db.prepare("SELECT * FROM experiment_trials WHERE experiment_id = ? AND trial_index > ? ORDER BY trial_index LIMIT ?").all(experimentId, afterIndex, limit) as TrialRow[]).map(trialOf);
}

/** How many trials are in each outcome. */
export function countTrials(db: SqliteDatabase, experimentId: string): { total: number; ok: number; failed: number; pending: number } {
  const rows = db.prepare("SELECT outcome, count(*) AS n FROM experiment_trials WHERE experiment_id = ? GROUP BY outcome").all(experimentId) as { outcome: Trial["outcome"]; n: number }[];
  const counts = { total: 0, ok: 0, failed: 0, pending: 0 };
  for (const r of rows) {
    counts[r.outcome] = r.n;
    counts.total += r.n;
  }
  return counts;
}
