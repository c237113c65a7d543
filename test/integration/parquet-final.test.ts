import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { tableFromIPC } from "apache-arrow";
import { describe, expect, it } from "vitest";
import { EvidenceBuilder, type RowBatch, type StagingTableName } from "../../analysis/evidence/builder";
import { codeTexts, TextCoder, TextDecoding } from "../../analysis/evidence/text-coding";
import { chromeTraceImporter } from "../../analysis/formats/chrome-trace";
import { foldedImporter } from "../../analysis/formats/folded";
import { sourceFromBytes } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS } from "../../analysis/formats/types";
import { calleesQuery, callersQuery, compareQuery, flameTreeQuery, hotspotsQuery, stackExamplesQuery } from "../../analysis/queries";
import { parquetFileToArrowIpc } from "../../components/sql/parquet-to-arrow";
import { sqlString } from "../../server/evidence/duckdb";
import { openEvidence } from "../../server/evidence/engine";
import { FinalParquetFile, NumberChunks, type FinalColumn, type NumericFinalColumn } from "../../server/evidence/parquet-final";
import { ParquetGenerationWriter } from "../../server/evidence/parquet-writer";
import { registerArtifact } from "../../server/store/artifacts";
import type { ObjectId } from "../../server/store/object-store";
import { publishGeneration } from "../../server/store/corpus";
import { createRun } from "../../server/store/runs";
import { columnEncodings, parquetContent, queryDuckDb, rowGroupSizes, rowGroupStatistics } from "../helpers/duckdb";
import { tempProject, withWorkspace } from "../helpers/project";

const query = async (sql: string): Promise<unknown[][]> => (await queryDuckDb(sql)).rows;

/** A seeded xorshift generator: the same values on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** A column's values: numbers (NaN for NULL), or text. */
type Values = Float64Array | (string | null)[];

/** A text column, with the dictionary its batches teach. */
const textColumn = (name: string): FinalColumn => ({ name, type: "VARCHAR", nullable: true, dictionary: new TextDecoding() });

/**
 * Writes `values` in batches cycling through `batchSizes`, text coded as the builder codes it
 * (dictionary ids continuing across batches; `coding` false: all as text); returns the file.
 */
function writeFile(columns: FinalColumn[], values: Values[], batchSizes: number[], rowGroupRows?: number, coding = true): string {
  const file = path.join(tempProject(), "final.parquet");
  const writer = new FinalParquetFile(file, "gen_test", columns, rowGroupRows);
  const coders = columns.map(() => new TextCoder(1024, coding));
  const length = values[0]?.length ?? 0;
  for (let start = 0, k = 0; start < length; k++) {
    const rows = Math.min(batchSizes[k % batchSizes.length], length - start);
    writer.append(
      values.map((v, c) => {
        if (v instanceof Float64Array) return v.subarray(start, start + rows);
        for (const value of v.slice(start, start + rows)) coders[c].push(value);
        const coded = coders[c].take();
        (columns[c] as { dictionary: TextDecoding }).dictionary.learn(coded);
        return coded;
      }),
      rows,
    );
    start += rows;
  }
  expect(writer.finish()).toBe(length);
  return file;
}

/** What the COPY wrote for a staged value: INTEGER rounded or NULL (as staged), BIGINT cast (ties to even), DOUBLE NaN as NULL when nullable. */
function expected(column: FinalColumn, value: number): number | bigint | null {
  if (column.type === "INTEGER") return value === value && Math.abs(value) <= 2 ** 31 - 1 ? Math.round(value) + 0 : null;
  if (column.type === "BIGINT") {
    if (value !== value) return null;
    const rounded = Math.round(value);
    return BigInt(rounded - value === 0.5 && rounded % 2 !== 0 ? rounded - 1 : rounded);
  }
  return value !== value && column.nullable ? null : value;
}

async function readBack(file: string, columns: readonly FinalColumn[]) {
  const names = columns.map((c) => `"${c.name}"`).join(", ");
  return query(`SELECT ${names} FROM read_parquet(${sqlString(file)})`);
}

const ALL_TYPES: FinalColumn[] = [
  { name: "i", type: "INTEGER", nullable: true },
  { name: "b", type: "BIGINT", nullable: true },
  { name: "d", type: "DOUBLE", nullable: true },
  { name: "nd", type: "DOUBLE", nullable: false },
];

