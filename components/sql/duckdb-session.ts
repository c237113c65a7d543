"use client";

import { loadEngine, mark } from "./engine";
import { TABLES, TABLE_NAMES, type ColumnSpec } from "../../analysis/evidence/schema";
import { RUNS_TABLE_COLUMNS, type RunsTableRow } from "../../analysis/evidence/sql-console";
import { parquetFileToArrowIpc } from "./parquet-to-arrow";
import type { listCorpusFiles } from "../../server/services/corpus";
import { callQuery } from "../home/trpc-client";

/**
 * DuckDB-WASM over one pinned commit: the app serves the engine (public/duckdb/, copied at build)
 * and each Parquet file at an immutable content-addressed URL; the browser reads the commit's files
 * with range requests into the evidence tables (frames, stacks, …). Loaded only in the browser.
 * The engine itself (worker + wasm) is started by ./engine.ts.
 */
export const ENGINE = "duckdb-wasm";

/** How the consoles and the notebook name an engine to the person. */
export function engineLabel(engine: string): string {
  return engine === ENGINE ? "DuckDB-WASM" : engine;
}

/**
 * Where a notebook's named SQL cells keep their results as tables: on every session's search path
 * after the commit's evidence tables, so any cell reads `FROM hot` whatever commit it pins.
 */
export const NOTEBOOK_SCHEMA = "notebook";

export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  ms: number;
  engine: string;
  engine_version: string;
  commit_id: string;
}

export interface CommitSession {
  commitId: string;
  seq: number;
  /** Generations of the run (when one was named), else every generation in the commit. */
  generations: string[];
  runId: string | null;
  fileCount: number;
  engineVersion: string;
  query(sql: string): Promise<QueryResult>;
}

const sessions = new Map<string, Promise<CommitSession>>();

/** Arrow values as plain JSON-like values (lists as arrays, 64-bit integers as numbers). */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") {
    const v = value as { toArray?: () => unknown[]; toJSON?: () => unknown };
    if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>, (x) => plain(x));
    if (typeof v.toArray === "function") return Array.from(v.toArray(), plain);
    if (typeof v.toJSON === "function") return plain(v.toJSON());
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, plain(x)]));
  }
  return value;
}

/** Tables named after FROM or JOIN are materialized before a query; others when DuckDB reports them missing. */
const TABLE_PATTERN = new RegExp(`\\b(?:from|join)\\s+"?(${TABLE_NAMES.join("|")})\\b`, "gi");
const MISSING_TABLE = new RegExp(`Table with name "?(${TABLE_NAMES.join("|")})"? does not exist`, "i");

/** Tables up to this many bytes of Parquet are decoded while the engine is still starting. */
const PREFETCH_BYTES = 256 * 1024;

type TableName = (typeof TABLE_NAMES)[number];

/** The commit's runs with their titles as the `runs` table, as the server engine has it (titles as of the session's start). */
async function createRunsTable(connection: { query(sql: string): Promise<unknown> }, schema: string, runs: readonly RunsTableRow[]): Promise<void> {
  const text = (value: string) => `'${value.replaceAll("'", "''")}'`;
  await connection.query(`CREATE TABLE IF NOT EXISTS ${schema}.runs (${RUNS_TABLE_COLUMNS.map((c) => `"${c}" VARCHAR`).join(", ")})`);
  for (let i = 0; i < runs.length; i += 500) {
    const values = runs.slice(i, i + 500).map((run) => `(${RUNS_TABLE_COLUMNS.map((c) => text(run[c])).join(", ")})`);
    await connection.query(`INSERT INTO ${schema}.runs VALUES ${values.join(", ")}`);
  }
}

