import type * as DuckDbApi from "@duckdb/node-api";
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import type * as DuckDbBindings from "@duckdb/node-bindings";
import { createRequire } from "node:module";

export interface DuckDbModules {
  api: typeof DuckDbApi;
  bindings: typeof DuckDbBindings;
}

let modules: Promise<DuckDbModules> | null = null;

/**
 * DuckDB's packages, loaded on first use: with the native library they take about 0.3 s to load,
 * which CLI commands that never touch evidence (and a large import's main thread, whose writer
 * runs on its own thread) should not pay. Both are CommonJS packages, required as such: imported
 * as ES modules, Node first scans each of their files for its exports (about 150 ms more CPU per
 * thread that loads them, measured with node-api 1.5).
 */
export function loadDuckDb(): Promise<DuckDbModules> {
  modules ??= Promise.resolve().then(() => {
    const require = createRequire(import.meta.url);
    return { api: require("@duckdb/node-api") as typeof DuckDbApi, bindings: require("@duckdb/node-bindings") as typeof DuckDbBindings };
  });
  return modules;
}

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
  const { api } = await loadDuckDb();
  const instance: DuckDBInstance = await api.DuckDBInstance.create(":memory:", config);
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
