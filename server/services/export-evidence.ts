import type { DuckDBConnection } from "@duckdb/node-api";
import { TABLES, type ColumnSpec } from "../../analysis/evidence/schema";
import type { ExportRedaction } from "../../analysis/redaction";
import { sqlString } from "../evidence/duckdb";

/**
 * One evidence file as an export carries it: every text column rewritten through the export's
 * redaction (distinct values once each, each mapped back by a join), written anew by DuckDB with
 * ZSTD — so dictionaries, page statistics (min/max) and bloom filters are built from the
 * redacted values and nothing of the original file's bytes is copied. Row order is kept.
 */

/** Text columns that are identifiers of the evidence itself (hashes and ids), never observed text. */
const VERBATIM_COLUMNS = new Set(["generation_id", "frame_key"]);

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function rewriteEvidenceFile(
  connection: DuckDBConnection,
  options: { source: string; target: string; table: string; redaction: ExportRedaction },
): Promise<{ rows: number }> {
  const { source, target, table, redaction } = options;
  await connection.run(`CREATE OR REPLACE TABLE src AS SELECT * FROM read_parquet(${sqlString(source)}, file_row_number = true)`);
  const described = (await connection.runAndReadAll("SELECT column_name, column_type AS data_type FROM (DESCRIBE src)")).getRowObjectsJS() as { column_name: string; data_type: string }[];
  const known = new Map(((TABLES as Record<string, readonly ColumnSpec[]>)[table] ?? []).map((c) => [c.name, c]));
  const textColumns = described.filter((c) => c.data_type === "VARCHAR" && !VERBATIM_COLUMNS.has(c.column_name)).map((c) => c.column_name);
  const joins: string[] = [];
  const replaced: string[] = [];
  for (const [i, column] of textColumns.entries()) {
    const rows = (
      await connection.runAndReadAll(`SELECT ${quoted(column)} AS value, count(*)::BIGINT AS times, min(file_row_number)::BIGINT AS row FROM src WHERE ${quoted(column)} IS NOT NULL GROUP BY 1`)
    ).getRowObjectsJS() as { value: string; times: bigint; row: bigint }[];
    const json = column === "args" || column === "dimensions" || (known.get(column)?.description ?? "").includes("JSON");
    const mapped = redaction.distinct(
      rows.map((r) => ({ value: r.value, times: Number(r.times), row: Number(r.row) })),
      `${table}.${column}`,
      json,
    );
    const map = `map_${i}`;
    await connection.run(`CREATE OR REPLACE TABLE ${map} (original VARCHAR, redacted VARCHAR)`);
    const appender = await connection.createAppender(map);
    for (const [original, redacted] of mapped) {
      appender.appendVarchar(original);
      appender.appendVarchar(redacted);
      appender.endRow();
    }
    appender.closeSync();
    joins.push(`LEFT JOIN ${map} ON ${map}.original = src.${quoted(column)}`);
    replaced.push(`${map}.redacted AS ${quoted(column)}`);
  }
  const select = replaced.length ? `src.* EXCLUDE (file_row_number) REPLACE (${replaced.join(", ")})` : "src.* EXCLUDE (file_row_number)";
  await connection.run(
    `COPY (SELECT ${select} FROM src ${joins.join(" ")} ORDER BY src.file_row_number) TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000000)`,
  );
  const count = (await connection.runAndReadAll("SELECT count(*)::BIGINT AS n FROM src")).getRowObjectsJS()[0] as { n: bigint };
  await connection.run("DROP TABLE src");
  for (let i = 0; i < textColumns.length; i++) await connection.run(`DROP TABLE map_${i}`);
  return { rows: Number(count.n) };
}