describe("final Parquet files", () => {
  it("reads back edge values: NULLs, negatives, 0, ±2^53, jumps across the whole range, ties rounded as the COPY cast them", async () => {
    const integers = [NaN, 0, -0, 1, -1, 2.5, -2.5, 2 ** 31 - 1, -(2 ** 31 - 1), 2 ** 31, -(2 ** 31), -(2 ** 31 - 1), 2 ** 31 - 1, 7, Infinity];
    const bigints = [NaN, 0, -0, 2 ** 53, -(2 ** 53), 2 ** 53, 2 ** 53 - 1, -(2 ** 53 - 1), 2.5, 3.5, -2.5, -3.5, 2 ** 62, -(2 ** 63), 5];
    const doubles = [NaN, 0, -0, 1.5, -1.5, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity, 0.1, 1e-300, 3];
    const notNull = doubles.map((d, i) => (i === 0 ? 4 : d));
    const columns = [integers, bigints, doubles, notNull].map((v) => Float64Array.from(v));
    for (const batch of [1, 4, 15]) {
      const rows = await readBack(writeFile(ALL_TYPES, columns, [batch]), ALL_TYPES);
      expect(rows).toEqual(integers.map((_, r) => ALL_TYPES.map((c, i) => expected(c, columns[i][r]))));
    }
  });

  it("deltas of BIGINT values across ±2^53 are exact, in pages within 2^52 of each other or spread wider", async () => {
    const b: FinalColumn[] = [{ name: "b", type: "BIGINT", nullable: false }];
    const next = random(7);
    // Near the top: every delta small, the values beyond what doubles hold as odd numbers only.
    const near = Float64Array.from({ length: 1_000 }, (_, i) => 2 ** 53 - 1 - i * (i % 2) - Math.floor(next() * 3));
    // Alternating between the ends: deltas of 2^54 - 2 each way.
    const ends = Float64Array.from({ length: 1_000 }, (_, i) => (i % 2 ? 2 ** 53 : -(2 ** 53)) + (i % 3));
    // Random values over the whole range of exact integers, and up to 2^62.
    const wide = Float64Array.from({ length: 1_000 }, () => Math.floor((next() - 0.5) * 2 ** 54));
    const huge = Float64Array.from({ length: 1_000 }, (_, i) => (i % 2 ? 1 : -1) * Math.floor(next() * 2 ** 40) * 2 ** 22);
    for (const values of [near, ends, wide, huge]) {
      const rows = await readBack(writeFile(b, [values], [333]), b);
      expect(rows.map((r) => r[0])).toEqual(Array.from(values, (v) => BigInt(v)));
    }
  });

  it("round-trips random columns of every type over row-group edges: empty, 1, 122,880 and 122,881 rows, in batches of odd sizes", async () => {
    const next = random(42);
    const spreads = [1, 100, 2 ** 20, 2 ** 31, 2 ** 40, 2 ** 53];
    for (const rows of [0, 1, 122_880, 122_881, 250_000]) {
      const spread = spreads[rows % spreads.length];
      const columns = ALL_TYPES.map((c) =>
        Float64Array.from({ length: rows }, (_, r) => {
          const u = next();
          if (u < 0.05) return NaN;
          // Runs of one value, sequences and random jumps.
          if (u < 0.3) return 0;
          if (u < 0.5) return r;
          const value = (next() - 0.5) * spread;
          return c.type === "DOUBLE" && u < 0.6 ? value : Math.round(value);
        }),
      );
      const file = writeFile(ALL_TYPES, columns, [65_761, 1, 2_049, 7]);
      const read = await readBack(file, ALL_TYPES);
      expect(read.length).toBe(rows);
      for (let r = 0; r < rows; r++) {
        const want = ALL_TYPES.map((c, i) => expected(c, columns[i][r]));
        if (JSON.stringify(read[r], (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) !== JSON.stringify(want, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))) {
          expect([r, ...read[r]]).toEqual([r, ...want]);
        }
      }
      expect(await rowGroupSizes(file)).toEqual(rows === 0 ? [] : [...Array<number>(Math.floor(rows / 122_880)).fill(122_880), ...(rows % 122_880 ? [rows % 122_880] : [])]);
    }
  }, 120_000);

  it("has the columns, types and repetition of the file DuckDB's COPY wrote", async () => {
    const file = writeFile(ALL_TYPES, ALL_TYPES.map(() => Float64Array.of(1, NaN)), [2]);
    const copied = path.join(tempProject(), "copied.parquet");
    await queryDuckDb(`COPY (SELECT 'gen_test' AS generation_id, 1::INTEGER AS i, 1::BIGINT AS b, 1::DOUBLE AS d, 1::DOUBLE AS nd) TO ${sqlString(copied)} (FORMAT parquet)`);
    const described = async (f: string) => {
      const columns = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${sqlString(f)}))`);
      // The first row is the root, named as each writer names it.
      const schema = await query(`SELECT name, type, repetition_type, converted_type, logical_type FROM parquet_schema(${sqlString(f)}) OFFSET 1`);
      return { columns, schema };
    };
    expect(await described(file)).toEqual(await described(copied));
    expect((await described(file)).columns).toEqual([
      ["generation_id", "VARCHAR"],
      ["i", "INTEGER"],
      ["b", "BIGINT"],
      ["d", "DOUBLE"],
      ["nd", "DOUBLE"],
    ]);
  });

  it("codes integers by dictionary while they repeat and else as deltas, doubles by dictionary while they repeat, and each chunk's min, max and NULLs as its rows have them", async () => {
    const next = random(3);
    const rows = 300_000;
    const columns: FinalColumn[] = [
      { name: "seq", type: "INTEGER", nullable: false },
      { name: "big", type: "BIGINT", nullable: true },
      { name: "wide", type: "BIGINT", nullable: false },
      { name: "few", type: "DOUBLE", nullable: false },
      { name: "many", type: "DOUBLE", nullable: true },
      { name: "none", type: "INTEGER", nullable: true },
      { name: "fewint", type: "INTEGER", nullable: true },
      { name: "fewbig", type: "BIGINT", nullable: false },
    ];
    const values = [
      Float64Array.from({ length: rows }, (_, r) => r),
      Float64Array.from({ length: rows }, (_, r) => (r % 10 === 0 ? NaN : -(2 ** 40) + Math.floor(next() * 1e9))),
      // Values spread over more than 2^52 in every row group, and too many to code by dictionary:
      // too wide for exact deltas in doubles.
      Float64Array.from({ length: rows }, (_, r) => (r % 2 ? 2 ** 53 : -(2 ** 53)) + (r % 2 ? -1 : 1) * Math.floor(next() * 1e6)),
      Float64Array.from({ length: rows }, () => (next() < 0.8 ? 0 : Math.floor(next() * 1000))),
      Float64Array.from({ length: rows }, (_, r) => (r < 122_880 ? NaN : next())),
      new Float64Array(rows).fill(NaN),
      Float64Array.from({ length: rows }, (_, r) => (r % 7 === 0 ? NaN : -3 + (r % 5))),
      Float64Array.from({ length: rows }, () => [-(2 ** 53), 0, 1000, 2 ** 53][Math.floor(next() * 4)]),
    ];
    const file = writeFile(columns, values, [50_000]);
    expect(await columnEncodings(file)).toEqual({
      generation_id: "PLAIN, RLE, RLE_DICTIONARY",
      seq: "DELTA_BINARY_PACKED, RLE",
      big: "DELTA_BINARY_PACKED, RLE",
      wide: "PLAIN, RLE",
      few: "PLAIN, RLE, RLE_DICTIONARY",
      many: "PLAIN, RLE",
      // A chunk of NULLs only has no values to code.
      none: "PLAIN, RLE",
      fewint: "PLAIN, RLE, RLE_DICTIONARY",
      fewbig: "PLAIN, RLE, RLE_DICTIONARY",
    });
    const footer = await rowGroupStatistics(file, "footer");
    expect(footer).toEqual(await rowGroupStatistics(file, "rows"));
    // Spot checks of what that compares: an all-NULL chunk has no min or max; a sequence's bounds.
    expect(footer).toContain("0 122880 many - - 122880");
    expect(footer).toContain("2 54240 seq 245760 299999 0");
    expect(footer).toContain(`0 122880 generation_id gen_test gen_test 0`);
    const rowsBack = await readBack(file, columns);
    for (let r = 0; r < rows; r += 997) expect(rowsBack[r]).toEqual(columns.map((c, i) => expected(c, values[i][r])));
  }, 60_000);

  it("deltas stay exact for a page whose values lie exactly 2^52 apart, or beyond 2^53 close together; a page spread wider is PLAIN", async () => {
    const b: FinalColumn[] = [{ name: "b", type: "BIGINT", nullable: true }];
    const cases: [number[], string][] = [
      // The widest spread coded as deltas, with odd values and a delta of 2^52 each way.
      [[-(2 ** 51) + 1, 2 ** 51 + 1, -(2 ** 51) + 1, 3, 2 ** 51 - 1, -(2 ** 51) - 1 + 2], "DELTA_BINARY_PACKED, RLE"],
      // Beyond 2^53 (even numbers only there), first value and all: zigzag of the first value by BigInt.
      [[2 ** 60, 2 ** 60 + 256, NaN, 2 ** 60 - 2048, -(2 ** 60), -(2 ** 60) + 4096].slice(0, 4), "DELTA_BINARY_PACKED, RLE"],
      [[-(2 ** 60) - 4096, -(2 ** 60), NaN, -(2 ** 60) + 2 ** 20], "DELTA_BINARY_PACKED, RLE"],
      // One past: PLAIN.
      [[-(2 ** 51), 2 ** 51 + 1, 0], "PLAIN, RLE"],
      [[-(2 ** 63), 2 ** 63 - 1024, 0, NaN], "PLAIN, RLE"],
    ];
    for (const [values, encoding] of cases) {
      const column = Float64Array.from(values);
      const file = writeFile(b, [column], [values.length]);
      expect((await columnEncodings(file)).b).toBe(encoding);
      expect((await readBack(file, b)).map((r) => r[0])).toEqual(values.map((v) => (v === v ? BigInt(v) : null)));
      expect(await rowGroupStatistics(file, "footer")).toEqual(await rowGroupStatistics(file, "rows"));
    }
  });

  it("codes INTEGER deltas only for values within 2^31 - 1 of each other, so they stay 32-bit; pages of tiny row groups fit their buffer", async () => {
    const i: FinalColumn[] = [{ name: "i", type: "INTEGER", nullable: true }];
    const cases: [number[], string][] = [
      [[-(2 ** 30), 2 ** 30 - 1, 0, NaN, 7], "DELTA_BINARY_PACKED, RLE"],
      [[-(2 ** 31) + 1, 2 ** 31 - 1, 0, NaN, -5], "PLAIN, RLE"],
    ];
    for (const [values, encoding] of cases) {
      const file = writeFile(i, [Float64Array.from(values)], [values.length]);
      expect((await columnEncodings(file)).i).toBe(encoding);
      expect((await readBack(file, i)).map((r) => r[0])).toEqual(values.map((v) => (v === v ? v : null)));
    }
    // Row groups of 1 to 4 rows of values far apart: each page's last miniblock pads to 32 deltas.
    const b: FinalColumn[] = [{ name: "b", type: "BIGINT", nullable: false }];
    const wide = [2 ** 51, -(2 ** 51), 2 ** 51, -(2 ** 51), 3];
    for (const rowGroupRows of [1, 2, 3, 4]) {
      const file = writeFile(b, [Float64Array.from(wide)], [wide.length], rowGroupRows);
      expect((await readBack(file, b)).map((r) => r[0])).toEqual(wide.map((v) => BigInt(v)));
    }
  });

  it("refuses what the COPY's cast refused: NaN in a BIGINT column that is not nullable, or a value beyond an int64", () => {
    const columns: FinalColumn[] = [{ name: "v", type: "BIGINT", nullable: false }];
    for (const bad of [NaN, 2 ** 63, -(2 ** 64), Infinity]) {
      const writer = new FinalParquetFile(path.join(tempProject(), "bad.parquet"), "gen_test", columns);
      writer.append([Float64Array.of(1, bad)], 2);
      expect(() => writer.finish()).toThrow(/is no BIGINT/);
      writer.close();
    }
  });

  it("a non-nullable DOUBLE keeps NaN as a value, and its chunk then has no min or max", async () => {
    const columns: FinalColumn[] = [{ name: "d", type: "DOUBLE", nullable: false }];
    const file = writeFile(columns, [Float64Array.of(1, NaN, -2)], [3]);
    expect((await readBack(file, columns)).map((r) => r[0])).toEqual([1, NaN, -2]);
    expect(await rowGroupStatistics(file, "footer")).toContain("0 3 d - - 0");
  });

  /**
   * Text of every kind, for 5,000-row groups: `name` repeats (every value coded), `args` is unique
   * from row 3,000 (its dictionary gives up after the first vectors, so the first chunk mixes ids
   * and text), NULL in the fourth group, and holds a NUL (never coded).
   */
  function textValues(rows: number): { name: (string | null)[]; args: (string | null)[] } {
    const odd = ["", "é日本🔥", "\ud800 lone", "x".repeat(3_000)];
    return {
      name: Array.from({ length: rows }, (_, r) => (r % 11 === 0 ? null : r % 13 === 0 ? odd[r % odd.length] : `module${r % 7}.function_${r % 50}`)),
      args: Array.from({ length: rows }, (_, r) => (r >= 15_000 && r < 20_000 ? null : r < 3_000 ? `{"k":${r % 3}}` : r % 17 === 0 ? [...odd, "nul\u0000inside"][r % 5] : `{"i":${r}}`)),
    };
  }

  it("writes text of every kind as DuckDB reads it back: dictionary-coded where every value came as an id, prefix-coded (DELTA_BYTE_ARRAY) otherwise, NULLs kept", async () => {
    const rows = 23_000;
    const { name, args } = textValues(rows);
    const count = Float64Array.from({ length: rows }, (_, r) => r);
    const columns = [textColumn("name"), { name: "n", type: "BIGINT", nullable: false } as FinalColumn, textColumn("args")];
    const file = writeFile(columns, [name, count, args], [4_096, 1, 7_001], 5_000);
    // A lone surrogate is written as U+FFFD, as UTF-8 has no way to hold it (so is it by DuckDB's appender).
    const written = (v: string | null) => (v === null ? null : v.replace("\ud800", "\ufffd"));
    expect(await readBack(file, columns)).toEqual(name.map((v, r) => [written(v), BigInt(r), written(args[r])]));
    expect(await query(`SELECT column_type FROM (DESCRIBE SELECT name, args FROM read_parquet(${sqlString(file)}))`)).toEqual([["VARCHAR"], ["VARCHAR"]]);
    const encodings = (await query(`SELECT row_group_id, path_in_schema, encodings FROM parquet_metadata(${sqlString(file)}) WHERE path_in_schema IN ('name', 'args') ORDER BY 1, column_id`)).map((r) => r.join(" "));
    // The fourth group's args are NULLs only: a PLAIN page of no values.
    expect(encodings).toEqual([0, 1, 2, 3, 4].flatMap((g) => [`${g} name PLAIN, RLE, RLE_DICTIONARY`, `${g} args ${g === 3 ? "PLAIN" : "DELTA_BYTE_ARRAY"}, RLE`]));
  });

  it("gives text chunks their NULL counts, and min and max where dictionary-coded (prefix-coded chunks, mostly unique values, go without)", async () => {
    const rows = 23_000;
    const { name, args } = textValues(rows);
    const columns = [textColumn("name"), textColumn("args")];
    const file = writeFile(columns, [name, args], [65_536], 5_000);
    const footer = await rowGroupStatistics(file, "footer");
    expect(footer).toEqual(await rowGroupStatistics(file, "rows", "range optional"));
    // The args chunks are the PLAIN ones.
    expect((await rowGroupStatistics(file, "rows")).filter((line) => !footer.includes(line)).every((line) => line.split(" ")[2] === "args")).toBe(true);
    // Spot checks of what that compares: a coded chunk's range (the empty string the least, a
    // lone surrogate's U+FFFD the greatest), an all-NULL chunk.
    expect(footer).toContain("0 5000 name  \ufffd lone 455");
    expect(footer).toContain("3 5000 args - - 5000");
    // A coded chunk whose least or greatest value is longer than 256 bytes goes without them too.
    for (const [longest, range] of [
      [256, "0 3 t a " + "z".repeat(256) + " 0"],
      [257, "0 3 t - - 0"],
    ] as const) {
      const file = writeFile([textColumn("t")], [["a", "b", "z".repeat(longest)]], [3]);
      expect(await rowGroupStatistics(file, "footer")).toContain(range);
    }
  });

  it("writes text never coded (every value as text) and chunks of NULLs only", async () => {
    const values = Array.from({ length: 3_000 }, (_, r) => (r < 1_000 ? null : r % 3 === 0 ? "" : `v${r % 10}`));
    const file = writeFile([textColumn("t")], [values], [999], 1_000, false);
    expect((await readBack(file, [textColumn("t")])).map((r) => r[0])).toEqual(values);
    expect(await columnEncodings(file)).toEqual({ generation_id: "PLAIN, RLE, RLE_DICTIONARY", t: "PLAIN, RLE | DELTA_BYTE_ARRAY, RLE" });
    expect(await rowGroupStatistics(file, "footer")).toContain("0 1000 t - - 1000");
  });

  it("refuses a text column given numbers, a number column given text, and a dictionary id its dictionary lacks", () => {
    const mixed: FinalColumn[] = [textColumn("t"), { name: "n", type: "INTEGER", nullable: true }];
    const writer = new FinalParquetFile(path.join(tempProject(), "bad.parquet"), "gen_test", mixed);
    const coder = new TextCoder();
    coder.push("a");
    expect(() => writer.append([Float64Array.of(1), Float64Array.of(1)], 1)).toThrow(/column t \(VARCHAR\) was given numbers/);
    expect(() => writer.append([coder.take(), coder.take()], 1)).toThrow(/column n \(INTEGER\) was given text/);
    writer.close();
    // An id the column's dictionary never learned (its batch was not taught to it).
    const unlearned = new FinalParquetFile(path.join(tempProject(), "bad2.parquet"), "gen_test", [textColumn("t")]);
    const other = new TextCoder();
    other.push("a");
    unlearned.append([other.take()], 1);
    expect(() => unlearned.finish()).toThrow(/dictionary id 0 is not in its column's dictionary \(0 entries\)/);
    unlearned.close();
  });

  it("writes the same bytes when some number columns come encoded apart (NumberChunks), whatever the batches, and refuses chunks and rows that do not match", () => {
    const rows = 5_300;
    const next = random(5);
    const numbers = [
      Float64Array.from({ length: rows }, (_, r) => r * 3),
      Float64Array.from({ length: rows }, (_, r) => (r % 5 === 0 ? NaN : Math.floor(next() * 1e12))),
      Float64Array.from({ length: rows }, (_, r) => r % 4),
    ];
    const text = Array.from({ length: rows }, (_, r) => (r % 7 === 0 ? null : `t${r % 30}`));
    const spec = (encoded: boolean): FinalColumn[] => [
      { name: "a", type: "BIGINT", nullable: false, encoded },
      textColumn("t"),
      { name: "b", type: "BIGINT", nullable: true, encoded },
      { name: "c", type: "INTEGER", nullable: false },
    ];
    const direct = writeFile(spec(false), [numbers[0], text, numbers[1], numbers[2]], [333, 1_000, 1], 1_000);
    for (const batchSizes of [[333, 1_000, 1], [5_300], [1_000], [999, 1]]) {
      const columns = spec(true);
      const file = path.join(tempProject(), "encoded.parquet");
      const writer = new FinalParquetFile(file, "gen_test", columns, 1_000);
      const elsewhere = new NumberChunks([columns[0], columns[2]] as NumericFinalColumn[], 1_000);
      const coder = new TextCoder();
      for (let start = 0, k = 0; start < rows; k++) {
        const length = Math.min(batchSizes[k % batchSizes.length], rows - start);
        // As a writer's thread gets them: the groups these rows complete, then the rows without those columns' values.
        writer.addEncoded(elsewhere.append([numbers[0].subarray(start, start + length), numbers[1].subarray(start, start + length)], length));
        for (const value of text.slice(start, start + length)) coder.push(value);
        const coded = coder.take();
        (columns[1] as { dictionary: TextDecoding }).dictionary.learn(coded);
        writer.append([undefined, coded, undefined, numbers[2].subarray(start, start + length)], length);
        start += length;
      }
      writer.addEncoded(elsewhere.finish());
      expect(writer.finish()).toBe(rows);
      expect(readFileSync(file)).toEqual(readFileSync(direct));
    }
    // Rows past the chunks given, chunks of other rows, chunks with no rows.
    const columns = spec(true);
    const chunks = new NumberChunks([columns[0], columns[2]] as NumericFinalColumn[], 10);
    const groups = chunks.append([numbers[0].subarray(0, 15), numbers[1].subarray(0, 15)], 15);
    const last = chunks.finish();
    expect([groups.length, last.length, last[0].rows]).toEqual([1, 1, 5]);
    const early = new FinalParquetFile(path.join(tempProject(), "early.parquet"), "gen_test", [columns[0]], 10);
    expect(() => early.append([undefined], 10)).toThrow(/came before its encoded chunks/);
    early.close();
    const mismatched = new FinalParquetFile(path.join(tempProject(), "mismatched.parquet"), "gen_test", [columns[0]], 10);
    mismatched.addEncoded(last);
    expect(() => mismatched.append([undefined], 10)).toThrow(/a row group of 10 rows was given encoded chunks of 5/);
    mismatched.close();
    const leftover = new FinalParquetFile(path.join(tempProject(), "leftover.parquet"), "gen_test", [columns[0]], 10);
    leftover.addEncoded(groups);
    expect(() => leftover.finish()).toThrow(/1 row groups of encoded chunks have no rows/);
    leftover.close();
  });

  it("the browser's reader (hyparquet, into Arrow) decodes the file as DuckDB does", async () => {
    const next = random(11);
    const rows = 130_000;
    const values = ALL_TYPES.map((c) =>
      Float64Array.from({ length: rows }, (_, r) => {
        const u = next();
        if (u < 0.1) return c.nullable ? NaN : 0;
        if (c.type === "DOUBLE") return u < 0.5 ? Math.floor(u * 20) : u * 1e6;
        // The second row group's integers repeat: coded by dictionary, the first's as deltas.
        if (r >= 122_880) return (r % 4) - 1;
        return Math.round((next() - 0.5) * (c.type === "BIGINT" ? 2 ** 50 : 2 ** 30)) + (r % 3);
      }),
    );
    // Text repeating (coded) in the first row group, unique (PLAIN) in the second, with NULLs and non-ASCII.
    const text = Array.from({ length: rows }, (_, r) => (r % 9 === 0 ? null : r < 122_880 ? `f${r % 40}é` : `{"i":${r}}`));
    const columns = [...ALL_TYPES, textColumn("t")];
    const file = writeFile(columns, [...values, text], [65_536]);
    const server = createServer((request, response) => {
      const bytes = readFileSync(file);
      const range = /bytes=(\d+)-(\d+)?/.exec(request.headers.range ?? "");
      if (!range) return response.end(bytes);
      const [start, end] = [Number(range[1]), range[2] ? Number(range[2]) : bytes.length - 1];
      response.writeHead(206, { "content-range": `bytes ${start}-${end}/${bytes.length}` });
      response.end(bytes.subarray(start, end + 1));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/file.parquet`;
      const specs = columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable, description: "" }));
      const { ipc } = await parquetFileToArrowIpc(url, statSync(file).size, specs);
      const table = tableFromIPC(ipc);
      expect(table.numRows).toBe(rows);
      const fromDuckDb = await readBack(file, columns);
      expect(fromDuckDb.map((r) => r[columns.length - 1])).toEqual(text);
      for (let c = 0; c < columns.length; c++) {
        const column = table.getChild(columns[c].name)!;
        for (let r = 0; r < rows; r++) {
          const got = column.get(r) as unknown;
          const want = fromDuckDb[r][c];
          if (!Object.is(got, want) && !(Number.isNaN(got) && Number.isNaN(want))) expect({ column: columns[c].name, r, got }).toEqual({ column: columns[c].name, r, got: want });
        }
      }
    } finally {
      server.close();
    }
  }, 60_000);
});

