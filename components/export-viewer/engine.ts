import * as duckdb from "@duckdb/duckdb-wasm";
import { TABLES, TABLE_NAMES, type ColumnSpec } from "../../analysis/evidence/schema";
import { firstPaint, partBytes, partText, type Manifest } from "./bundle";
import { neededColumns } from "./columns";
import type { DecodeAnswer, DecodeRequest } from "./parquet-worker";

/**
 * DuckDB-WASM started from the export's own parts: the worker from a blob URL, and the wasm handed
 * to the worker as a Blob its `fetch` answers with (a file:// page's blob URLs are not fetchable
 * from a worker, and nothing may be fetched from the network). The eh bundle runs without
 * cross-origin isolation, so a file opened from disk works.
 */
const WASM_URL = "https://emberscope.invalid/duckdb-eh.wasm";
const WORKER_PREAMBLE = `let __wasm=null;const __fetch=self.fetch.bind(self);self.fetch=(u,o)=>((typeof u==="string"?u:(u&&u.url)||String(u))===${JSON.stringify(WASM_URL)}&&__wasm?Promise.resolve(new Response(__wasm,{headers:{"Content-Type":"application/wasm"}})):__fetch(u,o));self.addEventListener("message",(e)=>{if(e.data&&e.data.__emberscopeWasm){__wasm=e.data.__emberscopeWasm;e.stopImmediatePropagation();}});\n`;

export interface Session {
  query(sql: string): Promise<{ columns: { name: string; type: string }[]; rows: Record<string, unknown>[]; ms: number; engine: string; engine_version: string; commit_id: string }>;
}

let engine: Promise<{ db: duckdb.AsyncDuckDB; version: string }> | null = null;

/** Where the time goes when the file opens: marks "emberscope:<stage>" a benchmark reads back. */
export function mark(stage: string): void {
  performance.mark(`emberscope:${stage}`);
}

export function loadEngine(manifest: Manifest) {
  engine ??= (async () => {
    await firstPaint;
    mark("engine-start");
    const [wasm, workerJs] = await Promise.all([partBytes(manifest, "duckdb/duckdb-eh.wasm.gz"), partBytes(manifest, "duckdb/duckdb-browser-eh.worker.js.gz")]);
    mark("engine-decoded");
    const worker = new Worker(URL.createObjectURL(new Blob([WORKER_PREAMBLE, workerJs as BlobPart], { type: "text/javascript" })));
    worker.postMessage({ __emberscopeWasm: new Blob([wasm as BlobPart], { type: "application/wasm" }) });
    const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
    await db.instantiate(WASM_URL);
    mark("engine-instantiated");
    await db.open({ query: { castBigIntToDouble: true, castDecimalToDouble: true } });
    return { db, version: await db.getVersion() };
  })();
  return engine;
}

function plain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value === null || value === undefined) return null;
  if (typeof value === "object") {
    const v = value as { toArray?: () => unknown[]; toJSON?: () => unknown };
    if (typeof v.toArray === "function") return Array.from(v.toArray(), plain);
    if (typeof v.toJSON === "function") return plain(v.toJSON());
  }
  return value;
}

const sessions = new Map<string, Promise<Session>>();

/** Where the Parquet reading goes (ms), summed over the page: a benchmark reads it from the session marks. */
const timing = { base64: 0, parquet: 0, insert: 0 };

/** The Parquet decoder's code (components/export-viewer/parquet-worker.ts), put in the viewer's script by its build. */
declare const __EMBERSCOPE_PARQUET_WORKER__: string | undefined;

type Decoded = { ipc: Uint8Array; base64_ms: number; parquet_ms: number };

/**
 * Decoding runs in Web Workers started from a Blob URL of code the file carries (no fetch, so it
 * works from file://), leaving the page's main thread to paint and answer.
 */
