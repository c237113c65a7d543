import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EvidenceBuilder, STAGING_TABLES, type RowBatch, type StagingTableName } from "../../analysis/evidence/builder";
import { codeTexts } from "../../analysis/evidence/text-coding";
import { chromeTraceImporter } from "../../analysis/formats/chrome-trace";
import { foldedImporter } from "../../analysis/formats/folded";
import { sourceFromBytes } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS } from "../../analysis/formats/types";
import { sqlString } from "../../server/evidence/duckdb";
import { StagedRows, type StagedColumn } from "../../server/evidence/parquet-staging";
import { ParquetGenerationWriter } from "../../server/evidence/parquet-writer";
import type { ObjectId } from "../../server/store/object-store";
import { parquetContent, queryDuckDb, rowGroupSizes, rowGroupStatistics } from "../helpers/duckdb";
import { tempProject, withWorkspace } from "../helpers/project";

const query = async (sql: string): Promise<unknown[][]> => (await queryDuckDb(sql)).rows;

/** Stages `columns` (one Float64Array per number column, strings or nulls per TEXT column) in batches of `batchRows`, and reads the file back with DuckDB, in file order. */
async function stageAndRead(columns: StagedColumn[], values: (Float64Array | (string | null)[])[], batchRows: number, textBytesPerRowGroup?: number) {
  const file = path.join(tempProject(), "staged.parquet");
  const staged = new StagedRows(file, columns, textBytesPerRowGroup);
  const length = values[0].length;
  for (let start = 0; start < length; start += batchRows) {
    const rows = Math.min(batchRows, length - start);
    staged.append(
      values.map((v) => (v instanceof Float64Array ? v.subarray(start, start + rows) : codeTexts(v.slice(start, start + rows), false))),
      rows,
    );
  }
  staged.finish();
  const names = columns.map((c) => `"${c.name}"`).join(", ");
  const rows = await query(`SELECT ${names} FROM read_parquet(${sqlString(file)})`);
  const types = await query(`SELECT column_type FROM (DESCRIBE SELECT ${names} FROM read_parquet(${sqlString(file)}))`);
  return { rows, types: types.map((t) => t[0]), groups: await rowGroupSizes(file) };
}

/** What the appender path stores for an INTEGER column (fillInteger): rounded, or NULL when NaN or beyond an int32. */
function asInteger(value: number): number | null {
  return value === value && Math.abs(value) <= 2 ** 31 - 1 ? Math.round(value) + 0 : null;
}

