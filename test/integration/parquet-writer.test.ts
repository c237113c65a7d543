import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { describe, expect, it, vi } from "vitest";
import { EvidenceBuilder, MemorySink, STAGING_TABLES } from "../../analysis/evidence/builder";
import { codeTexts, TextCoder } from "../../analysis/evidence/text-coding";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { chromeTraceImporter } from "../../analysis/formats/chrome-trace";
import { cpuprofileImporter } from "../../analysis/formats/cpuprofile";
import { foldedImporter } from "../../analysis/formats/folded";
import { sourceFromBytes } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS } from "../../analysis/formats/types";
import { BatchRing, RING_BYTES } from "../../server/evidence/batch-ring";
import { sqlString } from "../../server/evidence/duckdb";
import { ParquetGenerationWriter } from "../../server/evidence/parquet-writer";
import { prepareWriterThread, ThreadedGenerationWriter, writerThreadStats } from "../../server/evidence/writer-thread";
import type { GenerationFile } from "../../server/domain/models";
import type { ObjectId } from "../../server/store/object-store";
import { initWorkspace, type Workspace } from "../../server/store/workspace";
import { queryDuckDb } from "../helpers/duckdb";
import { tempProject, withWorkspace } from "../helpers/project";

/** A trace of every slice kind (`rounds` × 4 spans, and one more), long enough that drafts and places cross many small batches. */
function mixedTrace(rounds = 600): string {
  const events: object[] = [];
  for (let i = 0; i < rounds; i++) {
    const ts = i * 100;
    const tid = 1 + (i % 3);
    events.push({ name: `task${i % 7}`, cat: "toplevel", ph: "X", pid: 1, tid, ts, dur: 90, args: { i } });
    events.push({ name: "inner", ph: "B", pid: 1, tid, ts: ts + 10, args: { from: "begin" } });
    events.push({ name: "inner", ph: "E", pid: 1, tid, ts: ts + 40, args: { to: "end" } });
    events.push({ name: "mark", ph: "i", s: "t", pid: 1, tid, ts: ts + 20 });
    events.push({ name: "request", cat: "net", ph: "b", id: i % 5, pid: 1, ts: ts + 5 });
    events.push({ name: "request", cat: "net", ph: "e", id: i % 5, pid: 1, ts: ts + 95 });
    // Counters: measurements, staged with a DOUBLE column.
    if (i % 4 === 0) events.push({ name: "Memory", ph: "C", pid: 1, ts: ts + 50, args: { heap: i * 1.5, rss: i } });
  }
  // Never ended: runs to the end of the trace with status "unfinished".
  events.push({ name: "hang", ph: "B", pid: 1, tid: 9, ts: 50 });
  return JSON.stringify({ traceEvents: events });
}

/**
 * The files of one import written by a writer in this thread, then by one on its own thread (whose
 * ring has `ringBytes`): `produce` feeds and finishes each one's builder.
 */
async function bothWriters(ws: Workspace, batchRows: number, produce: (builder: EvidenceBuilder) => Promise<unknown>, ringBytes = RING_BYTES): Promise<GenerationFile[][]> {
  const files = [];
  for (const writer of [await ParquetGenerationWriter.open(ws, "gen_test"), ThreadedGenerationWriter.open(ws, "gen_test", { ringBytes })]) {
    await produce(new EvidenceBuilder(writer, batchRows));
    files.push(await writer.finish());
  }
  return files;
}

async function importWith(builder: EvidenceBuilder, text: string) {
  await chromeTraceImporter.parse({ source: sourceFromBytes(text, "trace.json", 4096), builder, limits: DEFAULT_IMPORT_LIMITS });
  return builder.finish();
}

