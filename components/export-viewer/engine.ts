import * as duckdb from "@duckdb/duckdb-wasm";
import { TABLES, TABLE_NAMES, type ColumnSpec } from "../../analysis/evidence/schema";
import { parquetBufferToArrowIpc } from "../sql/parquet-to-arrow";
import { partBytes, type Manifest } from "./bundle";

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

export function loadEngine(manifest: Manifest) {
  engine ??= (async () => {
    const [wasm, workerJs] = await Promise.all([partBytes(manifest, "duckdb/duckdb-eh.wasm.gz"), partBytes(manifest, "duckdb/duckdb-browser-eh.worker.js.gz")]);
    const worker = new Worker(URL.createObjectURL(new Blob([WORKER_PREAMBLE, workerJs as BlobPart], { type: "text/javascript" })));
    worker.postMessage({ __emberscopeWasm: new Blob([wasm as BlobPart], { type: "application/wasm" }) });
    const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
    await db.instantiate(WASM_URL);
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

/** The evidence tables of one exported commit (only what the export carries), as DuckDB views. */
export function openSession(manifest: Manifest, commitId: string): Promise<Session> {
  let session = sessions.get(commitId);
  if (!session) {
    session = (async () => {
      const { db, version } = await loadEngine(manifest);
      const connection = await db.connect();
      const schema = `commit_${commitId.replace(/[^A-Za-z0-9_]/g, "_")}`;
      await connection.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await connection.query(`CREATE SCHEMA IF NOT EXISTS notebook`);
      await connection.query(`SET search_path = '${schema},notebook'`);
      const gens = manifest.generations.filter((g) => g.commit_ids.includes(commitId));
      for (const table of TABLE_NAMES) {
        const spec = [...(TABLES[table] as readonly ColumnSpec[])];
        const parts: string[] = [];
        for (const g of gens) {
          for (const f of g.files.filter((x) => x.table === table)) {
            const bytes = await partBytes(manifest, f.part);
            const { ipc } = await parquetBufferToArrowIpc(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, spec);
            const name = `${table}__${parts.length}`;
            await connection.insertArrowFromIPCStream(ipc, { name, schema, create: true });
            parts.push(`SELECT '${g.generation_id.replace(/[^A-Za-z0-9_]/g, "")}' AS generation_id, * FROM ${schema}."${name}"`);
          }
        }
        if (parts.length) await connection.query(`CREATE OR REPLACE VIEW ${schema}."${table}" AS ${parts.join(" UNION ALL BY NAME ")}`);
        else await connection.query(`CREATE TABLE ${schema}."${table}" (${["generation_id VARCHAR", ...spec.map((c) => `"${c.name}" ${c.type}`)].join(", ")})`);
      }
      let queue: Promise<unknown> = Promise.resolve();
      return {
        query(sql: string) {
          const run = queue.then(async () => {
            const start = performance.now();
            const table = await connection.query(sql);
            const columns = table.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
            const rows = table.toArray().map((row) => {
              const record = (row as { toJSON(): Record<string, unknown> }).toJSON();
              return Object.fromEntries(columns.map((c) => [c.name, plain(record[c.name])]));
            });
            return { columns, rows, ms: performance.now() - start, engine: "duckdb-wasm", engine_version: version, commit_id: commitId };
          });
          queue = run.catch(() => undefined);
          return run;
        },
      };
    })();
    sessions.set(commitId, session);
  }
  return session;
}
