// Real input: speedscope's sample stackprof profile (wall mode, raw: true; test/fixtures/peer).
// Ruby is not installed here, so the cpu, object and custom mode files are written from
// stackprof.c's description of its results (stackprof_results, stackprof_record_sample_for_stack).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows, totalsByStack } from "../../test/helpers/evidence-rows";
import { UnsupportedVersionError } from "./errors";
import { importToMemory, type MemoryImport } from "./run";
import { stackprofImporter } from "./stackprof";

const FIXTURE = path.resolve(import.meta.dirname, "../../test/fixtures/peer/stackprof/simple-stackprof.json");

const FILE = "/srv/app/lib/report.rb";
/** Frames keyed by address as stackprof writes them; GC frames have no file and no line. */
const FRAMES = {
  "140001": { name: "<main>", file: FILE, total_samples: 6, samples: 0 },
  "140002": { name: "Report#build", file: FILE, line: 12, total_samples: 5, samples: 1, edges: { "140003": 4 }, lines: { "13": [5, 1] } },
  "140003": { name: "Array#each", file: FILE, line: 14, total_samples: 4, samples: 4 },
  "1": { name: "(garbage collection)", file: "", total_samples: 2, samples: 1 },
  "3": { name: "(marking)", file: "", total_samples: 1, samples: 1 },
};
/** [length, frames root first…, times in a row]: build→each ×3, build, GC, GC;marking, build→each. */
const RAW = [3, 140001, 140002, 140003, 3, 2, 140001, 140002, 1, 1, 1, 1, 2, 1, 3, 1, 3, 140001, 140002, 140003, 1];

const results0 = (mode: string) => results(mode);
function results(mode: string, extra: Record<string, unknown> = {}) {
  return { version: 1.2, mode, interval: mode === "object" ? 10 : 1000, samples: 7, gc_samples: 2, missed_samples: 0, metadata: { revision: "abc123" }, frames: FRAMES, raw: RAW, ...extra };
}

const expectParseError = (input: string | Uint8Array) => parseErrorOf(stackprofImporter, input);

/** Per frame name: [self, total] of a metric, from the import's frame totals. */
function frameTotals(result: MemoryImport, metric: string): Record<string, [number, number]> {
  const metricId = result.tables.metrics.find((m) => m.name === metric)!.metric_id;
  const names = new Map(result.tables.frames.map((f) => [f.frame_id, f.name as string]));
  const out: Record<string, [number, number]> = {};
  for (const row of result.tables.frame_totals.filter((r) => r.metric_id === metricId)) {
    const name = names.get(row.frame_id)!;
    const [self, total] = out[name] ?? [0, 0];
    out[name] = [self + (row.self as number), total + (row.total as number)];
  }
  return out;
}

/**
 * Ruby's Marshal.dump of plain results, written from Ruby's doc/marshal.rdoc: symbols once then
 * linked (;), each object (string, float, bignum, array, hash) counted for links (@), strings with
 * their UTF-8 encoding (I … :E true), integers beyond 31 bits as Bignums, as a 64-bit Ruby writes.
 */
