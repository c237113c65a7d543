import { randomBytes } from "node:crypto";
import path from "node:path";
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import type { z } from "zod";
import { TABLES, TABLE_NAMES } from "../../analysis/evidence/schema";
import { renderSql, type EvidenceQuery } from "../../analysis/queries/define";
import { EmberscopeError } from "../domain/errors";
import type { PinnedCommit } from "../domain/models";
import { pin, type CommitRef } from "../store/corpus";
import type { ObjectId } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { confineToFiles, loadDuckDb, openDuckDb, sqlString } from "./duckdb";

export const QUERY_BUDGET_MS = 15_000;

interface CachedReader {
  instance: DuckDBInstance;
  lastUsed: number;
}

/**
 * The engine's caches: readers per (workspace, commit), kept answers, statements running. They
 * live on `globalThis` under a registered symbol, one set per process: `emberscope serve` runs
 * the Next app, whose route handlers and pages are separate bundles (each its own copy of this
 * module), and the upload route's prepareRunView must warm the reader and the answer the run
 * page then asks for, not a copy of its own (a third cold reader on the way to the first paint).
 */
interface EngineCaches {
  readers: Map<string, Promise<CachedReader>>;
  /** Kept answers: a statement's rows, or an answer computed from several (`remember`), with its size in rows. */
  results: Map<string, { value: unknown; rows: number }>;
  /** The rows of every kept answer together. */
  cachedRows: number;
  running: Map<string, { joined: number; work: Promise<{ rows: unknown[]; kept: boolean }> }>;
  /** Computed answers (`remember`) being computed: a second asker waits for the first. */
  computing: Map<string, Promise<unknown>>;
}

const CACHES = Symbol.for("emberscope.evidence-engine.caches");
const caches: EngineCaches = ((globalThis as { [CACHES]?: EngineCaches })[CACHES] ??= { readers: new Map(), results: new Map(), cachedRows: 0, running: new Map(), computing: new Map() });

/** Readers per (workspace, commit): commits are immutable, so a reader never goes stale. */
const readers = caches.readers;
const MAX_READERS = 4;

function toPlain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(toPlain);
  if (value && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  }
  return value;
}

async function createReader(ws: Workspace, commit: PinnedCommit): Promise<CachedReader> {
  // A query that outgrows memory spills inside the workspace (DuckDB's default is ./.tmp of
  // whatever directory the process runs in); DuckDB removes the directory when the reader closes.
  const tempDirectory = path.join(ws.layout.tmp, `reader-${process.pid}-${randomBytes(6).toString("hex")}`);
  const { instance, connection } = await openDuckDb({ memoryLimit: "1GB", threads: 2, tempDirectory });
  try {
    const allFiles: string[] = [];
    for (const table of TABLE_NAMES) {
      const files = commit.generations.flatMap((g) => g.files.filter((f) => f.table === table).map((f) => ws.objects.pathOf(f.object_id as ObjectId)));
      allFiles.push(...files);
      if (files.length) {
        await connection.run(`CREATE VIEW "${table}" AS SELECT * FROM read_parquet([${files.map(sqlString).join(", ")}], union_by_name = true)`);
      } else {
        const columns = [`generation_id VARCHAR`, ...TABLES[table].map((c) => `"${c.name}" ${c.type}`)].join(", ");
        await connection.run(`CREATE TABLE "${table}" (${columns})`);
      }
    }
    // Parquet footers are read once per reader, not on every query (the files never change).
    await connection.run("SET enable_object_cache = true");
    await confineToFiles(connection, allFiles);
  } finally {
    connection.closeSync();
  }
  return { instance, lastUsed: Date.now() };
}

async function readerFor(ws: Workspace, commit: PinnedCommit): Promise<CachedReader> {
  const key = `${ws.layout.dir}\u0000${commit.commit_id}`;
  let entry = readers.get(key);
  if (!entry) {
    entry = createReader(ws, commit);
    readers.set(key, entry);
    entry.catch(() => readers.delete(key));
    if (readers.size > MAX_READERS) {
      const [oldestKey, oldest] = [...readers.entries()][0];
      readers.delete(oldestKey);
      oldest.then((r) => r.instance.closeSync()).catch(() => undefined);
    }
  }
  const reader = await entry;
  reader.lastUsed = Date.now();
  return reader;
}

/**
 * Closes every reader of one workspace and drops its kept answers: for a workspace about to be
 * deleted (the server's warm-up's), whose readers would otherwise stay open on removed files.
 */