describe("the writer's final files", () => {
  /** Numbers-only batches whose BIGINT value is NaN: the COPY's cast refused them. */
  const badSamples: RowBatch = {
    table: "samples",
    length: 2,
    columns: { stack_id: Float64Array.of(0, 1), track_id: Float64Array.of(NaN, NaN), time_ns: Float64Array.of(NaN, NaN), metric_id: Float64Array.of(0, 0), value: Float64Array.of(1, NaN) },
  };

  it.each([["at finish", false], ["written early (declared complete)", true]])("a value a final file refuses fails the extraction (%s), and leaves nothing in tmp/", async (_label, early) => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await writer.write(badSamples);
      if (early) await writer.complete(["samples"]);
      await expect(writer.finish()).rejects.toThrow(/value: NaN is no BIGINT/);
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    });
  });

  it("an import of folded stacks gives the same hotspots, flame tree, callers, callees, examples and comparisons as the COPY's files", async () => {
    // Enough stacks for two row groups of stacks and stack_totals.
    const folded = (seed: number) => {
      const next = random(seed);
      return Array.from({ length: 90_000 }, (_, i) => `main;m${i % 13};f${Math.floor(next() * 300)};g${Math.floor(next() * 2000)};h${i % 7} ${1 + Math.floor(next() * 50)}`).join("\n");
    };
    await withWorkspace(async (ws) => {
      /** Publishes the folded text as a generation, written by COPY (finalFiles false) or into final files. */
      const publish = async (text: string, finalFiles: boolean) => {
        const generationId = `gen_${finalFiles ? "final" : "copy"}${text.length}`;
        const writer = await ParquetGenerationWriter.open(ws, generationId, { finalFiles });
        const builder = new EvidenceBuilder(writer);
        await foldedImporter.parse({ source: sourceFromBytes(text, "input.folded", 1 << 20), builder, limits: DEFAULT_IMPORT_LIMITS });
        await builder.finish();
        const files = await writer.finish();
        expect(files.find((f) => f.table === "stacks")!.row_count).toBeGreaterThan(122_880);
        const run = createRun(ws.db, { kind: "import", source: "test", title: generationId });
        const artifact = await ws.objects.put(Buffer.from(generationId));
        registerArtifact(ws.db, artifact, { runId: run.run_id, kind: "native", producer: "test", mediaType: "text/plain", sensitivity: "normal" });
        publishGeneration(ws, { generationId, artifactId: artifact.id, runId: run.run_id, extractor: "test", extractorVersion: generationId, evidenceSchemaVersion: 2, files });
        return generationId;
      };
      const [base, candidate] = [folded(1), folded(2)];
      const copied = { base: await publish(base, false), candidate: await publish(candidate, false) };
      const final = { base: await publish(base, true), candidate: await publish(candidate, true) };
      const ev = await openEvidence(ws, "HEAD");
      const results = async (g: typeof copied) => {
        const top = await ev.run(hotspotsQuery, { generations: [g.base], metric: "samples", limit: 50 });
        const frame = top[3].frame_key;
        return {
          top,
          tree: await ev.run(flameTreeQuery, { generations: [g.base], metric: "samples", budget: 2_000 }),
          callers: await ev.run(callersQuery, { generations: [g.base], metric: "samples", frame_key: frame, limit: 50 }),
          callees: await ev.run(calleesQuery, { generations: [g.base], metric: "samples", frame_key: frame, limit: 50 }),
          examples: await ev.run(stackExamplesQuery, { generations: [g.base], metric: "samples", frame_key: frame, limit: 20 }),
          compare: await ev.run(compareQuery, { base_generations: [g.base], candidate_generations: [g.candidate], metric: "samples", normalize: false, collection: "all", limit: 200 }),
        };
      };
      const [fromCopy, fromFinal] = [await results(copied), await results(final)];
      expect(fromCopy.top.length).toBe(50);
      expect(fromCopy.compare.length).toBeGreaterThan(5);
      expect(fromFinal).toEqual(fromCopy);
    });
  }, 120_000);
});