class MarshalWriter {
  private readonly out: number[] = [4, 8];
  private readonly symbols = new Map<string, number>();
  private readonly objects = new Map<unknown, number>();
  private count = 0;
  static dump(value: unknown, shared: Set<string> = new Set()): Uint8Array {
    const writer = new MarshalWriter();
    writer.shared = shared;
    writer.write(value);
    return new Uint8Array(writer.out);
  }
  /** Strings written once and linked after, as one Ruby String object shared by several frames is. */
  private shared = new Set<string>();
  private long(n: number): void {
    if (n === 0) this.out.push(0);
    else if (n > 0 && n < 123) this.out.push(n + 5);
    else if (n < 0 && n > -124) this.out.push((n - 5) & 0xff);
    else {
      const bytes: number[] = [];
      let x = n;
      for (let k = 0; k < 4; k++) {
        bytes.push(x & 0xff);
        x >>= 8;
        if ((n >= 0 && x === 0) || (n < 0 && x === -1)) break;
      }
      this.out.push(n > 0 ? bytes.length : 256 - bytes.length, ...bytes);
    }
  }
  private bytes(text: string): void {
    const utf8 = new TextEncoder().encode(text);
    this.long(utf8.length);
    this.out.push(...utf8);
  }
  symbol(name: string): void {
    const known = this.symbols.get(name);
    if (known !== undefined) {
      this.out.push(0x3b);
      this.long(known);
      return;
    }
    this.symbols.set(name, this.symbols.size);
    this.out.push(0x3a);
    this.bytes(name);
  }
  write(value: unknown): void {
    if (value === null || value === undefined) this.out.push(0x30);
    else if (value === true) this.out.push(0x54);
    else if (value === false) this.out.push(0x46);
    else if (value instanceof Sym) this.symbol(value.name);
    else if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) < 2 ** 30) {
      this.out.push(0x69);
      this.long(value);
    } else if (typeof value === "number" && Number.isInteger(value)) {
      this.count++;
      this.out.push(0x6c, value < 0 ? 0x2d : 0x2b);
      const bytes: number[] = [];
      for (let x = Math.abs(value); x > 0; x = Math.floor(x / 256)) bytes.push(x % 256);
      if (bytes.length % 2) bytes.push(0);
      this.long(bytes.length / 2);
      this.out.push(...bytes);
    } else if (typeof value === "number") {
      this.count++;
      this.out.push(0x66);
      this.bytes(String(value));
    } else if (typeof value === "string") {
      const linked = this.objects.get(value);
      if (linked !== undefined) {
        this.out.push(0x40);
        this.long(linked);
        return;
      }
      if (this.shared.has(value)) this.objects.set(value, this.count);
      this.count++;
      this.out.push(0x49, 0x22);
      this.bytes(value);
      this.long(1);
      this.symbol("E");
      this.out.push(0x54);
    } else if (Array.isArray(value)) {
      this.count++;
      this.out.push(0x5b);
      this.long(value.length);
      for (const item of value) this.write(item);
    } else {
      this.count++;
      const entries = value instanceof Map ? [...value.entries()] : Object.entries(value as object).map(([k, v]) => [new Sym(k), v]);
      this.out.push(0x7b);
      this.long(entries.length);
      for (const [k, v] of entries) {
        this.write(k);
        this.write(v);
      }
    }
  }
}
class Sym {
  constructor(readonly name: string) {}
}

/** Results as StackProf.run(out: …) dumps them: symbol keys, the mode a symbol, frames keyed by Integer addresses. */
function dumped(results: Record<string, unknown>) {
  const frames = new Map(Object.entries(results.frames as Record<string, Record<string, unknown>>).map(([address, frame]) => [Number(address), frame]));
  return MarshalWriter.dump({ ...results, mode: new Sym(results.mode as string), frames }, new Set([FILE]));
}

