import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { renderSql, hotspotsQuery, type EvidenceQuery } from "../../analysis/queries";
import { transformedCalleesQuery, transformedCallersQuery, transformedFlameTreeQuery, transformedHotspotsQuery, transformedPathTreeQuery, transformedStackExamplesQuery, transformedStackMapQuery, type Transform } from "../../analysis/queries/transforms";
import { TABLES, type TableName } from "../../analysis/evidence/schema";
import { parquetFileToArrowIpc } from "../../components/sql/parquet-to-arrow";
import { openEvidence } from "../../server/evidence/engine";
import type { ObjectId } from "../../server/store/object-store";
import { withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

const require = createRequire(import.meta.url);
const DIST = path.dirname(require.resolve("@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs"));

/** The browser's engine (DuckDB-WASM 1.4.3, the same wasm the page loads) run in Node through its blocking bundle. */
async function wasmEngine() {
  const duckdb = require(path.join(DIST, "duckdb-node-blocking.cjs"));
  const bundles = {
    mvp: { mainModule: path.join(DIST, "duckdb-mvp.wasm"), mainWorker: path.join(DIST, "duckdb-node-mvp.worker.cjs") },
    eh: { mainModule: path.join(DIST, "duckdb-eh.wasm"), mainWorker: path.join(DIST, "duckdb-node-eh.worker.cjs") },
  };
  const db = await duckdb.createDuckDB(bundles, new duckdb.VoidLogger(), duckdb.NODE_RUNTIME);
  await db.instantiate(() => {});
  const connection = db.connect();
  // Numbers as numbers, lists (Arrow vectors) as arrays.
  const plain = (v: unknown): unknown => (typeof v === "bigint" ? Number(v) : v !== null && typeof v === "object" && "toArray" in v ? [...(v as { toArray(): unknown[] }).toArray()].map(plain) : v);
  return {
    version: () => String(connection.query("SELECT version() AS v").toArray()[0].toJSON().v),
    insertIpc: (name: string, ipc: Uint8Array) => connection.insertArrowFromIPCStream(ipc, { name, create: true }),
    run: (sql: string) => connection.query(sql).toArray().map((r: { toJSON(): Record<string, unknown> }) => Object.fromEntries(Object.entries(r.toJSON()).map(([k, v]) => [k, plain(v)]))),
    close: () => {
      connection.close();
      db.reset();
    },
  };
}

describe("transforms: the browser's engine (DuckDB-WASM) gives the server's rows", () => {
  it("every kind of transform, stacked and inverted, over the same Parquet files", async () => {
    await withWorkspace(async (ws) => {
      const moduleOf = (name: string) => (name === "c" || name === "d" ? "libx" : null);
      const stacks = ["main;a;b", "main;a;c;d", "main;b;a;b;c", "main;c;c;d", "main;d", "main", "a;b", "main;a;a;a;e"];
      const { generation_id } = await publishEvidence(ws, "wasm", (b: EvidenceBuilder) => {
        const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
        const track = b.track({ threadId: 1, kind: "thread" });
        stacks.forEach((s, i) => b.sample(b.stackOf(s.split(";").map((name) => b.frame({ name, file: `${name}.js`, line: 1, module: moduleOf(name), kind: "js" })))!, track, i, metric, 1 + i * 3));
      });
      const ev = await openEvidence(ws, "HEAD");
      const generations = [generation_id];
      const key = Object.fromEntries((await ev.run(hotspotsQuery, { generations, metric: "samples", limit: 50 })).map((r) => [r.name, r.frame_key]));
      const wasm = await wasmEngine();
      try {
        expect(wasm.version()).toBe("v1.4.3");
        // The commit's files as the page's session loads them: each Parquet file decoded in JavaScript
        // (parquetFileToArrowIpc, as DuckDB-WASM has no parquet extension here), inserted as Arrow,
        // one view per table with its generation_id.
        const parts = new Map<string, string[]>();
        for (const g of ev.commit.generations) {
          for (const [i, f] of g.files.entries()) {
            const bytes = readFileSync(ws.objects.pathOf(f.object_id as ObjectId));
            const { ipc } = await parquetFileToArrowIpc(`data:application/octet-stream;base64,${bytes.toString("base64")}`, bytes.length, [...TABLES[f.table as TableName]]);
            const name = `${f.table}__${i}`;
            wasm.insertIpc(name, ipc);
            parts.set(f.table, [...(parts.get(f.table) ?? []), `SELECT '${g.generation_id}' AS generation_id, * FROM "${name}"`]);
          }
        }
        for (const [table, selects] of parts) wasm.run(`CREATE VIEW "${table}" AS ${selects.join(" UNION ALL BY NAME ")}`);
        const lists: [Transform[], boolean][] = [
          [[{ type: "merge-function", frame_key: key.a }], false],
          [[{ type: "focus-function", frame_key: key.c }], false],
          [[{ type: "focus-subtree", path: [key.main, key.a] }], false],
          [[{ type: "drop-function", frame_key: key.d }], false],
          [[{ type: "collapse-recursion", frame_key: key.b }], false],
          [[{ type: "collapse-direct-recursion", frame_key: key.a }], false],
          [[{ type: "collapse-module", module: "libx" }, { type: "merge-function", frame_key: key.b }], false],
          [[{ type: "merge-function", frame_key: key.main }], true],
        ];
        for (const [list, inverted] of lists) {
          const params = { generations, metric: "samples", budget: 1000 };
          const query = transformedFlameTreeQuery(list, inverted);
          const server = await ev.run(query, params);
          expect(server.length).toBeGreaterThan(0);
          const browser = wasm.run(renderSql(query.sql, params));
          const at = JSON.stringify(list) + (inverted ? " inverted" : "");
          expect(browser, at).toEqual(server);
          const hot = transformedHotspotsQuery(list);
          const hotParams = { generations, metric: "samples", limit: 100, after_self: null, after_key: null };
          expect(wasm.run(renderSql(hot.sql, hotParams)), at).toEqual(await ev.run(hot, hotParams));
          if (inverted) continue;
          // The sandwich's lists and time order's tree under the same stack.
          for (const frame of [key.b]) {
            const near = { generations, metric: "samples", frame_key: frame, limit: 50 };
            for (const q of [transformedCallersQuery(list), transformedCalleesQuery(list), transformedStackExamplesQuery(list)] as EvidenceQuery<any, any>[]) expect(wasm.run(renderSql(q.sql, near)), `${q.name} ${at}`).toEqual(await ev.run(q, near));
          }
          const tree = { generations, metric: "samples" };
          for (const q of [transformedPathTreeQuery(list), transformedStackMapQuery(list)] as EvidenceQuery<any, any>[]) {
            const rows = await ev.run(q, tree);
            expect(rows.length, `${q.name} ${at}`).toBeGreaterThan(0);
            // Rows as sorted-key text, in any order (the engines need not agree on row order without ORDER BY).
            const sorted = (r: unknown[]) => r.map((x) => JSON.stringify(Object.fromEntries(Object.entries(x as object).sort()))).sort();
            expect(sorted(wasm.run(renderSql(q.sql, tree))), `${q.name} ${at}`).toEqual(sorted(rows));
          }
        }
      } finally {
        wasm.close();
      }
    });
  }, 180_000);
});
