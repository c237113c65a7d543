"use client";

export { SERVER_SQL_MAX_CHARS } from "../../analysis/evidence/sql-console";
import type { runSql } from "../../server/services/sql";
import { callQuery, errorDocumentOf } from "../home/trpc-client";
import type { QueryResult } from "./duckdb-session";

/** What the server engine answers with: a console result, and whether rows were left out. */
export type ServerAnswer = QueryResult & { truncated: boolean; seq: number; generations: string[] };

/** A failed answer: the typed error's message (DuckDB's own, line breaks kept) and its code. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * The same query over the same commit (and run scope) on the server's DuckDB (tRPC `sql.query`):
 * it answers in milliseconds while DuckDB-WASM still downloads and compiles in the page.
 */
export async function serverQuery(commitId: string, runId: string | null, sql: string): Promise<ServerAnswer> {
  try {
    const answer = await callQuery<typeof runSql>("sql.query", { commit_id: commitId, sql, ...(runId ? { run_id: runId } : {}) });
    return { columns: answer.columns, rows: answer.rows, ms: answer.ms, engine: answer.engine, engine_version: answer.engine_version, commit_id: answer.commit_id, truncated: answer.truncated, seq: answer.seq, generations: answer.generations };
  } catch (thrown) {
    const doc = errorDocumentOf(thrown);
    throw new EngineError(doc.message, doc.code);
  }
}