describe("rows staged as a plain Parquet file", () => {
  const columns: StagedColumn[] = [
    { name: "d", type: "DOUBLE" },
    { name: "i", type: "INT32" },
  ];

  it("reads back every value: NaN, -0, integers to 2^53, the largest doubles; int32 columns rounded or NULL", async () => {
    const doubles = [NaN, -0, 0, 1.5, -1.5, 2 ** 53, -(2 ** 53), 2 ** 53 - 1, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity];
    const integers = [NaN, -0, 2.5, -2.5, 0.49999999999999994, -0.5, 2 ** 31 - 1, -(2 ** 31 - 1), 2 ** 31, -(2 ** 31), 2147483647.4, 2147483646.6, Infinity];
    const { rows, types } = await stageAndRead(columns, [Float64Array.from(doubles), Float64Array.from(integers)], 5);
    expect(types).toEqual(["DOUBLE", "INTEGER"]);
    expect(rows.map((r) => r[0])).toEqual(doubles);
    expect(Object.is(rows[1][0], -0)).toBe(true);
    expect(rows.map((r) => r[1])).toEqual(integers.map(asInteger));
    expect(rows.map((r) => r[1])).toEqual([null, 0, 3, -2, 0, 0, 2 ** 31 - 1, -(2 ** 31 - 1), null, null, null, 2 ** 31 - 1, null]);
  });

  it("reads back text as it was: NULL, empty, non-ASCII, a lone surrogate as U+FFFD, long; beside numbers", async () => {
    const texts = [null, "", "a", "é", "日本語", "🔥x", "\ud800", "tab\tquote\"nul\u0000", "L".repeat(70_000), null, "{\"i\":1}"];
    const withText: StagedColumn[] = [{ name: "t", type: "TEXT" }, ...columns, { name: "u", type: "TEXT" }];
    const numbers = Float64Array.from(texts, (_, i) => i);
    const nulls = texts.map(() => null);
    for (const batchRows of [1, 4, 100]) {
      const { rows, types } = await stageAndRead(withText, [texts, numbers, numbers, nulls], batchRows);
      expect(types).toEqual(["VARCHAR", "DOUBLE", "INTEGER", "VARCHAR"]);
      expect(rows.map((r) => r[0])).toEqual(texts.map((t) => (t === "\ud800" ? "\ufffd" : t)));
      expect(rows.map((r) => r[2])).toEqual(texts.map((_, i) => i));
      expect(rows.map((r) => r[3])).toEqual(nulls);
    }
    // Many row groups of text, NULLs among them.
    const count = 300_001;
    const many = Array.from({ length: count }, (_, i) => (i % 7 === 0 ? null : `span ${i} ${"x".repeat(i % 13)}`));
    const { rows, groups } = await stageAndRead([{ name: "t", type: "TEXT" }], [many], 65_536);
    expect(groups.length).toBeGreaterThan(2);
    expect(rows.map((r) => r[0])).toEqual(many);
  });

  it("cuts a row group early once a text column holds its bound of bytes, keeping every row", async () => {
    const texts = Array.from({ length: 20_000 }, (_, i) => (i % 11 === 0 ? null : `${"é".repeat(i % 50)}${i}`));
    const numbers = Float64Array.from(texts, (_, i) => i);
    const { rows, groups } = await stageAndRead([{ name: "t", type: "TEXT" }, { name: "d", type: "DOUBLE" }], [texts, numbers], 3_000, 100_000);
    // Rows are cut by vector (2,048 rows), once a vector's end passes 100,000 bytes of text.
    expect(groups.length).toBeGreaterThan(5);
    expect(Math.max(...groups)).toBeLessThanOrEqual(2 * 2_048);
    expect(rows).toEqual(texts.map((t, i) => [t, i]));
  });

  it("an empty file has the columns' types and no rows; a single row is a row group of its own", async () => {
    const empty = await stageAndRead(columns, [new Float64Array(0), new Float64Array(0)], 1);
    expect(empty).toEqual({ rows: [], types: ["DOUBLE", "INTEGER"], groups: [] });
    const single = await stageAndRead(columns, [Float64Array.of(7), Float64Array.of(NaN)], 1);
    expect(single).toEqual({ rows: [[7, null]], types: ["DOUBLE", "INTEGER"], groups: [1] });
  });

  it.each([
    ["in batches of 65,761 rows", 65_761],
    ["in batches of 2,049 rows", 2_049],
    ["in batches of 1,000 rows", 1_000],
  ])("keeps many row groups' rows in order, NULLs where they were (%s)", async (_label, batchRows) => {
    const count = 700_001;
    const d = Float64Array.from({ length: count }, (_, i) => (i % 5 === 0 ? NaN : i * 0.25));
    // NULLs in runs and alone, and a row group without any (from row 500,000).
    const i32 = Float64Array.from({ length: count }, (_, i) => (i < 500_000 && (i % 3 === 0 || (i > 1000 && i < 5000)) ? NaN : i));
    const { rows, groups } = await stageAndRead(columns, [d, i32], batchRows);
    expect(rows).toHaveLength(count);
    expect(groups.reduce((sum, n) => sum + n, 0)).toBe(count);
    expect(groups.length).toBeGreaterThan(5);
    for (let row = 0; row < count; row++) {
      const [a, b] = rows[row] as [number, number | null];
      const expected = [d[row], asInteger(i32[row])];
      if (!Object.is(a, expected[0]) || b !== expected[1]) expect({ row, a, b }).toEqual({ row, a: expected[0], b: expected[1] });
    }
  }, 60_000);
});

