import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";

/**
 * The one place that opens DuckDB. Every instance is in-memory (DuckDB is derived, never
 * authoritative), with bounded memory and threads and no extension install or autoload.
 * Readers additionally confine file access to an explicit list of Parquet files.
 */
export interface DuckDbOptions {
  memoryLimit?: string;
  threads?: number;
  /** Spill directory for large writes (inside the workspace's tmp/). */
  tempDirectory?: string;
}

export async function openDuckDb(options: DuckDbOptions = {}): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const config: Record<string, string> = {
    threads: String(options.threads ?? 2),
    memory_limit: options.memoryLimit ?? "1GB",
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  };
  if (options.tempDirectory) config.temp_directory = options.tempDirectory;
  const instance = await DuckDBInstance.create(":memory:", config);
  const connection = await instance.connect();
  return { instance, connection };
}

/** Quotes a string as a SQL literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * Locks a reader down: only the listed files stay readable, external access and configuration
 * changes are off from here on (secrets and extensions are never loaded).
 */
export async function confineToFiles(connection: DuckDBConnection, files: string[]): Promise<void> {
  await connection.run(`SET allowed_paths = [${files.map(sqlString).join(", ")}]`);
  await connection.run("SET enable_external_access = false");
  await connection.run("SET lock_configuration = true");
}