describe("span drafts and places (spans whose nesting is known only at the end)", () => {
  it.each([["in staging tables", undefined], ["spilled to part files", 100]])("the Parquet writer joins them (%s) into exactly the spans the in-memory sink assembles", async (_label, spillRows) => {
    const text = mixedTrace();
    const memory = new MemorySink();
    const memorySummary = await importWith(new EvidenceBuilder(memory, 64), text);
    expect(memorySummary.rows.spans).toBe(600 * 4 + 1);
    expect(memory.tables.spans).toHaveLength(600 * 4 + 1);

    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test", { spillRows });
      const summary = await importWith(new EvidenceBuilder(writer, 64), text);
      const files = await writer.finish();
      expect(summary.rows).toEqual(memorySummary.rows);
      const spansFile = files.find((f) => f.table === "spans")!;
      expect(spansFile.row_count).toBe(600 * 4 + 1);
      const stored = (await queryDuckDb(`SELECT * EXCLUDE (generation_id) FROM read_parquet(${sqlString(ws.objects.pathOf(spansFile.object_id as ObjectId))}) ORDER BY span_id`)).objects;
      const expected = [...memory.tables.spans].sort((a, b) => Number(a.span_id) - Number(b.span_id));
      expect(stored.map(normalize)).toEqual(expected.map(normalize));
    } finally {
      ws.close();
    }
    const byName = (name: string) => memory.tables.spans.filter((s) => s.name === name);
    expect(byName("inner").every((s) => s.args === '{"from":"begin","to":"end"}' && s.depth === 1)).toBe(true);
    expect(byName("hang")).toMatchObject([{ status: "unfinished", start_ns: 50_000 }]);
  }, 60_000);
});

describe("a spare DuckDB kept ahead of the next writer (a server's)", () => {
  it("is taken by each writer in turn, spills into that writer's staging, and writes the same files as a writer that opened its own", async () => {
    const text = mixedTrace(200);
    await withWorkspace(async (ws) => {
      const write = async () => {
        const writer = await ParquetGenerationWriter.open(ws, "gen_test");
        const temp = (await (writer as unknown as { connection: DuckDBConnection }).connection.runAndReadAll("SELECT current_setting('temp_directory')")).getRows()[0][0];
        await importWith(new EvidenceBuilder(writer, 64), text);
        return { temp, files: await writer.finish() };
      };
      const own = await write();
      const keeping = ParquetGenerationWriter.keepSpare();
      try {
        const first = await write();
        const second = await write();
        expect(keeping.taken).toBe(2);
        for (const spared of [first, second]) {
          expect(spared.files).toEqual(own.files);
          expect(path.dirname(String(spared.temp))).toBe(ws.layout.tmp);
          expect(path.basename(String(spared.temp))).toMatch(/^extract-/);
        }
        expect(first.temp).not.toBe(second.temp);
        expect(readdirSync(ws.layout.tmp)).toEqual([]);
      } finally {
        await keeping.stop();
      }
    });
  }, 60_000);
});

describe("drafts that do not pair up with places fail the extraction instead of writing wrong spans", () => {
  const place = { spanId: 0, trackId: 0, parentSpanId: null, startNs: 0, durNs: 1, depth: 0 };
  it("the builder refuses a place without a draft, a draft given twice, and drafts never placed", async () => {
    const builder = new EvidenceBuilder(new MemorySink());
    expect(() => builder.placeSpan(3, place)).toThrow(/placed without a draft/);
    builder.spanDraft(1, { name: "a" });
    expect(() => builder.spanDraft(1, { name: "a" })).toThrow(/drafted twice/);
    builder.placeSpan(1, place);
    expect(() => builder.placeSpan(1, place)).toThrow(/placed without a draft, or twice/);
    expect(() => builder.spanDraft(-1, { name: "b" })).toThrow(/not an integer/);
    builder.spanDraft(2, { name: "c" });
    await expect(builder.finish()).rejects.toThrow(/1 span drafts were never placed/);
  });

  /** Drafts, and places, of the spans with these ids (repeats as given), as a batch. */
  const drafts = (ids: number[]) => ({ table: "span_drafts" as const, length: ids.length, columns: { draft_id: Float64Array.from(ids), name: codeTexts(ids.map((i) => `n${i}`)), category: codeTexts(ids.map(() => "c")), status: codeTexts(ids.map(() => null)), args: codeTexts(ids.map((i) => `{"i":${i}}`)) } });
  const places = (ids: number[]) => ({ table: "span_places" as const, length: ids.length, columns: { draft_id: Float64Array.from(ids), span_id: Float64Array.from(ids), track_id: new Float64Array(ids.length), parent_span_id: new Float64Array(ids.length).fill(NaN), start_ns: Float64Array.from(ids), dur_ns: new Float64Array(ids.length).fill(5), depth: new Float64Array(ids.length) } });

  it("the writer refuses a draft given twice, a place without its draft or given twice, and drafts never placed", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await expect(writer.write(drafts([7, 7]))).rejects.toThrow(/span draft 7 arrived twice/);
      await expect(writer.write(drafts([-1]))).rejects.toThrow(/not an integer/);
      await writer.write(drafts([8, 9, 10]));
      await expect(writer.write(drafts([9]))).rejects.toThrow(/span draft 9 arrived twice/);
      await expect(writer.write(places([11]))).rejects.toThrow(/a span place for draft 11, which was never drafted/);
      // A refused batch changes nothing: 8 is placed by the next.
      await expect(writer.write(places([8, 8]))).rejects.toThrow(/a span place for draft 8, which was placed already/);
      await writer.write(places([8]));
      await expect(writer.write(places([9, 8]))).rejects.toThrow(/a span place for draft 8, which was placed already/);
      await writer.write(places([9]));
      await expect(writer.finish()).rejects.toThrow(/1 span drafts were never placed/);
    });
  });

  it("a table written early (declared complete) that fails fails the finish, and leaves no staging files", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await writer.write(drafts([7, 8]));
      await writer.write(places([7]));
      await writer.complete(["spans", "span_drafts", "span_places"]);
      await expect(writer.finish()).rejects.toThrow(/1 span drafts were never placed/);
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  });
});

