/**
 * What the SQL consoles' two engines (the server's DuckDB, tRPC `sql.query`, and DuckDB-WASM in the
 * page) share beyond the evidence tables, so that the same text answers with the same rows on both.
 */

/**
 * The `runs` table: one row per run and generation a commit holds, so evidence joins to run titles
 * `USING (generation_id)`. Every column is text, on both engines.
 */
export const RUNS_TABLE_COLUMNS = ["run_id", "title", "kind", "source", "status", "created_at", "generation_id"] as const;

export type RunsTableRow = Record<(typeof RUNS_TABLE_COLUMNS)[number], string>;

/**
 * The longest SQL the server engine takes: tRPC queries carry their input in a GET's URL, which
 * Node bounds at 16 KB of request head. Longer text runs in DuckDB-WASM only.
 */
export const SERVER_SQL_MAX_CHARS = 6000;
