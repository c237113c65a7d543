"use client";

import type { AsyncDuckDB } from "@duckdb/duckdb-wasm";
import { TABLES, TABLE_NAMES, type ColumnSpec } from "../../analysis/evidence/schema";
import { parquetFileToArrowIpc } from "./parquet-to-arrow";
import type { listCorpusFiles } from "../../server/services/corpus";
import { callQuery } from "../home/trpc-client";

/**
 * DuckDB-WASM over one pinned commit: the app serves the engine (public/duckdb/, copied at build)
 * and each Parquet file at an immutable content-addressed URL; the browser reads the commit's files
 * with range requests into the evidence tables (frames, stacks, …). Loaded only in the browser.
 */
export const ENGINE = "duckdb-wasm";

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

let engine: Promise<{ db: AsyncDuckDB; version: string }> | null = null;

/** Starts DuckDB-WASM once per page (worker + wasm from this app's /duckdb/, never a CDN). */
export function loadEngine(): Promise<{ db: AsyncDuckDB; version: string }> {
  engine ??= (async () => {
    const duckdb = await import("@duckdb/duckdb-wasm");
    const base = new URL("/duckdb/", window.location.href).href;
    const bundle = await duckdb.selectBundle({
      mvp: { mainModule: `${base}duckdb-mvp.wasm`, mainWorker: `${base}duckdb-browser-mvp.worker.js` },
      eh: { mainModule: `${base}duckdb-eh.wasm`, mainWorker: `${base}duckdb-browser-eh.worker.js` },
    });
    const worker = new Worker(bundle.mainWorker!);
    const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
    await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
    await db.open({ query: { castBigIntToDouble: true, castDecimalToDouble: true } });
    const version = await db.getVersion();
    return { db, version };
  })();
  engine.catch(() => {
    engine = null;
  });
  return engine;
}

/** Starts fetching and compiling the engine early (e.g. when a page with an SQL cell opens). */
export function preloadEngine(): void {
  void loadEngine().catch(() => undefined);
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

async function createSession(commitRef: string, runId: string | null): Promise<CommitSession> {
  const [{ db, version }, listing] = await Promise.all([loadEngine(), callQuery<typeof listCorpusFiles>("corpus.files", { commit_id: commitRef, ...(runId ? { run_id: runId } : {}) })]);
  const schema = `commit_${listing.commit_id.replace(/[^A-Za-z0-9_]/g, "_")}${runId ? `_${runId.replace(/[^A-Za-z0-9_]/g, "_")}` : ""}`;
  const generations = listing.run_generations ?? listing.generations.map((g) => g.generation_id);
  // A run-scoped session holds only that run's files; a commit-wide one holds every file of the commit.
  const scope = new Set(generations);
  const files = listing.files.filter((f) => scope.has(f.generation_id));
  const connection = await db.connect();
  await connection.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await connection.query(`SET search_path = '${schema}'`);
  // Tables are materialized on first use: a query reading only frames never downloads samples.
  const loaded = new Map<string, Promise<void>>();
  const materialize = (table: (typeof TABLE_NAMES)[number]) => {
    let done = loaded.get(table);
    if (!done) {
      done = (async () => {
        const spec = TABLES[table] as readonly ColumnSpec[];
        const mine = files.filter((f) => f.table === table);
        const parts: string[] = [];
        for (const [i, file] of mine.entries()) {
          const { ipc } = await parquetFileToArrowIpc(new URL(file.url, window.location.href).href, file.size_bytes, [...spec]);
          const name = `${table}__${i}`;
          await connection.insertArrowFromIPCStream(ipc, { name, schema, create: true });
          parts.push(`SELECT '${file.generation_id.replace(/[^a-z0-9_]/g, "")}' AS generation_id, * FROM ${schema}."${name}"`);
        }
        if (parts.length) {
          await connection.query(`CREATE OR REPLACE VIEW ${schema}."${table}" AS ${parts.join(" UNION ALL BY NAME ")}`);
        } else {
          const columns = ["generation_id VARCHAR", ...spec.map((c) => `"${c.name}" ${c.type}`)].join(", ");
          await connection.query(`CREATE TABLE IF NOT EXISTS ${schema}."${table}" (${columns})`);
        }
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
        const tables = new Set([...sql.matchAll(TABLE_PATTERN)].map((m) => m[1].toLowerCase() as (typeof TABLE_NAMES)[number]));
        for (const table of tables) await materialize(table);
        let table;
        for (let attempt = 0; ; attempt++) {
          try {
            table = await connection.query(sql);
            break;
          } catch (error) {
            const missing = MISSING_TABLE.exec(error instanceof Error ? error.message : String(error));
            if (!missing || attempt >= TABLE_NAMES.length) throw error;
            await materialize(missing[1].toLowerCase() as (typeof TABLE_NAMES)[number]);
          }
        }
        const ms = performance.now() - start;
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
export function openCommitSession(commitRef: string, runId: string | null = null): Promise<CommitSession> {
  const key = `${commitRef}\u0000${runId ?? ""}`;
  let session = sessions.get(key);
  if (!session) {
    session = createSession(commitRef, runId);
    // HEAD moves: only cache sessions for explicit commit ids.
    if (commitRef !== "HEAD") sessions.set(key, session);
    session.catch(() => sessions.delete(key));
  }
  return session;
}
