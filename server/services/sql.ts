import type { DuckDBConnection } from "@duckdb/node-api";
import { z } from "zod";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { loadDuckDb, sqlString } from "../evidence/duckdb";
import { openEvidence } from "../evidence/engine";
import { RUNS_TABLE_COLUMNS, SERVER_SQL_MAX_CHARS } from "../../analysis/evidence/sql-console";
import { commitRuns, runGenerationIds, type CommitRun } from "./corpus";
import { defineService } from "./service";

/** Rows a console answer carries at most (the console shows 1,000; the rest is reported as truncated). */
export const SQL_MAX_ROWS = 5000;

/** The name the console shows for this engine. */
export const SERVER_ENGINE = "server" as const;

/**
 * Statements that shape one connection like the browser's session: a run's scope as temporary views
 * over the commit's (they shadow them for this connection only), and the `runs` table with titles.
 */
function scopeAndRuns(generations: string[] | null, runs: CommitRun[]) {
  return async (connection: DuckDBConnection) => {
    if (generations) {
      const list = generations.length ? generations.map(sqlString).join(", ") : null;
      for (const table of TABLE_NAMES) {
        await connection.run(`CREATE TEMP VIEW "${table}" AS SELECT * FROM memory.main."${table}" WHERE ${list ? `generation_id IN (${list})` : "false"}`);
      }
    }
    await connection.run(`CREATE TEMP TABLE runs (${RUNS_TABLE_COLUMNS.map((c) => `"${c}" VARCHAR`).join(", ")})`);
    const appender = await connection.createAppender("runs", "main", "temp");
    for (const run of runs) {
      for (const column of RUNS_TABLE_COLUMNS) appender.appendVarchar(run[column]);
      appender.endRow();
    }
    appender.closeSync();
  };
}

export const runSql = defineService({
  name: "sql.query",
  summary:
    "Runs a person's read-only SQL (SELECT and EXPLAIN only) over a pinned commit's evidence tables and its `runs` table (titles), optionally scoped to one run's generations, on the server's DuckDB: the same tables the browser's DuckDB-WASM console registers, so the console shows this answer while its own engine starts. Never offered to agents.",
  kind: "query",
  input: z
    .object({
      commit_id: z.string().min(1).max(128).default("HEAD").describe('The commit to read; "HEAD" by default.'),
      run_id: z.string().min(1).max(128).optional().describe("Scope the evidence tables to this run's generations in the commit, as the run page's SQL tab does."),
      sql: z.string().min(1).max(SERVER_SQL_MAX_CHARS).describe("One or more SELECT or EXPLAIN statements; the last one's rows are returned."),
    })
    .strict(),
  output: z.object({
    commit_id: z.string(),
    seq: z.number().int(),
    run_id: z.string().nullable(),
    generations: z.array(z.string()).describe("The generations the evidence tables hold (the run's, or every one in the commit)."),
    columns: z.array(z.object({ name: z.string(), type: z.string() })),
    rows: z.array(z.record(z.string(), z.unknown())),
    truncated: z.boolean().describe(`More than ${SQL_MAX_ROWS} rows matched; only the first ${SQL_MAX_ROWS} are returned.`),
    ms: z.number(),
    engine: z.literal(SERVER_ENGINE),
    engine_version: z.string(),
  }),
  handler: async (input, { ws }) => {
    const started = performance.now();
    const reader = await openEvidence(ws, input.commit_id);
    const commit = reader.commit;
    const generations = input.run_id ? runGenerationIds(ws, commit, input.run_id) : null;
    const answer = await reader.adHoc(input.sql, scopeAndRuns(generations, commitRuns(ws, commit)), SQL_MAX_ROWS);
    const { api } = await loadDuckDb();
    return {
      commit_id: commit.commit_id,
      seq: commit.seq,
      run_id: input.run_id ?? null,
      generations: generations ?? commit.generations.map((g) => g.generation_id),
      ...answer,
      ms: performance.now() - started,
      engine: SERVER_ENGINE,
      engine_version: `DuckDB ${api.version()} (node-api)`,
    };
  },
});