let decoders: Worker[] | null = null;
let nextDecoder = 0;
const waiting = new Map<number, { resolve: (d: Decoded) => void; reject: (e: Error) => void }>();
function decoderPool(): Worker[] {
  if (decoders) return decoders;
  const code = typeof __EMBERSCOPE_PARQUET_WORKER__ === "string" ? __EMBERSCOPE_PARQUET_WORKER__ : null;
  if (!code) throw new Error("This viewer was built without its Parquet decoder.");
  const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  // One per spare core (at least one, at most two): DuckDB's own worker and the page need the rest.
  const count = Math.max(1, Math.min(2, (navigator.hardwareConcurrency || 2) - 1));
  decoders = Array.from({ length: count }, () => {
    const worker = new Worker(url);
    worker.onmessage = (event: MessageEvent<DecodeAnswer>) => {
      const answer = event.data;
      const entry = waiting.get(answer.id);
      waiting.delete(answer.id);
      if (!entry) return;
      if ("error" in answer) entry.reject(new Error(answer.error));
      else entry.resolve(answer);
    };
    // A worker that cannot run (its script refused) fails what waits on it, rather than leave it waiting.
    worker.onerror = (event) => {
      for (const [id, entry] of waiting) {
        waiting.delete(id);
        entry.reject(new Error(`The Parquet decoder stopped: ${event.message || "it could not start"}.`));
      }
    };
    return worker;
  });
  return decoders;
}

let requestId = 0;
async function decode(manifest: Manifest, part: string, columns: ColumnSpec[]): Promise<Uint8Array> {
  const pool = decoderPool();
  const { text } = await partText(manifest, part);
  const id = ++requestId;
  const answer = await new Promise<Decoded>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    pool[nextDecoder++ % pool.length].postMessage({ id, base64: text, columns } satisfies DecodeRequest);
  });
  timing.base64 += answer.base64_ms;
  timing.parquet += answer.parquet_ms;
  return answer.ipc;
}

/**
 * A part's rows (the columns asked for) as Arrow IPC, decoded once per page and column set
 * (commits that share a generation share it). It needs no engine: the tables a query names are
 * decoded while DuckDB-WASM is still compiling.
 */
const decoded = new Map<string, Promise<Uint8Array>>();
function ipcOf(manifest: Manifest, part: string, columns: ColumnSpec[]): Promise<Uint8Array> {
  const key = `${part}\0${columns.map((c) => c.name).join(",")}`;
  let ipc = decoded.get(key);
  if (!ipc) {
    ipc = (async () => {
      await firstPaint;
      return decode(manifest, part, columns);
    })();
    decoded.set(key, ipc);
  }
  return ipc;
}

type TableName = (typeof TABLE_NAMES)[number];

/** Tables named after FROM or JOIN are loaded before a query; others when DuckDB reports them missing (as the workbench's session does). */
const TABLE_PATTERN = new RegExp(`\\b(?:from|join)\\s+"?(${TABLE_NAMES.join("|")})\\b`, "gi");
const MISSING_TABLE = new RegExp(`Table with name "?(${TABLE_NAMES.join("|")})"? does not exist`, "i");

const MISSING_COLUMN = /Referenced column .* not found|column .* does not exist|not found in FROM clause/i;

const namedTables = (sql: string) => [...new Set([...sql.matchAll(TABLE_PATTERN)].map((m) => m[1].toLowerCase() as TableName))];

/**
 * The evidence tables of one exported commit (only what the export carries), loaded into
 * DuckDB-WASM on first use: a trace cell never decodes the samples.
 */