export async function closeReadersOf(workspaceDir: string): Promise<void> {
  const prefix = `${workspaceDir}\u0000`;
  for (const [key, entry] of [...readers.entries()]) {
    if (!key.startsWith(prefix)) continue;
    readers.delete(key);
    await entry.then((r) => r.instance.closeSync()).catch(() => undefined);
  }
  for (const [key, kept] of [...caches.results.entries()]) {
    if (!key.startsWith(prefix)) continue;
    caches.results.delete(key);
    caches.cachedRows -= kept.rows;
  }
}

/**
 * Query results per (workspace, commit, SQL text). A commit's files never change, so the same
 * statement over the same commit always returns the same rows. The SQL text carries everything
 * else an answer depends on (generations, metric, tracks, transforms, budget), so no other
 * question can get this one's rows. Answers up to MAX_CACHED_ROWS are kept, least recently used
 * out first once their rows together pass MAX_CACHED_TOTAL_ROWS: a 1 M-sample run's flame tree
 * (~20 k rows) is kept, so undoing a transform or reopening a link answers from memory.
 */
const results = caches.results;
const MAX_CACHED_RESULTS = 256;
const MAX_CACHED_ROWS = 50_000;
const MAX_CACHED_TOTAL_ROWS = 400_000;

/** The same statement asked again while it runs waits for that run instead of running twice. */
const running = caches.running;

/** Keeps an answer of `size` rows; true when it is kept (and so must not be handed out to be changed). */
function rememberResult(key: string, value: unknown, size: number): boolean {
  if (size > MAX_CACHED_ROWS) return false;
  const before = results.get(key);
  if (before) caches.cachedRows -= before.rows;
  results.delete(key);
  results.set(key, { value, rows: size });
  caches.cachedRows += size;
  while (results.size > MAX_CACHED_RESULTS || caches.cachedRows > MAX_CACHED_TOTAL_ROWS) {
    const [oldest, dropped] = results.entries().next().value!;
    results.delete(oldest);
    caches.cachedRows -= dropped.rows;
  }
  return results.get(key)?.value === value;
}

/** A kept answer, now the most recently used; undefined when none is kept. */
function keptAnswer(key: string): unknown {
  const kept = results.get(key);
  if (!kept) return undefined;
  results.delete(key);
  results.set(key, kept);
  return kept.value;
}

/** One pinned commit's evidence: run named queries over exactly its files. */
export interface EvidenceReader {
  commit: PinnedCommit;
  run<P extends z.ZodType, R extends z.ZodType>(query: EvidenceQuery<P, R>, params: z.input<P>): Promise<z.output<R>[]>;
  /** The same rows, possibly the kept answer itself: read them, never change them (no copy is made). */
  runShared<P extends z.ZodType, R extends z.ZodType>(query: EvidenceQuery<P, R>, params: z.input<P>): Promise<readonly Readonly<z.output<R>>[]>;
  /**
   * The rows column by column, one DuckDB chunk (up to 2048 rows) at a time, neither validated nor
   * kept: for answers too large to hold as row objects (the span index's load). BIGINT arrives as
   * bigint. A numeric column without nulls is a typed array (a copy of the chunk's own). `onChunk`
   * returning false stops the scan. `whole`: the caller knows the rows are few enough to hold
   * (time order's samples up to 2 M): DuckDB materializes them and hands every chunk over in one
   * call, instead of one round trip per chunk (1 M rows: 55–170 ms instead of 170–600 ms on two
   * busy cores).
   */
  scan<P extends z.ZodType, R extends z.ZodType>(query: EvidenceQuery<P, R>, params: z.input<P>, onChunk: (columns: ArrayLike<unknown>[], rows: number) => boolean | void, options?: { whole?: boolean }): Promise<void>;
  /**
   * A person's own SQL, read-only: every statement must be a SELECT or EXPLAIN (checked after
   * parsing, before any runs), on a connection of its own where `prelude` runs first (temporary
   * views and tables: they shadow the commit's views for this connection only). The last
   * statement's rows, at most `maxRows` of them; values as plain JSON (64-bit integers as numbers).
   */
  adHoc(sql: string, prelude: (connection: DuckDBConnection) => Promise<void>, maxRows: number): Promise<AdHocResult>;
  /**
   * An answer computed from the commit's evidence by more than one statement (time order's merge),
   * kept as statements' answers are: `key` names everything it depends on besides the commit, and
   * `size` is what it weighs in rows (too heavy: computed each time, never kept). The same key asked
   * while it is computed waits for that computation. Shared: read it, never change it.
   */
  remember<T>(key: string, size: (value: T) => number, compute: () => Promise<T>): Promise<T>;
}

