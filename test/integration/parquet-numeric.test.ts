import path from "node:path";
import { describe, expect, it } from "vitest";
import { sqlString } from "../../server/evidence/duckdb";
import { NumericParquetFile, type NumericColumn } from "../../server/evidence/parquet-numeric";
import { queryDuckDb } from "../helpers/duckdb";
import { tempProject } from "../helpers/project";

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

/** Writes `values` (a Float64Array per column) in batches cycling through `batchSizes`; returns the file. */
function writeFile(columns: NumericColumn[], values: Float64Array[], batchSizes: number[], rowGroupRows?: number): string {
  const file = path.join(tempProject(), "numbers.parquet");
  const writer = new NumericParquetFile(file, "gen_test", columns, rowGroupRows);
  const length = values[0]?.length ?? 0;
  for (let start = 0, k = 0; start < length; k++) {
    const rows = Math.min(batchSizes[k % batchSizes.length], length - start);
    writer.append(
      values.map((v) => v.subarray(start, start + rows)),
      rows,
    );
    start += rows;
  }
  expect(writer.finish()).toBe(length);
  return file;
}

/** What the COPY wrote for a staged value: INTEGER rounded or NULL (as staged), BIGINT cast (ties to even), DOUBLE NaN as NULL when nullable. */
function expected(column: NumericColumn, value: number): number | bigint | null {
  if (column.type === "INTEGER") return value === value && Math.abs(value) <= 2 ** 31 - 1 ? Math.round(value) + 0 : null;
  if (column.type === "BIGINT") {
    if (value !== value) return null;
    const rounded = Math.round(value);
    return BigInt(rounded - value === 0.5 && rounded % 2 !== 0 ? rounded - 1 : rounded);
  }
  return value !== value && column.nullable ? null : value;
}

async function readBack(file: string, columns: NumericColumn[]) {
  const names = columns.map((c) => `"${c.name}"`).join(", ");
  return query(`SELECT ${names} FROM read_parquet(${sqlString(file)})`);
}

const ALL_TYPES: NumericColumn[] = [
  { name: "i", type: "INTEGER", nullable: true },
  { name: "b", type: "BIGINT", nullable: true },
  { name: "d", type: "DOUBLE", nullable: true },
  { name: "nd", type: "DOUBLE", nullable: false },
];

describe("final Parquet files of tables of numbers", () => {
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
    const b: NumericColumn[] = [{ name: "b", type: "BIGINT", nullable: false }];
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
      const groups = await query(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${sqlString(file)}) ORDER BY 1`);
      const sizes = groups.map((g) => Number(g[1]));
      expect(sizes).toEqual(rows === 0 ? [] : [...Array<number>(Math.floor(rows / 122_880)).fill(122_880), ...(rows % 122_880 ? [rows % 122_880] : [])]);
    }
  }, 120_000);
});
