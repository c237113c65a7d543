import type { z } from "zod";

/**
 * An evidence query: SQL text over the views frames, stacks, metrics, samples, tracks, spans,
 * edges, measurements (one pinned commit), with `$name` placeholders filled from validated
 * parameters. The same definition runs on DuckDB (server) and DuckDB-WASM (browser), so the SQL
 * sticks to portable DuckDB: no extensions, no file functions.
 */
export interface EvidenceQuery<P extends z.ZodType, R extends z.ZodType> {
  name: string;
  description: string;
  params: P;
  row: R;
  sql: string;
}

export function defineQuery<P extends z.ZodType, R extends z.ZodType>(query: EvidenceQuery<P, R>): EvidenceQuery<P, R> {
  return query;
}

/** A value as a SQL literal: strings quoted, numbers checked finite, arrays as DuckDB lists. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error("non-finite number in query parameters");
    return Number.isInteger(value) ? String(value) : value.toString();
  }
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return `'${value.replaceAll("'", "''")}'`;
  if (Array.isArray(value)) return value.length ? `[${value.map(sqlLiteral).join(", ")}]` : "[]::VARCHAR[]";
  throw new Error(`unsupported query parameter type ${typeof value}`);
}

/** Fills `$name` placeholders (longest names first, so $limit never eats $limit_x). */
export function renderSql(sql: string, params: Record<string, unknown>): string {
  return sql.replace(/\$([a-z_][a-z0-9_]*)/gi, (match, name: string) => {
    if (!(name in params)) throw new Error(`query parameter $${name} is missing`);
    return sqlLiteral(params[name]);
  });
}
