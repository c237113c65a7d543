"use client";

import { SqlConsole } from "../sql/SqlConsole";
import type { FirstSqlAnswer } from "../sql/first-answer";

/**
 * The SQL view as a notebook-ready cell over one pinned commit, scoped to a run's generations: the
 * server engine answers first, then DuckDB-WASM in the page. `onRun` hears each query run (the run
 * page keeps it in its URL).
 */
export function SqlCell(props: { runId: string; commitId: string; initialSql?: string | null; initialPreset?: string; onSqlChange?: (sql: string) => void; onRun?: (sql: string) => void; first?: FirstSqlAnswer | null }) {
  return (
    <SqlConsole
      commitId={props.commitId}
      runId={props.runId}
      initialSql={props.initialSql}
      initialPreset={props.initialPreset ?? "hotspots"}
      onSqlChange={props.onSqlChange}
      onRun={props.onRun}
      first={props.first}
      compact
    />
  );
}

export default SqlCell;