export interface AdHocResult {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  truncated: boolean;
}

/**
 * DuckDB's refusal of a person's SQL as a typed error, its message kept whole (line breaks and the
 * caret under the offending spot) with the workspace's own paths hidden.
 */
async function refusedAsTyped<T>(ws: Workspace, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EmberscopeError) throw error;
    const message = (error instanceof Error ? error.message : String(error)).replaceAll(ws.layout.dir, "<workspace>").slice(0, 4000);
    if (/^Out of Memory/i.test(message)) throw new EmberscopeError("QUERY_BUDGET_EXCEEDED", "The query exceeded its memory budget.", { details: { query: "sql", reason: message } });
    throw new EmberscopeError("QUERY_INVALID", message, { details: { reason: "refused_by_duckdb" } });
  }
}

/** Statement types a person's SQL may contain: reads only (the reader is shared, its views must not change). */
const READ_ONLY_STATEMENTS = new Set(["SELECT", "EXPLAIN"]);

/** A DuckDB value as JSON: dates as ISO text, bytes as hex, 64-bit integers as numbers (as DuckDB-WASM gives them). */
function jsonValue(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  if (Array.isArray(value)) return value.map(jsonValue);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonValue(v)]));
  return value;
}

export async function openEvidence(ws: Workspace, ref: CommitRef): Promise<EvidenceReader> {
  const commit = pin(ws.db, ref);
  const reader = await readerFor(ws, commit);
  /** A connection interrupted after the query budget, with the budget's error for what it ran. */
  async function budgeted<T>(name: string, work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await reader.instance.connect();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
    }, QUERY_BUDGET_MS);
    try {
      return await work(connection);
    } catch (error) {
      if (timedOut) {
        throw new EmberscopeError("QUERY_BUDGET_EXCEEDED", `The ${name} query exceeded its ${QUERY_BUDGET_MS / 1000} s budget.`, {
          details: { query: name, budget_ms: QUERY_BUDGET_MS },
        });
      }
      throw error;
    } finally {
      clearTimeout(timer);
      connection.closeSync();
    }
  }
  async function answer<P extends z.ZodType, R extends z.ZodType>(query: EvidenceQuery<P, R>, params: z.input<P>): Promise<{ rows: unknown[]; kept: boolean }> {
    const parsed = query.params.parse(params) as Record<string, unknown>;
    const sql = renderSql(query.sql, parsed);
    const cacheKey = `${ws.layout.dir}\u0000${commit.commit_id}\u0000${sql}`;
    const cached = keptAnswer(cacheKey) as unknown[] | undefined;
    if (cached) return { rows: cached, kept: true };
    const inFlight = running.get(cacheKey);
    if (inFlight) {
      inFlight.joined++;
      const { rows, kept } = await inFlight.work;
      // Rows too large to keep are each asker's own to change: every asker of a shared run gets a copy.
      return { rows: kept ? rows : structuredClone(rows), kept };
    }
    const entry = {
      joined: 0,
      work: budgeted(query.name, async (connection) => {
        const result = await connection.runAndReadAll(sql);
        const rows = result.getRowObjectsJS().map((row) => query.row.parse(toPlain(row)));
        return { rows, kept: rememberResult(cacheKey, rows, rows.length) };
      }),
    };
    running.set(cacheKey, entry);
    try {
      const { rows, kept } = await entry.work;
      return { rows: kept || entry.joined === 0 ? rows : structuredClone(rows), kept };
    } finally {
      running.delete(cacheKey);
    }
  }
  return {
    commit,
    async run(query, params) {
      const { rows, kept } = await answer(query, params);
      return (kept ? structuredClone(rows) : rows) as z.output<typeof query.row>[];
    },
    async runShared(query, params) {
      return (await answer(query, params)).rows as z.output<typeof query.row>[];
    },
    async scan(query, params, onChunk, options) {
      const sql = renderSql(query.sql, query.params.parse(params) as Record<string, unknown>);
      const { DuckDBTypeId: T } = (await loadDuckDb()).api;
      const numeric = new Set<number>([T.TINYINT, T.SMALLINT, T.INTEGER, T.BIGINT, T.UTINYINT, T.USMALLINT, T.UINTEGER, T.UBIGINT, T.FLOAT, T.DOUBLE]);
      await budgeted(query.name, async (connection) => {
        if (options?.whole) {
          let since = performance.now();
          for (const chunk of await (await connection.run(sql)).fetchAllChunks()) {
            if (chunk.rowCount === 0) continue;
            const columns = Array.from({ length: chunk.columnCount }, (_, i) => columnValues(chunk, i, numeric));
            if (onChunk(columns, chunk.rowCount) === false) return;
            // A turn of the event loop now and then: the server answers other requests (the page's
            // scripts, asked while its time order merges a million samples) between chunks.
            if (performance.now() - since >= YIELD_AFTER_MS) {
              await yieldToEventLoop();
              since = performance.now();
            }
          }
          return;
        }
        const result = await connection.stream(sql);
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          const columns = Array.from({ length: chunk.columnCount }, (_, i) => columnValues(chunk!, i, numeric));
          if (onChunk(columns, chunk.rowCount) === false) return;
        }
      });
    },
    async remember<T>(key: string, size: (value: T) => number, compute: () => Promise<T>): Promise<T> {
      // Apart from statements' keys: a computed answer's key is never SQL text.
      const cacheKey = `${ws.layout.dir}\u0000${commit.commit_id}\u0001${key}`;
      const kept = keptAnswer(cacheKey);
      if (kept !== undefined) return kept as T;
      const inFlight = caches.computing.get(cacheKey);
      if (inFlight) return inFlight as Promise<T>;
      const work = compute().then((value) => (rememberResult(cacheKey, value, size(value)), value));
      caches.computing.set(cacheKey, work);
      try {
        return await work;
      } finally {
        caches.computing.delete(cacheKey);
      }
    },
    async adHoc(sql, prelude, maxRows) {
      const { StatementType } = (await loadDuckDb()).api;
      return budgeted("sql", (connection) => refusedAsTyped(ws, async () => {
        await prelude(connection);
        const extracted = await connection.extractStatements(sql);
        if (extracted.count === 0) throw new EmberscopeError("QUERY_INVALID", "The SQL holds no statement.", { details: { reason: "empty" } });
        const prepared = [];
        for (let i = 0; i < extracted.count; i++) {
          const statement = await extracted.prepare(i);
          const type = StatementType[statement.statementType];
          if (!READ_ONLY_STATEMENTS.has(type)) {
            throw new EmberscopeError("QUERY_INVALID", `Statement ${i + 1} is ${type}: only SELECT and EXPLAIN run here (the evidence is read-only).`, { details: { reason: "not_read_only", statement: i + 1, type } });
          }
          prepared.push(statement);
        }
        for (const statement of prepared.slice(0, -1)) await statement.run();
        const reader = await prepared[prepared.length - 1].streamAndReadUntil(maxRows + 1);
        const names = reader.columnNames();
        const types = reader.columnTypes().map(String);
        const rows = reader.getRowObjectsJS();
        const truncated = rows.length > maxRows || !reader.done;
        return {
          columns: names.map((name, i) => ({ name, type: types[i] })),
          rows: rows.slice(0, maxRows).map((row) => Object.fromEntries(names.map((n) => [n, jsonValue(row[n]) ?? null]))),
          truncated,
        };
      }));
    },
  };
}

/** How long a whole scan hands chunks over before it lets the event loop turn. */
const YIELD_AFTER_MS = 20;

/** Lets the event loop answer what waits (I/O, timers) before going on. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

type DataChunk = Awaited<ReturnType<Awaited<ReturnType<DuckDBConnection["stream"]>>["fetchChunk"]>> & object;

/**
 * A chunk's column: a numeric vector with no nulls as a copy of its typed array (time order reads
 * a million samples' three columns: a value at a time, through a callback and a push, was most
 * of its time), any other through the driver's values.
 */
function columnValues(chunk: DataChunk, index: number, numeric: ReadonlySet<number>): ArrayLike<unknown> {
  const vector = chunk.getColumnVector(index) as unknown as { type: { typeId: number }; items: { slice(): ArrayLike<unknown> }; validity: { data: unknown } };
  // Only the plain numeric types: a date's, a decimal's or an enum's items are not its values.
  if (numeric.has(vector.type.typeId) && vector.validity.data === null) return vector.items.slice();
  return chunk.getColumnValues(index);
}
