import type { Migration } from "./migrations";

/**
 * Workflows exposed as tools of Emberscope's own MCP server: a person's act, one row per workflow,
 * revisioned (every change's snapshot kept) and off by default. The row binds the exposure to the
 * workflow's content hash and to the reviewed contracts of its tools at that moment
 * (`contracts`: tool, revision, handler digest; `contracts_digest` over them), and keeps the
 * listing agents see (`listing`: description, input and output JSON schemas), so `tools/list`
 * reads one row per exposed workflow. A withdrawn exposure keeps its row; its name is free again.
 */
export const WORKFLOW_EXPOSURES_MIGRATION: Migration = {
  version: 11,
  name: "workflows exposed as MCP tools",
  sql: `
CREATE TABLE workflow_exposures (
  workflow_id TEXT PRIMARY KEY REFERENCES workflows (id),
  tool_name TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('exposed', 'withdrawn')),
  workflow_digest TEXT NOT NULL,
  contracts TEXT NOT NULL,
  contracts_digest TEXT NOT NULL,
  listing TEXT NOT NULL,
  note TEXT NOT NULL,
  changed_by TEXT NOT NULL,
  revision INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX workflow_exposures_by_tool ON workflow_exposures (tool_name) WHERE state = 'exposed';

CREATE TABLE workflow_exposure_revisions (
  workflow_id TEXT NOT NULL REFERENCES workflow_exposures (workflow_id),
  revision INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (workflow_id, revision)
) STRICT;
`,
};