describe("the writer on its own thread", () => {
  // The thread's caller encodes some of the spans' numbers (NumberChunks): one row group of spans
  // in batches of 64 rows, and three (16,384 rows each, the last partial) in batches of 5,000.
  // Batches reach the thread through a ring of shared memory; one larger than the ring goes in its message.
  it.each([
    [600, 64, RING_BYTES],
    [8_300, 5_000, RING_BYTES],
    [600, 64, 4096],
  ])("writes the same files as the writer in this thread (%i × 4 spans, batches of %i rows, ring of %s bytes)", async (rounds, batchRows, ringBytes) => {
    const text = mixedTrace(rounds);
    await withWorkspace(async (ws) => {
      const [a, b] = await bothWriters(ws, batchRows, (builder) => importWith(builder, text), ringBytes);
      // Same bytes: the same content addresses, table by table.
      expect(b).toEqual(a);
      expect(b.find((f) => f.table === "spans")!.row_count).toBe(rounds * 4 + 1);
      expect(b.find((f) => f.table === "measurements")!.row_count).toBe(Math.ceil(rounds / 4) * 2);
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  }, 60_000);

  it("writes the same files as the writer in this thread when batches wait for room in a ring that holds two", async () => {
    // A batch of 64 drafts takes about 6 KB of the ring: with four in flight, batches wait for the
    // thread to write the oldest (at least while it opens DuckDB), and the ring wraps around again
    // and again. The other cases never wait: the full ring has room for all, and in one of 4 KB
    // nearly every batch is too large and goes in its message.
    const text = mixedTrace(600);
    const place = vi.spyOn(BatchRing.prototype, "place");
    try {
      await withWorkspace(async (ws) => {
        const [a, b] = await bothWriters(ws, 64, (builder) => importWith(builder, text), 14_000);
        expect(b).toEqual(a);
        const placed = place.mock.results.filter((r) => r.value !== null).length;
        const refused = place.mock.results.length - placed;
        // Nearly every batch went through the ring, some after waiting for room.
        expect(placed).toBeGreaterThan(30);
        expect(refused).toBeGreaterThan(0);
      });
    } finally {
      place.mockRestore();
    }
  }, 60_000);

  it("writes the same files as the writer in this thread for a sampled profile (stacks, samples, metrics, totals)", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `main;mod${i % 13};fn${i % 101};leaf${i % 7} ${1 + (i % 5)}`);
    await withWorkspace(async (ws) => {
      const files = await bothWriters(ws, 1_000, async (builder) => {
        await foldedImporter.parse({ source: sourceFromBytes(lines.join("\n"), "stacks.folded", 4096), builder, limits: DEFAULT_IMPORT_LIMITS });
        return builder.finish();
      });
      expect(files[1]).toEqual(files[0]);
      expect(files[0].find((f) => f.table === "samples")!.row_count).toBeGreaterThan(1000);
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  }, 60_000);

  it("writes the same files as the writer in this thread when places come out of the file's order (the placed spans sorted by COPY)", async () => {
    const count = 40_000;
    // Drafts in order, coded as one builder codes them (ids continuing across batches); places in a
    // shuffled order, in batches that do not fall on the spans' 16,384-row groups.
    const coders = ["name", "category", "status", "args"].map(() => new TextCoder());
    const draftBatches = Array.from({ length: count / 8_000 }, (_, b) => {
      const ids = Array.from({ length: 8_000 }, (_, i) => b * 8_000 + i);
      const texts = ids.map((i) => [`n${i % 13}`, i % 3 === 0 ? null : "c", null, `{"i":${i}}`]);
      const columns = Object.fromEntries(
        ["name", "category", "status", "args"].map((name, c) => {
          for (const t of texts) coders[c].push(t[c]);
          return [name, coders[c].take()];
        }),
      );
      return { table: "span_drafts" as const, length: ids.length, columns: { draft_id: Float64Array.from(ids), ...columns } };
    });
    const order = Array.from({ length: count }, (_, i) => (i * 7_919) % count);
    const placeBatches = Array.from({ length: Math.ceil(count / 7_000) }, (_, b) => {
      const ids = order.slice(b * 7_000, (b + 1) * 7_000);
      return {
        table: "span_places" as const,
        length: ids.length,
        columns: {
          draft_id: Float64Array.from(ids),
          span_id: Float64Array.from(ids),
          track_id: Float64Array.from(ids, (i) => i % 4),
          parent_span_id: Float64Array.from(ids, (i) => (i % 5 === 0 ? NaN : i - 1)),
          start_ns: Float64Array.from(ids, (i) => Math.floor(i / 3) * 10),
          dur_ns: Float64Array.from(ids, (i) => i % 50),
          depth: Float64Array.from(ids, (i) => i % 6),
        },
      };
    });
    // Each writer gets its own copies of the batches.
    const copied = <T extends { columns: object }>(batch: T): T => structuredClone(batch);
    await withWorkspace(async (ws) => {
      const files = [];
      for (const writer of [await ParquetGenerationWriter.open(ws, "gen_test"), ThreadedGenerationWriter.open(ws, "gen_test")]) {
        for (const batch of [...draftBatches, ...placeBatches]) await writer.write(copied(batch));
        await writer.complete(["spans", "span_drafts", "span_places"]);
        files.push(await writer.finish());
      }
      expect(files[1]).toEqual(files[0]);
      expect(files[0].find((f) => f.table === "spans")!.row_count).toBe(count);
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  }, 60_000);

  it("writes a table out when it is declared complete, and refuses its rows after that", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      const tracks = { table: "tracks" as const, length: 1, columns: Object.fromEntries(STAGING_TABLES.tracks.map((c) => [c.name, c.type === "VARCHAR" ? codeTexts(["thread"]) : new Float64Array([0])])) };
      await writer.write(tracks);
      const objectsBefore = readdirSync(ws.layout.objects, { recursive: true }).length;
      await writer.complete(["tracks"]);
      // Its file reaches the object store before the finish (stored in the background).
      await expect.poll(() => readdirSync(ws.layout.objects, { recursive: true }).length, { timeout: 10_000 }).toBeGreaterThan(objectsBefore);
      await expect(writer.write(tracks)).rejects.toThrow(/tracks arrived after it was declared complete/);
      const files = await writer.finish();
      // Every table once, in the usual order; the early one with its row.
      expect(files.map((f) => f.table)).toEqual(TABLE_NAMES);
      expect(files.find((f) => f.table === "tracks")!.row_count).toBe(1);
    });
  }, 60_000);

  it("appends other tables' rows while a table declared complete is being written, and writes both whole", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      const rows = 300_000;
      const ids = Float64Array.from({ length: rows }, (_, i) => i);
      await writer.write({ table: "stacks", length: rows, columns: { stack_id: ids, parent_stack_id: ids.map((i) => (i === 0 ? NaN : i - 1)), frame_id: ids.map((i) => i % 97), depth: ids } });
      await writer.complete(["stacks"]);
      // complete returned with the COPY of 300 k rows under way: these appends overlap it.
      for (let start = 0; start < rows; start += 50_000) {
        const part = ids.subarray(start, start + 50_000);
        await writer.write({ table: "stack_totals", length: part.length, columns: { stack_id: part, metric_id: new Float64Array(part.length), self: part.map((i) => i * 2), total: part.map((i) => i * 3) } });
      }
      const files = await writer.finish();
      expect(files.map((f) => [f.table, f.row_count]).filter(([, count]) => count)).toEqual([
        ["stacks", rows],
        ["stack_totals", rows],
      ]);
      const file = (table: string) => sqlString(ws.objects.pathOf(files.find((f) => f.table === table)!.object_id as ObjectId));
      const stacks = (await queryDuckDb(`SELECT count(*), sum(stack_id), sum(frame_id), count(parent_stack_id) FROM read_parquet(${file("stacks")})`)).rows[0].map(Number);
      expect(stacks).toEqual([rows, (rows * (rows - 1)) / 2, ids.reduce((sum, i) => sum + (i % 97), 0), rows - 1]);
      const totals = (await queryDuckDb(`SELECT count(*), sum(self), sum(total) FROM read_parquet(${file("stack_totals")})`)).rows[0].map(Number);
      expect(totals).toEqual([rows, rows * (rows - 1), (3 * rows * (rows - 1)) / 2]);
    });
  }, 60_000);

  it("a writer that cannot open fails with its reason and its thread ends", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const before = writerThreadStats();
      // The staging directory cannot be made under a file.
      const broken = { ...ws, layout: { ...ws.layout, tmp: path.join(root, "emberscope.toml") } };
      writeFileSync(broken.layout.tmp, "");
      // Opening does not wait for the thread: its failure comes with the first write after it, or the finish.
      const writer = ThreadedGenerationWriter.open(broken, "gen_test");
      await expect(writer.finish()).rejects.toThrow(/ENOTDIR|not a directory/);
      expect(writerThreadStats()).toEqual({ started: before.started + 1, live: before.live });
      const another = ThreadedGenerationWriter.open(broken, "gen_test");
      await expect(importWith(new EvidenceBuilder(another, 64), mixedTrace())).rejects.toThrow(/ENOTDIR|not a directory/);
      await another.close();
      expect(writerThreadStats()).toEqual({ started: before.started + 2, live: before.live });
    } finally {
      ws.close();
    }
  }, 60_000);

  it("a prepared thread is the one the next writer uses", async () => {
    await withWorkspace(async (ws) => {
      const before = writerThreadStats();
      prepareWriterThread();
      prepareWriterThread();
      expect(writerThreadStats().started).toBe(before.started + 1);
      const writer = ThreadedGenerationWriter.open(ws, "gen_test");
      expect(writerThreadStats().started).toBe(before.started + 1);
      await writer.finish();
      expect(writerThreadStats().live).toBe(before.live);
    });
  }, 60_000);

  it("a failure on the thread fails the extraction's next step, and leaves no staging files", async () => {
    await withWorkspace(async (ws) => {
      const writer = ThreadedGenerationWriter.open(ws, "gen_test");
      await writer.write({ table: "no_such_table" as never, length: 1, columns: { x: new Float64Array([1]) } });
      await expect(writer.finish()).rejects.toThrow(/no_such_table/);
      await writer.close();
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  }, 60_000);
});

