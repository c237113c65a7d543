import { openDuckDb, sqlString } from "../../server/evidence/duckdb";

/**
 * Runs one query in a fresh in-memory DuckDB and closes it: the rows as arrays and as JSON-ready
 * objects (tests read Parquet files back this way).
 */
export async function queryDuckDb(sql: string): Promise<{ rows: unknown[][]; objects: Record<string, unknown>[] }> {
  const { instance, connection } = await openDuckDb();
  try {
    const reader = await connection.runAndReadAll(sql);
    return { rows: reader.getRows(), objects: reader.getRowObjectsJson() as Record<string, unknown>[] };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * What DuckDB reads of a Parquet file, for comparing files written in different ways: its columns
 * and their types, and its rows in file order (a digest).
 */
export async function parquetContent(file: string): Promise<unknown> {
  const f = sqlString(file);
  const { objects } = await queryDuckDb(
    `SELECT (SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE SELECT * FROM read_parquet(${f}))) AS columns,
       (SELECT count(*) || ' ' || md5(coalesce(string_agg(to_json(t)::VARCHAR, chr(10) ORDER BY file_row_number), '')) FROM read_parquet(${f}, file_row_number = true) t) AS rows`,
  );
  return objects[0];
}

/**
 * Per row group and column, as "group rows column min max nulls": the statistics a file's footer
 * holds (what DuckDB skips row groups by), or (`from: "rows"`) those of the rows DuckDB reads in
 * each row group. A file whose statistics are right gives the same two. Our final files leave out
 * min and max of text chunks not dictionary-coded (mostly unique values), DuckDB's do not:
 * `uncodedText: "range optional"` leaves them out of the rows' statistics where the footer does.
 */
export async function rowGroupStatistics(file: string, from: "footer" | "rows", uncodedText: "range" | "range optional" = "range"): Promise<string[]> {
  const f = sqlString(file);
  const chunks = (await queryDuckDb(`SELECT row_group_id, row_group_num_rows, path_in_schema, stats_min_value, stats_max_value, stats_null_count, type = 'BYTE_ARRAY' AND NOT contains(encodings, 'DICTIONARY') FROM parquet_metadata(${f}) ORDER BY row_group_id, column_id`)).rows;
  const rangeless = new Set(chunks.filter((c) => uncodedText === "range optional" && c[6] === true && c[3] === null && c[4] === null).map((c) => `${String(c[0])} ${String(c[2])}`));
  if (from === "footer") return chunks.map((c) => c.slice(0, 6).map((v) => String(v ?? "-")).join(" "));
  const columns = [...new Set(chunks.map((c) => String(c[2])))];
  const groups = new Map(chunks.map((c) => [Number(c[0]), Number(c[1])]));
  const firstRows: string[] = [];
  let first = 0;
  for (const [group, rows] of groups) {
    firstRows.push(`(${group}, ${first}, ${rows})`);
    first += rows;
  }
  if (firstRows.length === 0) return [];
  const aggregates = columns.map((c) => `min("${c}")::VARCHAR, max("${c}")::VARCHAR, count(*) - count("${c}")`).join(", ");
  const rows = (
    await queryDuckDb(
      `SELECT g.id, g.n, ${aggregates} FROM read_parquet(${f}, file_row_number = true) t JOIN (VALUES ${firstRows.join(", ")}) g(id, first, n)
         ON t.file_row_number >= g.first AND t.file_row_number < g.first + g.n GROUP BY g.id, g.n ORDER BY g.id`,
    )
  ).rows;
  return rows.flatMap((r) =>
    columns.map((c, i) => {
      const ranged = !rangeless.has(`${String(r[0])} ${c}`);
      return [r[0], r[1], c, ranged ? (r[2 + 3 * i] ?? "-") : "-", ranged ? (r[3 + 3 * i] ?? "-") : "-", r[4 + 3 * i]].map(String).join(" ");
    }),
  );
}

/** A Parquet file's row groups' sizes, in order. */
export async function rowGroupSizes(file: string): Promise<number[]> {
  const { rows } = await queryDuckDb(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${sqlString(file)}) ORDER BY 1`);
  return rows.map((g) => Number(g[1]));
}

/** Per column of a Parquet file, in order, its encodings as the footer lists them ("A, B"; "A, B | C" when row groups differ). */
export async function columnEncodings(file: string): Promise<Record<string, string>> {
  const { rows } = await queryDuckDb(`SELECT path_in_schema, string_agg(DISTINCT encodings, ' | ') FROM parquet_metadata(${sqlString(file)}) GROUP BY 1 ORDER BY min(column_id)`);
  return Object.fromEntries(rows.map((r) => [String(r[0]), String(r[1])]));
}