describe("stackprof importer", () => {
  it("reads speedscope's wall-mode sample: per-frame counts agree with stackprof's own, wall time is the deltas'", async () => {
    const bytes = readFileSync(FIXTURE);
    const result = await importToMemory(stackprofImporter, bytes, { chunkSize: 4096 });
    const file = JSON.parse(bytes.toString("utf8"));
    // stackprof counted each frame's self and total samples while it recorded (once per sample
    // however often a frame recurs); the stacks rebuilt from raw must give the same numbers.
    const expected: Record<string, [number, number]> = {};
    for (const frame of Object.values(file.frames) as { name: string; samples: number; total_samples: number }[]) {
      const [self, total] = expected[frame.name] ?? [0, 0];
      expected[frame.name] = [self + frame.samples, total + frame.total_samples];
    }
    // Two frames are named <main> (the script and its `require`); a sample holds both, so their totals add up.
    expect(frameTotals(result, "samples")).toEqual(expected);
    expect(result.tables.metrics.find((m) => m.name === "samples")!.total).toBe(file.samples);
    const deltas = file.raw_timestamp_deltas as number[];
    expect(result.tables.metrics.find((m) => m.name === "wall_ns")!.total).toBe(deltas.reduce((a, b) => a + b, 0) * 1000);
    expect(result.summary.metadata).toMatchObject({ stackprof_mode: "wall", stackprof_interval: "1000 µs", stackprof_gc_samples: "454" });
    expect(result.tables.frames.find((f) => f.name === "(garbage collection)")!.kind).toBe("gc");
    expect(result.summary.limitations).toEqual([]);
  });

  it("weighs wall samples by their deltas and places them by their timestamps, from the start of profiling", async () => {
    const deltas = [1000, 1010, 990, 5000, 1000, 1000, 1000];
    const timestamps = [100_001_000, 100_002_010, 100_003_000, 100_008_000, 100_009_000, 100_010_000, 100_011_000];
    const result = await importToMemory(stackprofImporter, JSON.stringify(results("wall", { raw_sample_timestamps: timestamps, raw_timestamp_deltas: deltas })), { chunkSize: 11 });
    const wall = sampleRows(result).filter((r) => r.metric === "wall_ns");
    expect(wall.map((r) => [r.stack, r.value, r.time])).toEqual([
      ["<main>;Report#build;Array#each", 1_000_000, 1_000_000],
      ["<main>;Report#build;Array#each", 1_010_000, 2_010_000],
      ["<main>;Report#build;Array#each", 990_000, 3_000_000],
      ["<main>;Report#build", 5_000_000, 8_000_000],
      ["(garbage collection)", 1_000_000, 9_000_000],
      ["(garbage collection);(marking)", 1_000_000, 10_000_000],
      ["<main>;Report#build;Array#each", 1_000_000, 11_000_000],
    ]);
    expect(result.summary.metadata.time_origin_us).toBe("100000000");
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.file, f.line, f.kind]]));
    expect(frames).toEqual({
      "<main>": [FILE, null, "other"],
      "Report#build": [FILE, 12, "other"],
      "Array#each": [FILE, 14, "other"],
      "(garbage collection)": [null, null, "gc"],
      "(marking)": [null, null, "gc"],
    });
  });

  it("gives cpu samples one interval of CPU time and object samples one interval of allocations", async () => {
    const deltas = [2000, 1000, 1000, 3000, 1000, 1000, 1000];
    const cpu = await importToMemory(stackprofImporter, JSON.stringify(results("cpu", { raw_timestamp_deltas: deltas })));
    expect(totalsByStack(cpu).cpu_ns).toEqual({
      "<main>;Report#build;Array#each": 4 * 1_000_000,
      "<main>;Report#build": 1_000_000,
      "(garbage collection)": 1_000_000,
      "(garbage collection);(marking)": 1_000_000,
    });
    // Times still come from the deltas: the clock since profiling began.
    expect(sampleRows(cpu).filter((r) => r.metric === "cpu_ns").map((r) => r.time)).toEqual([2, 3, 4, 7, 8, 9, 10].map((ms) => ms * 1_000_000));
    const object = await importToMemory(stackprofImporter, JSON.stringify(results("object", { raw_timestamp_deltas: deltas })));
    expect(totalsByStack(object).alloc_count).toEqual({
      "<main>;Report#build;Array#each": 40,
      "<main>;Report#build": 10,
      "(garbage collection)": 10,
      "(garbage collection);(marking)": 10,
    });
    expect(object.tables.metrics.map((m) => m.name)).toEqual(["samples", "alloc_count"]);
    const custom = await importToMemory(stackprofImporter, JSON.stringify(results("custom", { interval: null })));
    expect(custom.tables.metrics.map((m) => m.name)).toEqual(["samples"]);
    expect(custom.summary.limitations.map((l) => l.code)).toEqual(["STACKPROF_NO_DELTAS"]);
  });

  it("reads raw before frames, and a file without raw by each frame's self samples, saying callers are unknown", async () => {
    const { frames, raw, ...rest } = results("wall", { raw_timestamp_deltas: [1, 1, 1, 1, 1, 1, 1] });
    const reordered = await importToMemory(stackprofImporter, JSON.stringify({ raw, ...rest, frames }));
    expect(totalsByStack(reordered).samples).toEqual({ "<main>;Report#build;Array#each": 4, "<main>;Report#build": 1, "(garbage collection)": 1, "(garbage collection);(marking)": 1 });
    const aggregate = await importToMemory(stackprofImporter, JSON.stringify({ ...rest, frames }));
    expect(totalsByStack(aggregate).samples).toEqual({ "Report#build": 1, "Array#each": 4, "(garbage collection)": 1, "(marking)": 1 });
    expect(totalsByStack(aggregate).wall_ns).toEqual({ "Report#build": 1_000_000, "Array#each": 4_000_000, "(garbage collection)": 1_000_000, "(marking)": 1_000_000 });
    expect(aggregate.summary.limitations.map((l) => l.code)).toEqual(["STACKPROF_NO_RAW"]);
  });

  it("reads a Marshal dump (StackProf.run(out: …)) as its JSON form, with addresses beyond 32 bits", async () => {
    const big = (address: string) => String(70_098_916_000_000 + Number(address));
    const frames = Object.fromEntries(Object.entries(FRAMES).map(([address, frame]) => [address.length > 2 ? big(address) : address, frame]));
    const raw = RAW.map((value) => (value > 1000 ? Number(big(String(value))) : value));
    const deltas = [1000, 1010, 990, 5000, 1000, 1000, 1000];
    const results = { ...results0("wall"), frames, raw, raw_sample_timestamps: deltas.map((_, k) => 9_000_000_000 + 1000 * (k + 1)), raw_timestamp_deltas: deltas };
    const fromJson = await importToMemory(stackprofImporter, JSON.stringify(results));
    const fromMarshal = await importToMemory(stackprofImporter, dumped(results), { chunkSize: 7 });
    expect(sampleRows(fromMarshal)).toEqual(sampleRows(fromJson));
    expect(fromMarshal.tables.frames.map(({ name, file, line, kind }) => ({ name, file, line, kind }))).toEqual(fromJson.tables.frames.map(({ name, file, line, kind }) => ({ name, file, line, kind })));
    expect(fromMarshal.summary.metadata).toMatchObject({ stackprof_mode: "wall", stackprof_version: "1.2", stackprof_encoding: "Marshal", stackprof_metadata_revision: "abc123" });
    expect(stackprofImporter.sniff(dumped(results).subarray(0, 4096), "", "stackprof-wall.dump")).toBeGreaterThanOrEqual(0.9);
  });

  it.each([
    ["a dump cut short", (bytes: Uint8Array) => bytes.subarray(0, bytes.length - 9), /ends inside a value|longer than the rest of the dump/],
    ["a dump of another version", (bytes: Uint8Array) => Uint8Array.from([4, 7, ...bytes.subarray(2)]), /not a Marshal 4\.8 dump/],
    ["a dump of an object", () => Uint8Array.from([4, 8, 0x7b, 6, 0x3a, 6, 0x66, 0x6f, 0x6f, 0x6f, 0x3a, 6, 0x46, 0x6f, 0x6f, 0x00]), /of a kind that plain results do not/],
    ["a link to nothing", () => Uint8Array.from([4, 8, 0x7b, 6, 0x3a, 9, 0x6d, 0x6f, 0x64, 0x65, 0x40, 0x0a]), /names no object/],
    ["raw that is no array", () => Uint8Array.from([4, 8, 0x7b, 6, 0x3a, 8, 0x72, 0x61, 0x77, 0x69, 0x06]), /something else where an array was expected/],
    ["a dump that is no Hash", () => Uint8Array.from([4, 8, 0x5b, 0]), /not a Hash of stackprof results/],
  ])("refuses %s with a typed error saying where", async (_name, mangle, reason) => {
    const error = await expectParseError(mangle(dumped(results("wall", { raw_timestamp_deltas: [1, 1, 1, 1, 1, 1, 1] }))));
    expect(error.reason).toMatch(reason);
  });

  it("keeps the root-most frames of a stack deeper than the bound", async () => {
    // The bound holds for the JSON's nesting too: these frames carry no edges or lines.
    const frames = Object.fromEntries(Object.entries(FRAMES).map(([address, { name, file }]) => [address, { name, file }]));
    const deep = { version: 1.2, mode: "wall", interval: 1000, frames, raw: [5, 140001, 140002, 140003, 140002, 140003, 2], raw_timestamp_deltas: [1000, 1000] };
    const result = await importToMemory(stackprofImporter, JSON.stringify(deep), { limits: { maxDepth: 3 } });
    expect(totalsByStack(result).samples).toEqual({ "<main>;Report#build;Array#each": 2 });
    expect(result.summary.limitations).toEqual([expect.objectContaining({ code: "STACK_TRUNCATED", count: 2 })]);
  });

  it("refuses versions other than 1.x by version", async () => {
    const error = await expectParseError(JSON.stringify({ ...results("wall"), version: 2.0 }));
    expect(error).toBeInstanceOf(UnsupportedVersionError);
    expect((error as UnsupportedVersionError).supported).toBe("1.x");
  });

  it.each([
    ["a top-level array", "[1]", /no top-level object|not an object/],
    ["truncated", JSON.stringify(results("wall")).slice(0, 200), /truncated/],
    ["no frames", JSON.stringify({ version: 1.2, mode: "wall", raw: [] }), /no frames/],
    ["a frame key that is no address", JSON.stringify(results("wall", { frames: { main: { name: "x" } } })), /not an address/],
    ["a stack length that is no count", JSON.stringify(results("wall", { raw: [1.5, 140001, 1] })), /length is not a count/],
    ["a frame not in frames", JSON.stringify(results("wall", { raw: [1, 777, 1] })), /not in frames/],
    ["a count of zero", JSON.stringify(results("wall", { raw: [1, 140001, 0] })), /count is not a positive/],
    ["raw cut inside a stack", JSON.stringify(results("wall", { raw: [3, 140001, 140002] })), /raw ends inside a stack/],
    ["raw with text", JSON.stringify(results("wall", { raw: ["3"] })), /not a number/],
    ["an unknown mode", JSON.stringify(results("joules")), /mode is missing or none of/],
    ["no samples at all", JSON.stringify({ ...results("wall"), raw: [] }), /no samples/],
    ["a frame's samples that is no count", JSON.stringify(results("wall", { frames: { "1": { name: "x", samples: -2 } } })), /samples is not a count/],
  ])("refuses %s with a typed error saying where", async (_name, input, reason) => {
    const error = await expectParseError(input);
    expect(error.reason).toMatch(reason);
    expect(error.message).not.toContain("Report#build");
  });

  it("sniffs stackprof results and declines other JSON", () => {
    const sniff = (text: string) => stackprofImporter.sniff(new TextEncoder().encode(text), text, null);
    expect(sniff(readFileSync(FIXTURE, "utf8").slice(0, 65536))).toBeGreaterThanOrEqual(0.9);
    expect(sniff(JSON.stringify(results("object")))).toBeGreaterThanOrEqual(0.9);
    expect(sniff('{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},"profiles":[]}')).toBe(0);
    expect(sniff('{"traceEvents":[{"ph":"X","name":"mode","ts":1}]}')).toBe(0);
    expect(sniff('{"label":"x","frames":[],"profile":{}}')).toBe(0);
  });
});