/** Every staging table of numbers only, the ones staged in files. */
const NUMERIC_TABLES = (Object.keys(STAGING_TABLES) as StagingTableName[]).filter((t) => STAGING_TABLES[t].every((c) => c.type !== "VARCHAR" && c.type !== "BOOLEAN"));

describe("the Parquet writer stages tables of numbers, and span drafts, in files", () => {
  it("stages exactly the tables whose columns are all numbers", () => {
    expect(NUMERIC_TABLES.sort()).toEqual(["frame_totals", "samples", "span_places", "stack_totals", "stacks"]);
  });

  /** The output tables among them, written into their final files as their rows arrive. */
  const FINAL_TABLES: string[] = ["frame_totals", "samples", "stack_totals", "stacks"];

  /**
   * The generation's files (table → rows and content address), staged one way or the other. The
   * tables of numbers that staging in files writes straight into their final files (not by COPY)
   * are compared by what DuckDB reads of them (columns, rows in order), their statistics checked
   * against their rows.
   */
  async function filesOf(stagedInFiles: boolean, produce: (writer: ParquetGenerationWriter) => Promise<void>) {
    return withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test", { stagedInFiles });
      await produce(writer);
      const files = await writer.finish();
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
      const described = await Promise.all(
        files.map(async (f) => {
          if (!FINAL_TABLES.includes(f.table)) return [f.table, `${f.row_count} ${f.object_id}`] as const;
          const file = ws.objects.pathOf(f.object_id as ObjectId);
          // Row groups fall where the COPY's input chunks end, or at exactly 122,880 rows.
          expect(await rowGroupStatistics(file, "footer")).toEqual(await rowGroupStatistics(file, "rows"));
          return [f.table, { rows: f.row_count, read: await parquetContent(file) }] as const;
        }),
      );
      return Object.fromEntries(described);
    });
  }

  /** Rows of stacks and samples with odd values, in batches of uneven sizes (as checkpoints cut them). */
  async function writeNumbers(writer: ParquetGenerationWriter, rows: number, batchSizes: number[]) {
    let k = 0;
    for (let start = 0; start < rows; k++) {
      const length = Math.min(batchSizes[k % batchSizes.length], rows - start);
      const ids = Float64Array.from({ length }, (_, i) => start + i);
      const batch = (table: StagingTableName, columns: Record<string, Float64Array>): RowBatch => ({ table, length, columns });
      await writer.write(
        batch("stacks", {
          stack_id: ids,
          parent_stack_id: ids.map((i) => (i % 97 === 0 ? NaN : i - 1)),
          frame_id: ids.map((i) => (i % 1001 === 0 ? 2 ** 31 : i % 5003)),
          depth: ids.map((i) => (i % 7 === 0 ? i / 4 : i % 50)),
        }),
      );
      await writer.write(
        batch("samples", {
          stack_id: ids,
          track_id: ids.map((i) => (i % 3 === 0 ? NaN : i % 11)),
          time_ns: ids.map((i) => (i % 13 === 0 ? NaN : 2 ** 53 - i)),
          metric_id: new Float64Array(length),
          value: ids.map((i) => -i),
        }),
      );
      start += length;
    }
  }

  it.each([
    ["a few rows in one batch", 1_000, [1_000]],
    ["rows in batches not a multiple of 2,048", 700_000, [65_761, 1, 2_049, 65_536, 30_000]],
    // The 220 MB folded file's sample batches.
    ["batches as a large import sends them", 629_805, [65_761, 65_838, 65_818, 65_820, 65_823, 65_852, 65_683, 66_004, 65_819, 37_387]],
    // A flush of 205,475 rows ([122,880, 82,595]), then a last one of 100,000 that fills up the second row group.
    ["a last flush smaller than a row group", 305_475, [65_761]],
  ])("writes the same files as staging through DuckDB's appender (%s)", async (_label, rows, batchSizes) => {
    const produce = async (writer: ParquetGenerationWriter) => {
      await writeNumbers(writer, rows, batchSizes);
      await writer.complete(["stacks"]);
    };
    const [appended, staged] = [await filesOf(false, produce), await filesOf(true, produce)];
    expect(staged).toEqual(appended);
    expect(staged.stacks).toMatchObject({ rows });
  }, 120_000);

  it("writes the same files as the appender for an import (folded stacks, and a trace's drafted spans)", async () => {
    const folded = Array.from({ length: 3_000 }, (_, i) => `main;f${i % 17};g${i % 113};h${i} ${1 + (i % 9)}`).join("\n");
    // Span text of every kind: names repeating, then past the dictionary's 8,192 entries; args
    // repeating, unique (no longer coded), non-ASCII, with a lone surrogate; categories and none;
    // an unfinished slice's status.
    const name = (i: number) => (i < 6_000 ? `t${i % 7}` : `n${i}`);
    const args = (i: number) => (i % 4 === 0 ? { i: i % 5 } : i % 4 === 1 ? { i, s: "é日本🔥" } : i % 4 === 2 ? { bad: "\ud800" } : undefined);
    const trace = JSON.stringify({
      traceEvents: [
        ...Array.from({ length: 15_000 }, (_, i) => [
          { name: name(i), cat: i % 3 === 0 ? "c1" : undefined, ph: "B", pid: 1, tid: 1 + (i % 3), ts: i * 10, args: args(i) },
          { name: name(i), ph: "E", pid: 1, tid: 1 + (i % 3), ts: i * 10 + 5 },
        ]).flat(),
        { name: "never ends", ph: "B", pid: 1, tid: 9, ts: 5 },
      ],
    });
    for (const [importer, text, table] of [
      [foldedImporter, folded, "stacks"],
      [chromeTraceImporter, trace, "spans"],
    ] as const) {
      const produce = async (writer: ParquetGenerationWriter) => {
        const builder = new EvidenceBuilder(writer, 700);
        await importer.parse({ source: sourceFromBytes(text, "input", 4096), builder, limits: DEFAULT_IMPORT_LIMITS });
        await builder.finish();
      };
      const [appended, staged] = [await filesOf(false, produce), await filesOf(true, produce)];
      expect(staged).toEqual(appended);
      // The stacks and the drafted spans came through: not a comparison of empty files.
      expect(table === "spans" ? staged.spans : staged.stacks).toEqual(table === "spans" ? expect.stringMatching(/^15001 /) : expect.objectContaining({ rows: expect.any(Number) as number }));
    }
  }, 120_000);

  it("writes spans in the file's order whether their places come in that order (no sort) or not (sorted)", async () => {
    const count = 5_000;
    // Starts tie in sevens, across four tracks; drafts come in another order than places.
    const keys = Array.from({ length: count }, (_, i) => ({ draft: i, span: (i * 7919) % count, track: i % 4, start: Math.floor(i / 7) * 10 }));
    const inFileOrder = [...keys].sort((a, b) => a.start - b.start || a.track - b.track || a.span - b.span);
    const shuffled = [...keys].sort((a, b) => ((a.draft * 104729) % count) - ((b.draft * 104729) % count));
    const produce = (places: typeof keys) => async (writer: ParquetGenerationWriter) => {
      const drafts = [...keys].reverse();
      await writer.write({
        table: "span_drafts",
        length: count,
        columns: {
          draft_id: Float64Array.from(drafts, (k) => k.draft),
          name: codeTexts(drafts.map((k) => `n${k.draft % 13}`)),
          category: codeTexts(drafts.map((k) => (k.draft % 3 === 0 ? null : "c"))),
          status: codeTexts(drafts.map(() => null)),
          args: codeTexts(drafts.map((k) => `{"i":${k.draft}}`)),
        },
      });
      await writer.write({
        table: "span_places",
        length: count,
        columns: {
          draft_id: Float64Array.from(places, (k) => k.draft),
          span_id: Float64Array.from(places, (k) => k.span),
          track_id: Float64Array.from(places, (k) => k.track),
          parent_span_id: new Float64Array(count).fill(NaN),
          start_ns: Float64Array.from(places, (k) => k.start),
          dur_ns: Float64Array.from(places, () => 5),
          depth: new Float64Array(count),
        },
      });
    };
    const inOrder = await filesOf(true, produce(inFileOrder));
    expect(inOrder.spans).toMatch(/^5000 /);
    expect(await filesOf(true, produce(shuffled))).toEqual(inOrder);
    expect(await filesOf(false, produce(inFileOrder))).toEqual(inOrder);
  });

  it("refuses a batch for a table staged in a file once it was declared complete", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(writer, 10, [10]);
      await writer.complete(["stacks"]);
      await expect(writeNumbers(writer, 10, [10])).rejects.toThrow(/stacks arrived after it was declared complete/);
      const files = await writer.finish();
      expect(files.find((f) => f.table === "stacks")!.row_count).toBe(10);
    });
  });

  it("a writer closed while staging, or whose COPY failed, leaves no staged or part-written files behind", async () => {
    await withWorkspace(async (ws) => {
      const closed = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(closed, 300_000, [65_536]);
      await closed.write({ table: "span_places", length: 1, columns: { draft_id: Float64Array.of(1), span_id: Float64Array.of(0), track_id: Float64Array.of(0), parent_span_id: Float64Array.of(NaN), start_ns: Float64Array.of(0), dur_ns: Float64Array.of(1), depth: Float64Array.of(0) } });
      const inTmp = readdirSync(ws.layout.tmp, { recursive: true }).map((f) => path.basename(String(f)));
      expect(inTmp).toEqual(expect.arrayContaining(["span_places.staged.parquet", "stacks.parquet", "samples.parquet"]));
      await closed.close();
      expect(readdirSync(ws.layout.tmp)).toEqual([]);

      // A place whose draft is missing: the spans COPY, reading the staged places, fails.
      const failed = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(failed, 1_000, [1_000]);
      await failed.write({ table: "span_places", length: 1, columns: { draft_id: Float64Array.of(1), span_id: Float64Array.of(0), track_id: Float64Array.of(0), parent_span_id: Float64Array.of(NaN), start_ns: Float64Array.of(0), dur_ns: Float64Array.of(1), depth: Float64Array.of(0) } });
      await expect(failed.finish()).rejects.toThrow(/do not pair up: 0 spans written, 1 expected/);
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  }, 60_000);

  it("stored values are those the appender path stores (the files, read back)", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(writer, 1_002, [1_002]);
      const files = await writer.finish();
      const file = (table: string) => sqlString(ws.objects.pathOf(files.find((f) => f.table === table)!.object_id as ObjectId));
      const stacks = await query(`SELECT stack_id, parent_stack_id, frame_id, depth FROM read_parquet(${file("stacks")}) WHERE stack_id IN (0, 7, 97, 1001)`);
      expect(stacks).toEqual([
        [0, null, null, 0],
        [7, 6, 7, 2],
        [97, null, 97, 47],
        [1001, 1000, null, 250],
      ]);
      const samples = await query(`SELECT stack_id, track_id, time_ns, value FROM read_parquet(${file("samples")}) WHERE stack_id IN (0, 1, 2)`);
      expect(samples).toEqual([
        [0, null, null, 0n],
        [1, 1, BigInt(2 ** 53 - 1), -1n],
        [2, 2, BigInt(2 ** 53 - 2), -2n],
      ]);
    });
  });
});
