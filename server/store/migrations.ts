import { EXPERIMENTS_MIGRATION } from "./migration-experiments";
import { WORKFLOW_EXPOSURES_MIGRATION } from "./migration-workflow-exposures";
import { WORKFLOW_RUNS_MIGRATION } from "./migration-workflow-runs";

/**
 * Forward-only, numbered migrations of the control store. Append; never edit a released entry.
 * `PRAGMA user_version` holds the applied version; `schema_migrations` keeps when each was applied.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial control store",
    sql: `
CREATE TABLE schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
) STRICT;

CREATE TABLE workspace_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('import', 'capture', 'extraction')),
  source TEXT NOT NULL,
  title TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  execution_state TEXT NOT NULL,
  capture_state TEXT NOT NULL,
  extraction_state TEXT NOT NULL,
  limitations TEXT NOT NULL DEFAULT '[]',
  details TEXT NOT NULL DEFAULT '{}',
  revision INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX runs_by_created ON runs (created_at DESC, id DESC);

CREATE TABLE run_revisions (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, revision)
) STRICT;

CREATE TABLE artifacts (
  id TEXT PRIMARY KEY CHECK (id GLOB 'sha256:*'),
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX artifacts_by_created ON artifacts (created_at DESC, id DESC);

CREATE TABLE registrations (
  id TEXT PRIMARY KEY,
  artifact_id TEXT NOT NULL REFERENCES artifacts (id),
  run_id TEXT NOT NULL REFERENCES runs (id),
  kind TEXT NOT NULL,
  producer TEXT NOT NULL,
  media_type TEXT NOT NULL,
  format TEXT,
  file_name TEXT,
  sensitivity TEXT NOT NULL CHECK (sensitivity IN ('normal', 'internal', 'sensitive')),
  created_at TEXT NOT NULL,
  UNIQUE (artifact_id, run_id, kind)
) STRICT;
CREATE INDEX registrations_by_artifact ON registrations (artifact_id);
CREATE INDEX registrations_by_run ON registrations (run_id);

CREATE TABLE generations (
  id TEXT PRIMARY KEY,
  artifact_id TEXT NOT NULL REFERENCES artifacts (id),
  run_id TEXT REFERENCES runs (id),
  extractor TEXT NOT NULL,
  extractor_version TEXT NOT NULL,
  evidence_schema_version INTEGER NOT NULL,
  limitations TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  UNIQUE (artifact_id, extractor, extractor_version)
) STRICT;

CREATE TABLE generation_files (
  generation_id TEXT NOT NULL REFERENCES generations (id),
  table_name TEXT NOT NULL,
  object_id TEXT NOT NULL CHECK (object_id GLOB 'sha256:*'),
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  row_count INTEGER NOT NULL CHECK (row_count >= 0),
  PRIMARY KEY (generation_id, table_name)
) STRICT;

CREATE TABLE commits (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL UNIQUE,
  parent_id TEXT REFERENCES commits (id),
  message TEXT NOT NULL,
  created_at TEXT NOT NULL,
  CHECK ((seq = 0) = (parent_id IS NULL))
) STRICT;

CREATE TABLE commit_generations (
  commit_id TEXT NOT NULL REFERENCES commits (id),
  generation_id TEXT NOT NULL REFERENCES generations (id),
  PRIMARY KEY (commit_id, generation_id)
) STRICT;

CREATE TABLE operations (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'cancelling', 'succeeded', 'failed', 'cancelled')),
  phase TEXT,
  progress_completed INTEGER,
  progress_total INTEGER,
  run_id TEXT REFERENCES runs (id),
  intent TEXT NOT NULL,
  intent_digest TEXT NOT NULL,
  result TEXT,
  error TEXT,
  lease_owner TEXT,
  lease_pid INTEGER,
  lease_process_start TEXT,
  lease_heartbeat_at TEXT,
  lease_expires_at TEXT,
  cancel_requested_at TEXT,
  revision INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX operations_by_state ON operations (state, created_at);

CREATE TABLE idempotency_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  intent_digest TEXT NOT NULL,
  operation_id TEXT NOT NULL REFERENCES operations (id),
  created_at TEXT NOT NULL,
  PRIMARY KEY (scope, key)
) STRICT;

CREATE TABLE plans (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  intent TEXT NOT NULL,
  intent_digest TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  consumed_at TEXT,
  operation_id TEXT REFERENCES operations (id),
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE audit_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  arguments_digest TEXT,
  result_code TEXT NOT NULL,
  duration_ms REAL,
  details TEXT NOT NULL DEFAULT '{}'
) STRICT;
`,
  },
  {
    version: 2,
    name: "worker registry",
    sql: `
CREATE TABLE workers (
  id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  process_start TEXT,
  mode TEXT NOT NULL CHECK (mode IN ('supervised', 'detached', 'inline')),
  started_at TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL,
  stopped_at TEXT
) STRICT;
CREATE INDEX operations_by_idempotency ON operations (intent_digest);
`,
  },
  {
    version: 3,
    name: "operation claims",
    // A claim names work that only one live operation may do at a time (extracting one artifact
    // with one extractor version); it lapses by itself when its operation ends.
    sql: `
ALTER TABLE operations ADD COLUMN claim TEXT;
CREATE UNIQUE INDEX operations_by_live_claim ON operations (claim) WHERE claim IS NOT NULL AND state IN ('queued', 'running', 'cancelling');
`,
  },
  {
    version: 4,
    name: "server registry",
    sql: `
CREATE TABLE servers (
  launch_id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  process_start TEXT,
  url TEXT NOT NULL,
  started_at TEXT NOT NULL,
  sign_in_code_hash TEXT,
  sign_in_code_expires_at TEXT
) STRICT;
`,
  },
  {
    version: 5,
    name: "investigations as notebooks",
    // Revisable records keep every revision's snapshot. Cells' commit_id has no foreign key: an
    // imported notebook may pin commits this workspace does not hold. Positions are fractional
    // keys (analysis/notebook/position.ts), unique per investigation, deleted cells included, so
    // a restored cell comes back where it was.
    sql: `
CREATE TABLE investigations (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  question TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'concluded', 'abandoned')),
  created_by_actor TEXT NOT NULL CHECK (created_by_actor IN ('person', 'agent')),
  created_by_client TEXT,
  imported TEXT,
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX investigations_by_created ON investigations (created_at DESC, id DESC);

CREATE TABLE investigation_revisions (
  investigation_id TEXT NOT NULL REFERENCES investigations (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (investigation_id, revision)
) STRICT;

CREATE TABLE cells (
  id TEXT PRIMARY KEY,
  investigation_id TEXT NOT NULL REFERENCES investigations (id),
  position TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT,
  content TEXT NOT NULL,
  commit_id TEXT,
  created_by_actor TEXT NOT NULL CHECK (created_by_actor IN ('person', 'agent')),
  created_by_client TEXT,
  deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX cells_by_position ON cells (investigation_id, position);
CREATE UNIQUE INDEX cells_by_live_name ON cells (investigation_id, name) WHERE name IS NOT NULL AND deleted = 0;

CREATE TABLE cell_revisions (
  cell_id TEXT NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (cell_id, revision)
) STRICT;

CREATE TABLE hypotheses (
  id TEXT PRIMARY KEY,
  investigation_id TEXT NOT NULL REFERENCES investigations (id),
  claim TEXT NOT NULL,
  prediction TEXT NOT NULL,
  refuted_by TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('open', 'supported', 'refuted', 'inconclusive')),
  created_by_actor TEXT NOT NULL CHECK (created_by_actor IN ('person', 'agent')),
  created_by_client TEXT,
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX hypotheses_by_investigation ON hypotheses (investigation_id, created_at, id);

CREATE TABLE hypothesis_revisions (
  hypothesis_id TEXT NOT NULL REFERENCES hypotheses (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (hypothesis_id, revision)
) STRICT;

CREATE TABLE findings (
  id TEXT PRIMARY KEY,
  investigation_id TEXT NOT NULL REFERENCES investigations (id),
  title TEXT NOT NULL,
  claim TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('observation', 'regression', 'improvement', 'root_cause', 'other')),
  evidence_level TEXT NOT NULL CHECK (evidence_level IN ('observed', 'derived', 'inferred')),
  assessment TEXT NOT NULL CHECK (assessment IN ('unassessed', 'supported', 'refuted', 'inconclusive')),
  lifecycle TEXT NOT NULL CHECK (lifecycle IN ('active', 'superseded', 'retracted')),
  superseded_by TEXT REFERENCES findings (id) DEFERRABLE INITIALLY DEFERRED,
  limitations TEXT NOT NULL,
  next_steps TEXT NOT NULL,
  evidence_refs TEXT NOT NULL,
  created_by_actor TEXT NOT NULL CHECK (created_by_actor IN ('person', 'agent')),
  created_by_client TEXT,
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((lifecycle = 'superseded') = (superseded_by IS NOT NULL))
) STRICT;
CREATE INDEX findings_by_investigation ON findings (investigation_id, created_at DESC, id DESC);
CREATE INDEX findings_by_created ON findings (created_at DESC, id DESC);

CREATE TABLE finding_revisions (
  finding_id TEXT NOT NULL REFERENCES findings (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (finding_id, revision)
) STRICT;

CREATE INDEX audit_events_by_target ON audit_events (target, seq);
`,
  },
  {
    version: 6,
    name: "workflows and reviewed tool contracts",
    // A tool contract is a person's review of what a tool does to the world (read or write);
    // the workflow compiler trusts it over a trace. A workflow's document is content-addressed in
    // the object store (object_id = sha256 of its canonical JSON); the row names its source and
    // numbers it per run (version 1, 2, … as compiles give new content). A generation keeps the
    // importer's metadata (a trace's runtime inputs, its time origin), which the compiler reads.
    sql: `
CREATE TABLE tool_contracts (
  tool TEXT PRIMARY KEY,
  side_effect TEXT NOT NULL CHECK (side_effect IN ('read', 'write')),
  note TEXT NOT NULL,
  reviewed_by TEXT NOT NULL,
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE tool_contract_revisions (
  tool TEXT NOT NULL REFERENCES tool_contracts (tool) ON DELETE CASCADE,
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (tool, revision)
) STRICT;

CREATE TABLE workflows (
  id TEXT PRIMARY KEY,
  object_id TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs (id),
  commit_id TEXT NOT NULL REFERENCES commits (id),
  version INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ready', 'blocked')),
  blocked_tools TEXT NOT NULL,
  node_count INTEGER NOT NULL,
  edge_count INTEGER NOT NULL,
  report TEXT NOT NULL,
  created_by_actor TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, version),
  UNIQUE (run_id, object_id)
) STRICT;
CREATE INDEX workflows_by_created ON workflows (created_at DESC, id DESC);

ALTER TABLE generations ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
`,
  },
  {
    version: 7,
    name: "runs library",
    // The runs page sorts by title and lists the sources and workloads runs have; these indexes
    // keep a page and those lists fast at tens of thousands of runs (the workload is in details).
    sql: `
CREATE INDEX runs_by_title ON runs (title COLLATE NOCASE, id);
CREATE INDEX runs_by_source ON runs (source, kind);
CREATE INDEX runs_by_workload ON runs (json_extract(details, '$.workload'));
`,
  },
  EXPERIMENTS_MIGRATION,
  {
    version: 9,
    name: "audit events indexed by target only where they name one",
    // Every tool call appends an audit row and most (reads) name no target: they need no entry in
    // an index read only by target (a query's `target = ?` implies NOT NULL, so it still serves).
    sql: `
DROP INDEX audit_events_by_target;
CREATE INDEX audit_events_by_target ON audit_events (target, seq) WHERE target IS NOT NULL;
`,
  },
  WORKFLOW_RUNS_MIGRATION,
  WORKFLOW_EXPOSURES_MIGRATION,
  {
    version: 12,
    name: "audit events keyed by rowid, without AUTOINCREMENT",
    // Every tool call appends an audit row; AUTOINCREMENT also rewrote `sqlite_sequence` on each
    // (about a third of the insert's cost). Rows are never deleted, so a plain INTEGER PRIMARY KEY
    // (max + 1) numbers them exactly as before.
    sql: `
CREATE TABLE audit_events_v12 (
  seq INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  arguments_digest TEXT,
  result_code TEXT NOT NULL,
  duration_ms REAL,
  details TEXT NOT NULL DEFAULT '{}'
) STRICT;
INSERT INTO audit_events_v12 (seq, at, actor, action, target, arguments_digest, result_code, duration_ms, details)
  SELECT seq, at, actor, action, target, arguments_digest, result_code, duration_ms, details FROM audit_events ORDER BY seq;
DROP TABLE audit_events;
ALTER TABLE audit_events_v12 RENAME TO audit_events;
CREATE INDEX audit_events_by_target ON audit_events (target, seq) WHERE target IS NOT NULL;
DELETE FROM sqlite_sequence WHERE name = 'audit_events';
`,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;