describe("the writer's final files: tables of numbers, and spans placed from kept drafts", () => {
  /** The output tables the writer may write into final files as their rows arrive (spans: from placed drafts). */
  const FINAL_TABLES: string[] = ["frame_totals", "samples", "stack_totals", "stacks", "spans", "track_totals"];

  /**
   * The generation's files (table → rows and content address), written one way or the other. The
   * tables that may go into final files (not by COPY) are compared by what DuckDB reads of them
   * (columns, rows in order), their statistics checked against their rows (text chunks not
   * dictionary-coded have no min or max).
   */
  async function filesOf(finalFiles: boolean, produce: (writer: ParquetGenerationWriter) => Promise<void>) {
    return withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test", { finalFiles });
      await produce(writer);
      const files = await writer.finish();
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
      const described = await Promise.all(
        files.map(async (f) => {
          if (!FINAL_TABLES.includes(f.table)) return [f.table, `${f.row_count} ${f.object_id}`] as const;
          const file = ws.objects.pathOf(f.object_id as ObjectId);
          // Row groups fall where the COPY's input chunks end, or at exactly 122,880 rows.
          expect(await rowGroupStatistics(file, "footer")).toEqual(await rowGroupStatistics(file, "rows", "range optional"));
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
      expect(staged[table]).toMatchObject({ rows: table === "spans" ? 15_001 : expect.any(Number) });
    }
  }, 120_000);

  it("writes spans in the file's order whether their places come in that order (their final file) or not (sorted by COPY), and with spans given whole", async () => {
    const count = 5_000;
    // Starts tie in sevens, across four tracks; drafts come in another order than places.
    const keys = Array.from({ length: count }, (_, i) => ({ draft: i, span: (i * 7919) % count, track: i % 4, start: Math.floor(i / 7) * 10 }));
    const inFileOrder = [...keys].sort((a, b) => a.start - b.start || a.track - b.track || a.span - b.span);
    const shuffled = [...keys].sort((a, b) => ((a.draft * 104729) % count) - ((b.draft * 104729) % count));
    const produce = (places: typeof keys, whole = false) => async (writer: ParquetGenerationWriter) => {
      // Spans given whole (as OpenTelemetry's are) join the placed drafts: the COPY sorts them all.
      if (whole)
        await writer.write({
          table: "spans",
          length: 2,
          columns: {
            span_id: Float64Array.of(count, count + 1),
            track_id: Float64Array.of(1, 9),
            parent_span_id: Float64Array.of(NaN, 3),
            name: codeTexts(["whole", "whole"]),
            category: codeTexts([null, "c"]),
            start_ns: Float64Array.of(15, 0),
            dur_ns: Float64Array.of(1, 2),
            depth: Float64Array.of(0, 1),
            status: codeTexts(["ok", null]),
            args: codeTexts([null, '{"w":1}']),
          },
        });
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
    expect(inOrder.spans).toMatchObject({ rows: count });
    expect(await filesOf(true, produce(shuffled))).toEqual(inOrder);
    expect(await filesOf(false, produce(inFileOrder))).toEqual(inOrder);
    const withWhole = await filesOf(true, produce(inFileOrder, true));
    expect(withWhole.spans).toMatchObject({ rows: count + 2 });
    expect(await filesOf(false, produce(shuffled, true))).toEqual(withWhole);
  });

  it("refuses a batch for a table in a final file once it was declared complete", async () => {
    await withWorkspace(async (ws) => {
      const writer = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(writer, 10, [10]);
      await writer.complete(["stacks"]);
      await expect(writeNumbers(writer, 10, [10])).rejects.toThrow(/stacks arrived after it was declared complete/);
      const files = await writer.finish();
      expect(files.find((f) => f.table === "stacks")!.row_count).toBe(10);
    });
  });

  it("a writer closed while writing, or that fails, leaves no part-written files behind", async () => {
    const draft = (id: number): RowBatch => ({ table: "span_drafts", length: 1, columns: { draft_id: Float64Array.of(id), name: codeTexts(["n"]), category: codeTexts([null]), status: codeTexts([null]), args: codeTexts(["{}"]) } });
    const place = (id: number): RowBatch => ({ table: "span_places", length: 1, columns: { draft_id: Float64Array.of(id), span_id: Float64Array.of(0), track_id: Float64Array.of(0), parent_span_id: Float64Array.of(NaN), start_ns: Float64Array.of(0), dur_ns: Float64Array.of(1), depth: Float64Array.of(0) } });
    await withWorkspace(async (ws) => {
      const closed = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(closed, 300_000, [65_536]);
      await closed.write(draft(1));
      await closed.write(place(1));
      const inTmp = readdirSync(ws.layout.tmp, { recursive: true }).map((f) => path.basename(String(f)));
      expect(inTmp).toEqual(expect.arrayContaining(["spans.final.parquet", "stacks.final.parquet", "samples.final.parquet"]));
      await closed.close();
      expect(readdirSync(ws.layout.tmp)).toEqual([]);

      // A place whose draft is missing is refused; a draft never placed fails the spans' writing.
      const failed = await ParquetGenerationWriter.open(ws, "gen_test");
      await writeNumbers(failed, 1_000, [1_000]);
      await expect(failed.write(place(1))).rejects.toThrow(/a span place for draft 1, which was never drafted/);
      await failed.write(draft(2));
      await expect(failed.finish()).rejects.toThrow(/1 span drafts were never placed/);
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
