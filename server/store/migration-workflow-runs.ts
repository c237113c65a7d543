import type { Migration } from "./migrations";

/**
 * Workflows that run. A reviewed tool contract now binds the tool's name to the exact code that
 * was registered when a person reviewed it (`handler`, `handler_digest`) and to what that code
 * declared (`binding`: its input and output JSON schemas, timeout, concurrency); null for a review
 * made before the tool was registered (it still informs the compiler, but never lets code run).
 * An approval is a person's act allowing one side-effecting tool in one workflow; revoking keeps
 * the row. A workflow run is one replay (frozen, controlled or live) or one benchmark, held by an
 * operation; its summary says what ran, failed and was skipped.
 */
export const WORKFLOW_RUNS_MIGRATION: Migration = {
  version: 10,
  name: "tool contracts bound to handlers, workflow approvals and runs",
  sql: `
ALTER TABLE tool_contracts ADD COLUMN handler TEXT;
ALTER TABLE tool_contracts ADD COLUMN handler_digest TEXT;
ALTER TABLE tool_contracts ADD COLUMN binding TEXT;

CREATE TABLE workflow_approvals (
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  tool TEXT NOT NULL,
  workflow_digest TEXT NOT NULL,
  note TEXT NOT NULL,
  approved_by TEXT NOT NULL,
  approved_at TEXT NOT NULL,
  revoked_at TEXT,
  PRIMARY KEY (workflow_id, tool)
) STRICT;

CREATE TABLE workflow_runs (
  id TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  operation_id TEXT NOT NULL REFERENCES operations (id),
  kind TEXT NOT NULL CHECK (kind IN ('run', 'benchmark')),
  mode TEXT NOT NULL CHECK (mode IN ('frozen', 'controlled', 'live')),
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  summary TEXT,
  replay_run_id TEXT REFERENCES runs (id),
  created_by_actor TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX workflow_runs_by_workflow ON workflow_runs (workflow_id, created_at DESC, id DESC);
`,
};
