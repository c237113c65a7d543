import type { Migration } from "./migrations";

/**
 * Experiments and their trials. An experiment is a revisable record (its design is fixed when
 * planned; its state, operation and analysis change as it runs); trials are rows written as they
 * run, one per planned position in run order, kept whatever their outcome.
 */
export const EXPERIMENTS_MIGRATION: Migration = {
  version: 8,
  name: "experiments and trials",
  sql: `
CREATE TABLE experiments (
  id TEXT PRIMARY KEY,
  investigation_id TEXT NOT NULL REFERENCES investigations (id),
  hypothesis_id TEXT REFERENCES hypotheses (id),
  title TEXT NOT NULL,
  design TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('planned', 'running', 'completed', 'interrupted', 'cancelled', 'failed')),
  operation_id TEXT REFERENCES operations (id),
  analysis TEXT,
  commit_id TEXT,
  created_by_actor TEXT NOT NULL CHECK (created_by_actor IN ('person', 'agent')),
  created_by_client TEXT,
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX experiments_by_created ON experiments (created_at DESC, id DESC);
CREATE INDEX experiments_by_investigation ON experiments (investigation_id, created_at DESC, id DESC);

CREATE TABLE experiment_revisions (
  experiment_id TEXT NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (experiment_id, revision)
) STRICT;

CREATE TABLE experiment_trials (
  experiment_id TEXT NOT NULL REFERENCES experiments (id),
  trial_index INTEGER NOT NULL CHECK (trial_index >= 0),
  block INTEGER NOT NULL,
  block_order INTEGER NOT NULL CHECK (block_order >= 0),
  variant TEXT NOT NULL,
  warmup INTEGER NOT NULL CHECK (warmup IN (0, 1)),
  run_id TEXT REFERENCES runs (id),
  value REAL,
  outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'ok', 'failed')),
  failure TEXT,
  started_at TEXT,
  ended_at TEXT,
  PRIMARY KEY (experiment_id, trial_index),
  CHECK ((outcome = 'ok') = (value IS NOT NULL)),
  CHECK ((outcome = 'failed') = (failure IS NOT NULL))
) STRICT;
`,
};
