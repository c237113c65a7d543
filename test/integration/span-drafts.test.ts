import { describe, expect, it } from "vitest";
import { EvidenceBuilder, MemorySink } from "../../analysis/evidence/builder";
import { chromeTraceImporter } from "../../analysis/formats/chrome-trace";
import { sourceFromBytes } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS } from "../../analysis/formats/types";
import { openDuckDb, sqlString } from "../../server/evidence/duckdb";
import { ParquetGenerationWriter } from "../../server/evidence/parquet-writer";
import type { ObjectId } from "../../server/store/object-store";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

/** A trace of every slice kind, long enough that drafts and places cross many small batches. */
function mixedTrace(): string {
  const events: object[] = [];
  for (let i = 0; i < 600; i++) {
    const ts = i * 100;
    const tid = 1 + (i % 3);
    events.push({ name: `task${i % 7}`, cat: "toplevel", ph: "X", pid: 1, tid, ts, dur: 90, args: { i } });
    events.push({ name: "inner", ph: "B", pid: 1, tid, ts: ts + 10, args: { from: "begin" } });
    events.push({ name: "inner", ph: "E", pid: 1, tid, ts: ts + 40, args: { to: "end" } });
    events.push({ name: "mark", ph: "i", s: "t", pid: 1, tid, ts: ts + 20 });
    events.push({ name: "request", cat: "net", ph: "b", id: i % 5, pid: 1, ts: ts + 5 });
    events.push({ name: "request", cat: "net", ph: "e", id: i % 5, pid: 1, ts: ts + 95 });
  }
  // Never ended: runs to the end of the trace with status "unfinished".
  events.push({ name: "hang", ph: "B", pid: 1, tid: 9, ts: 50 });
  return JSON.stringify({ traceEvents: events });
}

async function importWith(builder: EvidenceBuilder, text: string) {
  await chromeTraceImporter.parse({ source: sourceFromBytes(text, "trace.json", 4096), builder, limits: DEFAULT_IMPORT_LIMITS });
  return builder.finish();
}

describe("span drafts and places (spans whose nesting is known only at the end)", () => {
  it("the Parquet writer joins them into exactly the spans the in-memory sink assembles", async () => {
    const text = mixedTrace();
    const memory = new MemorySink();
    const memorySummary = await importWith(new EvidenceBuilder(memory, 64), text);
    expect(memorySummary.rows.spans).toBe(600 * 4 + 1);
    expect(memory.tables.spans).toHaveLength(600 * 4 + 1);

    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      const summary = await importWith(new EvidenceBuilder(writer, 64), text);
      const files = await writer.finish();
      expect(summary.rows).toEqual(memorySummary.rows);
      const spansFile = files.find((f) => f.table === "spans")!;
      expect(spansFile.row_count).toBe(600 * 4 + 1);
      const { instance, connection } = await openDuckDb();
      try {
        const reader = await connection.runAndReadAll(`SELECT * EXCLUDE (generation_id) FROM read_parquet(${sqlString(ws.objects.pathOf(spansFile.object_id as ObjectId))}) ORDER BY span_id`);
        const stored = reader.getRowObjectsJson();
        const expected = [...memory.tables.spans].sort((a, b) => Number(a.span_id) - Number(b.span_id));
        expect(stored.map(normalize)).toEqual(expected.map(normalize));
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    } finally {
      ws.close();
    }
    const byName = (name: string) => memory.tables.spans.filter((s) => s.name === name);
    expect(byName("inner").every((s) => s.args === '{"from":"begin","to":"end"}' && s.depth === 1)).toBe(true);
    expect(byName("hang")).toMatchObject([{ status: "unfinished", start_ns: 50_000 }]);
  }, 60_000);
});

/** Rows as plain JSON values (DuckDB gives BIGINTs as strings in JSON form). */
function normalize(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : typeof v === "string" && /^-?\d+$/.test(v) && k !== "name" ? Number(v) : v]));
}