describe("the Parquet writer on observed values", () => {
  it("rounds a fractional line number instead of failing the import, as the in-memory sink does", async () => {
    const profile = JSON.stringify({
      nodes: [
        { id: 1, callFrame: { functionName: "(root)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 }, children: [2] },
        { id: 2, callFrame: { functionName: "work", scriptId: "1", url: "file:///a.js", lineNumber: 2.5, columnNumber: 1e12 } },
      ],
      startTime: 0,
      endTime: 100,
      samples: [2, 2],
      timeDeltas: [10, 10],
    });
    const memory = new MemorySink();
    await importProfile(new EvidenceBuilder(memory), profile);
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await importProfile(new EvidenceBuilder(writer), profile);
      const files = await writer.finish();
      const framesFile = files.find((f) => f.table === "frames")!;
      const stored = (await queryDuckDb(`SELECT name, line, col FROM read_parquet(${sqlString(ws.objects.pathOf(framesFile.object_id as ObjectId))})`)).objects;
      expect(stored).toEqual(memory.tables.frames.map((f) => ({ name: f.name, line: f.line, col: f.col })));
      expect(memory.tables.frames).toMatchObject([{ name: "work", line: 4, col: null }]);
    });
  });
});

describe("text columns staged as dictionary ids while their values repeat", () => {
  /**
   * Measurements keep insertion order in their file, so each row read back must equal the row
   * written, whichever way its text was staged. Columns: name repeats (12 values); unit is mostly
   * null; aggregation repeats for 10 k rows, then every value is new; trial_id is unique from the
   * start; dimensions cycles through 10 k values in runs of four (more than a dictionary holds), long
   * and non-ASCII ones among them. A NUL and a lone surrogate come through as the text path stores them.
   */
  function measurementRows(count: number) {
    const odd = ["naïve ☃ 日本語 🔥", "a\u0000b", "x\ud800y", "'quoted' \\ back", "x".repeat(20_000), "", " "];
    return Array.from({ length: count }, (_, i) => ({
      name: `metric_${i % 12}`,
      value: i * 0.5,
      unit: i % 5 === 0 ? "ns" : null,
      aggregation: i < 10_000 ? `agg_${i % 3}` : `agg_unique_${i}`,
      trial_id: `trial_${i}`,
      is_warmup: i % 7 === 0,
      dimensions: i % 97 === 0 ? odd[(i / 97) % odd.length] : i % 11 === 0 ? null : `{"k":${Math.floor(i / 4) % 10_000}}`,
    }));
  }

  async function writeAndReadBack(rows: ReturnType<typeof measurementRows>, options: { spillRows?: number; batchRows?: number }) {
    return withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test", { spillRows: options.spillRows });
      const batchRows = options.batchRows ?? 5_000;
      // A column's coder keeps its dictionary from batch to batch, as the builder's do.
      const coders = new Map<string, TextCoder>();
      for (let start = 0; start < rows.length; start += batchRows) {
        const part = rows.slice(start, start + batchRows);
        const text = (key: keyof (typeof rows)[number]) => {
          if (!coders.has(key)) coders.set(key, new TextCoder());
          const coder = coders.get(key)!;
          for (const r of part) coder.push(r[key] as string | null);
          return coder.take();
        };
        await writer.write({
          table: "measurements",
          length: part.length,
          columns: { name: text("name"), value: Float64Array.from(part, (r) => r.value), unit: text("unit"), aggregation: text("aggregation"), trial_id: text("trial_id"), is_warmup: part.map((r) => r.is_warmup), dimensions: text("dimensions") },
        });
      }
      const files = await writer.finish();
      const file = files.find((f) => f.table === "measurements")!;
      expect(file.row_count).toBe(rows.length);
      return (await queryDuckDb(`SELECT * EXCLUDE (generation_id) FROM read_parquet(${sqlString(ws.objects.pathOf(file.object_id as ObjectId))})`)).objects;
    });
  }

  /** What the text path stores: lone surrogates become U+FFFD on the way to UTF-8. */
  function asStored(value: string | null): string | null {
    return value === null ? null : value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  }

  it.each([
    ["in staging tables", undefined],
    ["spilled to part files every 3,000 rows", 3_000],
  ])("every value comes back as written, in order (%s)", async (_label, spillRows) => {
    const rows = measurementRows(50_000);
    const stored = await writeAndReadBack(rows, { spillRows });
    expect(stored).toHaveLength(rows.length);
    const expected = rows.map((r) => ({ ...r, unit: asStored(r.unit), dimensions: asStored(r.dimensions) }));
    for (let i = 0; i < rows.length; i++) {
      if (JSON.stringify(stored[i]) !== JSON.stringify(expected[i])) expect({ row: i, ...stored[i] }).toEqual({ row: i, ...expected[i] });
    }
    expect(stored[97 * 1]).toMatchObject({ dimensions: "a\u0000b" });
    expect(stored[97 * 2]).toMatchObject({ dimensions: "x\ufffdy" });
    expect(stored[97 * 4]!.dimensions).toHaveLength(20_000);
  }, 60_000);

  it("a column of only nulls, a single row, and batches not a multiple of 2,048 rows", async () => {
    const rows = measurementRows(3).map((r) => ({ ...r, unit: null, dimensions: null }));
    expect(await writeAndReadBack(rows, { batchRows: 1 })).toEqual(rows);
    const many = measurementRows(4_099).map((r, i) => ({ ...r, unit: i === 4_098 ? "last" : null }));
    const stored = await writeAndReadBack(many, { batchRows: 2_049 });
    expect(stored.map((r) => r.unit)).toEqual(many.map((r) => r.unit));
    expect(stored.map((r) => r.name)).toEqual(many.map((r) => r.name));
  }, 60_000);
});