async function createSession(commitRef: string, runId: string | null, wanted: readonly string[]): Promise<CommitSession> {
  const engineReady = loadEngine();
  const listing = await callQuery<typeof listCorpusFiles>("corpus.files", { commit_id: commitRef, ...(runId ? { run_id: runId } : {}) });
  mark("session-listing");
  const schema = `commit_${listing.commit_id.replace(/[^A-Za-z0-9_]/g, "_")}${runId ? `_${runId.replace(/[^A-Za-z0-9_]/g, "_")}` : ""}`;
  const generations = listing.run_generations ?? listing.generations.map((g) => g.generation_id);
  // A run-scoped session holds only that run's files; a commit-wide one holds every file of the commit.
  const scope = new Set(generations);
  const files = listing.files.filter((f) => scope.has(f.generation_id));
  // Parquet → Arrow IPC per table, on the main thread; cached until the table is inserted.
  const decoded = new Map<TableName, Promise<{ file: (typeof files)[number]; ipc: Uint8Array }[]>>();
  const decode = (table: TableName) => {
    let done = decoded.get(table);
    if (!done) {
      const spec = [...(TABLES[table] as readonly ColumnSpec[])];
      done = (async () => {
        const out = [];
        for (const file of files.filter((f) => f.table === table)) {
          const { ipc } = await parquetFileToArrowIpc(new URL(file.url, window.location.href).href, file.size_bytes, spec);
          out.push({ file, ipc });
        }
        mark(`table-${table}-decoded`);
        return out;
      })();
      decoded.set(table, done);
      done.catch(() => decoded.delete(table));
    }
    return done;
  };
  // While the wasm compiles in the worker, the main thread is mostly idle: decode the small tables
  // now (smallest first; the first queries read metrics and spans), so they only need inserting.
  const bytes = new Map<TableName, number>();
  for (const f of files) bytes.set(f.table as TableName, (bytes.get(f.table as TableName) ?? 0) + f.size_bytes);
  // Tables the caller said its queries read come first, whatever their size (a notebook knows).
  const first = TABLE_NAMES.filter((t) => wanted.includes(t) && bytes.has(t));
  const small = [...bytes].filter(([t, b]) => b <= PREFETCH_BYTES && !first.includes(t)).sort((a, b) => a[1] - b[1]).map(([t]) => t);
  void (async () => {
    for (const table of [...first, ...small]) await decode(table).catch(() => undefined);
  })();
  const { db, version } = await engineReady;
  const connection = await db.connect();
  await connection.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await connection.query(`CREATE SCHEMA IF NOT EXISTS ${NOTEBOOK_SCHEMA}`);
  await connection.query(`SET search_path = '${schema},${NOTEBOOK_SCHEMA}'`);
  await createRunsTable(connection, schema, listing.runs);
  mark("session-connected");
  // Tables are materialized on first use: a query reading only frames never downloads samples.
  const loaded = new Map<string, Promise<void>>();
  const materialize = (table: TableName) => {
    let done = loaded.get(table);
    if (!done) {
      done = (async () => {
        const spec = TABLES[table] as readonly ColumnSpec[];
        const parts: string[] = [];
        for (const [i, { file, ipc }] of (await decode(table)).entries()) {
          const name = `${table}__${i}`;
          await connection.insertArrowFromIPCStream(ipc, { name, schema, create: true });
          parts.push(`SELECT '${file.generation_id.replace(/[^a-z0-9_]/g, "")}' AS generation_id, * FROM ${schema}."${name}"`);
        }
        decoded.delete(table);
        if (parts.length) {
          await connection.query(`CREATE OR REPLACE VIEW ${schema}."${table}" AS ${parts.join(" UNION ALL BY NAME ")}`);
        } else {
          const columns = ["generation_id VARCHAR", ...spec.map((c) => `"${c.name}" ${c.type}`)].join(", ");
          await connection.query(`CREATE TABLE IF NOT EXISTS ${schema}."${table}" (${columns})`);
        }
        mark(`table-${table}-inserted`);
      })();
      loaded.set(table, done);
      done.catch(() => loaded.delete(table));
    }
    return done;
  };
  let queue: Promise<unknown> = Promise.resolve();
  return {
    commitId: listing.commit_id,
    seq: listing.seq,
    generations,
    runId,
    fileCount: files.length,
    engineVersion: version,
    query(sql: string) {
      // One connection per session runs one statement at a time.
      const run = queue.then(async () => {
        const start = performance.now();
        const tables = new Set([...sql.matchAll(TABLE_PATTERN)].map((m) => m[1].toLowerCase() as TableName));
        for (const table of tables) await materialize(table);
        let table;
        for (let attempt = 0; ; attempt++) {
          try {
            table = await connection.query(sql);
            break;
          } catch (error) {
            const missing = MISSING_TABLE.exec(error instanceof Error ? error.message : String(error));
            if (!missing || attempt >= TABLE_NAMES.length) throw error;
            await materialize(missing[1].toLowerCase() as TableName);
          }
        }
        const ms = performance.now() - start;
        mark("query-answered");
        const columns = table.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
        const rows = table.toArray().map((row) => {
          const record = (row as { toJSON(): Record<string, unknown> }).toJSON();
          return Object.fromEntries(columns.map((col) => [col.name, plain(record[col.name])]));
        });
        return { columns, rows, ms, engine: ENGINE, engine_version: version, commit_id: listing.commit_id } satisfies QueryResult;
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

/** The session of a commit (and optionally a run in it); sessions are cached, commits never change. */
/**
 * `tables`: evidence tables the caller's queries will read, decoded while the engine starts; only
 * the first open of a session can say (later ones share it).
 */
export function openCommitSession(commitRef: string, runId: string | null = null, tables: readonly string[] = []): Promise<CommitSession> {
  const key = `${commitRef}\u0000${runId ?? ""}`;
  let session = sessions.get(key);
  if (!session) {
    session = createSession(commitRef, runId, tables);
    // HEAD moves: only cache sessions for explicit commit ids.
    if (commitRef !== "HEAD") sessions.set(key, session);
    session.catch(() => sessions.delete(key));
  }
  return session;
}
