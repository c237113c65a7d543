"use client";

import { SqlConsole } from "../sql/SqlConsole";

/**
 * The SQL view as a notebook-ready cell over one pinned commit, scoped to a run's generations: the
 * server engine answers first, then DuckDB-WASM in the page. `onRun` hears each query run (the run
 * page keeps it in its URL).
 */
export function SqlCell(props: { runId: string; commitId: string; initialSql?: string | null; initialPreset?: string; onSqlChange?: (sql: string) => void; onRun?: (sql: string) => void }) {
  return (
    <SqlConsole
      commitId={props.commitId}
      runId={props.runId}
      initialSql={props.initialSql}
      initialPreset={props.initialPreset ?? "hotspots"}
      onSqlChange={props.onSqlChange}
      onRun={props.onRun}
      compact
    />
  );
}

export default SqlCell;
