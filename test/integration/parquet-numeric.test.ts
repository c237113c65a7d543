import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { tableFromIPC } from "apache-arrow";
import { describe, expect, it } from "vitest";
import { EvidenceBuilder, type RowBatch } from "../../analysis/evidence/builder";
import { foldedImporter } from "../../analysis/formats/folded";
import { sourceFromBytes } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS } from "../../analysis/formats/types";
import { calleesQuery, callersQuery, compareQuery, flameTreeQuery, hotspotsQuery, stackExamplesQuery } from "../../analysis/queries";
import { parquetFileToArrowIpc } from "../../components/sql/parquet-to-arrow";
import { sqlString } from "../../server/evidence/duckdb";
import { openEvidence } from "../../server/evidence/engine";
import { NumericParquetFile, type NumericColumn } from "../../server/evidence/parquet-numeric";
import { ParquetGenerationWriter } from "../../server/evidence/parquet-writer";
import { registerArtifact } from "../../server/store/artifacts";
import { publishGeneration } from "../../server/store/corpus";
import { createRun } from "../../server/store/runs";
import { columnEncodings, queryDuckDb, rowGroupSizes, rowGroupStatistics } from "../helpers/duckdb";
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
    const columns: NumericColumn[] = [
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
    const b: NumericColumn[] = [{ name: "b", type: "BIGINT", nullable: true }];
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
    const i: NumericColumn[] = [{ name: "i", type: "INTEGER", nullable: true }];
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
    const b: NumericColumn[] = [{ name: "b", type: "BIGINT", nullable: false }];
    const wide = [2 ** 51, -(2 ** 51), 2 ** 51, -(2 ** 51), 3];
    for (const rowGroupRows of [1, 2, 3, 4]) {
      const file = writeFile(b, [Float64Array.from(wide)], [wide.length], rowGroupRows);
      expect((await readBack(file, b)).map((r) => r[0])).toEqual(wide.map((v) => BigInt(v)));
    }
  });

  it("refuses what the COPY's cast refused: NaN in a BIGINT column that is not nullable, or a value beyond an int64", () => {
    const columns: NumericColumn[] = [{ name: "v", type: "BIGINT", nullable: false }];
    for (const bad of [NaN, 2 ** 63, -(2 ** 64), Infinity]) {
      const writer = new NumericParquetFile(path.join(tempProject(), "bad.parquet"), "gen_test", columns);
      writer.append([Float64Array.of(1, bad)], 2);
      expect(() => writer.finish()).toThrow(/is no BIGINT/);
      writer.close();
    }
  });

  it("a non-nullable DOUBLE keeps NaN as a value, and its chunk then has no min or max", async () => {
    const columns: NumericColumn[] = [{ name: "d", type: "DOUBLE", nullable: false }];
    const file = writeFile(columns, [Float64Array.of(1, NaN, -2)], [3]);
    expect((await readBack(file, columns)).map((r) => r[0])).toEqual([1, NaN, -2]);
    expect(await rowGroupStatistics(file, "footer")).toContain("0 3 d - - 0");
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
    const file = writeFile(ALL_TYPES, values, [65_536]);
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
      const specs = ALL_TYPES.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable, description: "" }));
      const { ipc } = await parquetFileToArrowIpc(url, statSync(file).size, specs);
      const table = tableFromIPC(ipc);
      expect(table.numRows).toBe(rows);
      const fromDuckDb = await readBack(file, ALL_TYPES);
      for (let c = 0; c < ALL_TYPES.length; c++) {
        const column = table.getChild(ALL_TYPES[c].name)!;
        for (let r = 0; r < rows; r++) {
          const got = column.get(r) as unknown;
          const want = fromDuckDb[r][c];
          if (!Object.is(got, want) && !(Number.isNaN(got) && Number.isNaN(want))) expect({ column: ALL_TYPES[c].name, r, got }).toEqual({ column: ALL_TYPES[c].name, r, got: want });
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
      /** Publishes the folded text as a generation, written by COPY (stagedInFiles false) or into final files. */
      const publish = async (text: string, stagedInFiles: boolean) => {
        const generationId = `gen_${stagedInFiles ? "final" : "copy"}${text.length}`;
        const writer = await ParquetGenerationWriter.open(ws, generationId, { stagedInFiles });
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