describe("spans are written in (start_ns, track_id, span_id) order, their text decoded after the sort", () => {
  /**
   * Spans given whole and spans drafted then placed, in one generation: each staging table codes
   * its text with dictionaries of its own (id 0 is a different name in each), places come in an
   * order of their own (neither the drafts' nor the files'), and starts tie within and across tracks.
   */
  async function produce(builder: EvidenceBuilder, count: number) {
    const tracks = [0, 1, 2].map((t) => builder.track({ processId: 1, threadId: t, kind: "thread" }));
    for (let i = 0; i < count; i++) {
      builder.span({ trackId: tracks[i % 3], name: `whole_${i % 5}`, category: i % 2 ? "w" : null, startNs: Math.floor(i / 4) * 10, durNs: 5, depth: 0, args: i % 3 ? { i } : null });
    }
    for (let d = 0; d < count; d++) builder.spanDraft(d, { name: `drafted_${d % 7}`, category: "c", status: d % 11 === 0 ? "error" : null, args: { d } });
    for (let k = 0; k < count; k++) {
      // 7,919 is prime and does not divide count: k -> d visits every draft once, out of order.
      const d = (k * 7919) % count;
      builder.placeSpan(d, { spanId: builder.allocateSpanId(), trackId: tracks[d % 3], parentSpanId: d % 5 === 0 ? null : 0, startNs: Math.floor(d / 3) * 10, durNs: d % 4, depth: d % 5 === 0 ? 0 : 1 });
      if (k % 100 === 99) await builder.checkpoint();
    }
    return builder.finish();
  }

  it.each([
    ["in staging tables", undefined],
    ["spilled to part files every 500 rows", 500],
  ])("the file holds the in-memory sink's spans in that order (%s)", async (_label, spillRows) => {
    const count = 3_000;
    const memory = new MemorySink();
    await produce(new EvidenceBuilder(memory, 64), count);
    const key = (s: Record<string, unknown>) => [s.start_ns, s.track_id, s.span_id] as number[];
    const expected = [...memory.tables.spans].sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
    expect(expected).toHaveLength(2 * count);

    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test", { spillRows });
      await produce(new EvidenceBuilder(writer, 64), count);
      const spansFile = (await writer.finish()).find((f) => f.table === "spans")!;
      // No ORDER BY: the rows as the file holds them.
      const stored = (await queryDuckDb(`SELECT * EXCLUDE (generation_id) FROM read_parquet(${sqlString(ws.objects.pathOf(spansFile.object_id as ObjectId))})`)).objects.map(normalize);
      expect(stored.map((s) => key(s).join("/"))).toEqual(expected.map((s) => key(s).join("/")));
      expect(stored).toEqual(expected.map(normalize));
    });
  }, 60_000);
});

async function importProfile(builder: EvidenceBuilder, text: string) {
  await cpuprofileImporter.parse({ source: sourceFromBytes(text, "a.cpuprofile"), builder, limits: DEFAULT_IMPORT_LIMITS });
  return builder.finish();
}

/** Rows as plain JSON values (DuckDB gives BIGINTs as strings in JSON form). */
function normalize(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : typeof v === "string" && /^-?\d+$/.test(v) && k !== "name" ? Number(v) : v]));
}
