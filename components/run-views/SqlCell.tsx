"use client";

import { SqlConsole } from "../sql/SqlConsole";

/** The SQL view as a notebook-ready cell: DuckDB-WASM over one pinned commit, scoped to a run's generations. */
export function SqlCell(props: { runId: string; commitId: string; initialSql?: string; initialPreset?: string; onSqlChange?: (sql: string) => void }) {
  return <SqlConsole commitId={props.commitId} runId={props.runId} initialSql={props.initialSql} initialPreset={props.initialPreset ?? "hotspots"} onSqlChange={props.onSqlChange} compact />;
}

export default SqlCell;