export function openSession(manifest: Manifest, commitId: string): Promise<Session> {
  let session = sessions.get(commitId);
  if (session) return session;
  const gens = manifest.generations.filter((g) => g.commit_ids.includes(commitId));
  const filesOf = (table: TableName) => gens.flatMap((g) => g.files.filter((f) => f.table === table).map((f) => ({ generation_id: g.generation_id, part: f.part })));
  const schema = `commit_${commitId.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const opened = (async () => {
    const { db, version } = await loadEngine(manifest);
    mark(`session-start:${commitId}`);
    const connection = await db.connect();
    await connection.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await connection.query(`CREATE SCHEMA IF NOT EXISTS notebook`);
    await connection.query(`SET search_path = '${schema},notebook'`);
    return { connection, version };
  })();
  // One statement at a time on the connection: an Arrow insert is several calls, and two at once mixed their tables up.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = chain.then(work);
    chain = run.catch(() => undefined);
    return run;
  };
  // Per table: the columns loaded so far and the load that brought them. A query that needs more
  // decodes the union and replaces the table (the view keeps its name).
  const loaded = new Map<TableName, { columns: Set<string>; load: Promise<void>; tables: string[] }>();
  let loads = 0;
  const ensure = (tables: readonly TableName[], sql: string | null) =>
    Promise.all(
      tables.map((table) => {
        const spec = TABLES[table] as readonly ColumnSpec[];
        const current = loaded.get(table);
        const needed = neededColumns(sql, spec);
        if (current && needed.every((c) => current.columns.has(c.name))) return current.load;
        const columns = new Set([...(current?.columns ?? []), ...needed.map((c) => c.name)]);
        const wanted = spec.filter((c) => columns.has(c.name));
        const files = filesOf(table);
        // Decoding starts now, without the engine.
        const ipcs = files.map((f) => ipcOf(manifest, f.part, wanted));
        const previous = current?.load.catch(() => undefined);
        const version = ++loads;
        const entry = { columns: files.length ? columns : new Set(spec.map((c) => c.name)), load: Promise.resolve(), tables: [] as string[] };
        entry.load = (async () => {
          const { connection } = await opened;
          const streams = await Promise.all(ipcs);
          await previous;
          await serial(async () => {
            const parts: string[] = [];
            for (const [i, f] of files.entries()) {
              const t = performance.now();
              // Named for the commit, and where DuckDB-WASM put the insert is looked up, not assumed.
              const name = `${schema}__${table}__${version}_${i}`;
              // A copy: the stream's buffer is transferred to the worker, and another commit may need it.
              await connection.insertArrowFromIPCStream(streams[i].slice(), { name, schema, create: true });
              timing.insert += performance.now() - t;
              const where = (await connection.query(`SELECT schema_name FROM duckdb_tables() WHERE table_name = '${name}'`)).toArray()[0] as { schema_name: string } | undefined;
              const qualified = `"${where?.schema_name ?? schema}"."${name}"`;
              entry.tables.push(qualified);
              parts.push(`SELECT '${f.generation_id.replace(/[^A-Za-z0-9_]/g, "")}' AS generation_id, * FROM ${qualified}`);
            }
            if (parts.length) await connection.query(`CREATE OR REPLACE VIEW ${schema}."${table}" AS ${parts.join(" UNION ALL BY NAME ")}`);
            else if (!current) await connection.query(`CREATE TABLE ${schema}."${table}" (${["generation_id VARCHAR", ...spec.map((c) => `"${c.name}" ${c.type}`)].join(", ")})`);
            // The narrower copies the view no longer reads.
            for (const old of current?.tables ?? []) await connection.query(`DROP TABLE IF EXISTS ${old}`);
          });
          performance.mark(`emberscope:table-ready:${table}`, { detail: { ...Object.fromEntries(Object.entries(timing).map(([k, v]) => [k, Math.round(v)])), columns: wanted.length } });
        })();
        loaded.set(table, entry);
        return entry.load;
      }),
    );
  const ready: Session = {
    async query(sql: string) {
      // The tables' decoding starts before the engine is ready: the worker decodes while DuckDB-WASM compiles.
      const tables = ensure(namedTables(sql), sql);
      tables.catch(() => undefined); // awaited below; a failure while the engine starts is not unhandled
      const { connection, version } = await opened;
      await tables;
      const start = performance.now();
      let table;
      for (let attempt = 0; ; attempt++) {
        try {
          table = await serial(() => connection.query(sql));
          break;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          const missing = MISSING_TABLE.exec(message);
          if (attempt >= TABLE_NAMES.length) throw error;
          if (missing && !loaded.has(missing[1].toLowerCase() as TableName)) await ensure([missing[1].toLowerCase() as TableName], sql);
          // A column the text did not name plainly (quoted oddly, built by a macro): every column of what is loaded.
          else if (MISSING_COLUMN.test(message) && [...loaded.entries()].some(([t, e]) => e.columns.size < TABLES[t].length)) await ensure([...loaded.keys()], null);
          else throw error;
        }
      }
      const columns = table.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
      const rows = table.toArray().map((row) => {
        const record = (row as { toJSON(): Record<string, unknown> }).toJSON();
        return Object.fromEntries(columns.map((c) => [c.name, plain(record[c.name])]));
      });
      return { columns, rows, ms: performance.now() - start, engine: "duckdb-wasm", engine_version: version, commit_id: commitId };
    },
  };
  session = Promise.resolve(ready);
  sessions.set(commitId, session);
  return session;
}
