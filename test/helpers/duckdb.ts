import { openDuckDb } from "../../server/evidence/duckdb";

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
