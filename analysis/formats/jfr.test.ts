import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows, totalsByStack } from "../../test/helpers/evidence-rows";
import { chunk, event, jstring, varint, withHeaderField, type Bytes } from "../../test/helpers/jfr-writer";
import { jfrImporter, jfrParameters } from "./jfr";
import { importToMemory, type MemoryImport } from "./run";

const FIXTURES = new URL("../../test/fixtures/", import.meta.url);
const read = (relative: string) => new Uint8Array(readFileSync(new URL(relative, FIXTURES)));

/** What the JDK's own reader (`jfr print`, see test/fixtures/jfr/oracle.mjs) says of a recording. */
interface Oracle {
  count: number;
  threads: Record<string, number>;
  frames: Record<string, { self: number; total: number }>;
  /** Frames of hidden methods (`jfr print` leaves them out), as `class.method`: the samples they appear in. */
  hidden: Record<string, number>;
}
const oracle = (relative: string): Record<string, Oracle> => JSON.parse(readFileSync(new URL(relative, FIXTURES), "utf8"));

/** Per frame name, its self and total (counted once per sample) in one metric, from the import's frame totals. */
function frameTotals(result: MemoryImport, metric: string): Record<string, { self: number; total: number }> {
  const metricId = result.tables.metrics.find((m) => m.name === metric)?.metric_id;
  const names = new Map(result.tables.frames.map((f) => [f.frame_id, String(f.name)]));
  const out: Record<string, { self: number; total: number }> = {};
  for (const row of result.tables.frame_totals.filter((r) => r.metric_id === metricId)) {
    const name = names.get(row.frame_id)!;
    const entry = (out[name] ??= { self: 0, total: 0 });
    entry.self += row.self as number;
    entry.total += row.total as number;
  }
  return out;
}

function threadCounts(result: MemoryImport, metric: string): Record<string, number> {
  const names = new Map(result.tables.tracks.map((t) => [t.track_id, String(t.thread_name)]));
  const out: Record<string, number> = {};
  for (const row of sampleRows(result).filter((r) => r.metric === metric)) out[names.get(row.track)!] = (out[names.get(row.track)!] ?? 0) + row.value;
  return out;
}

function expectAgreesWithJdk(result: MemoryImport, metric: string, expected: Oracle): void {
  expect(result.tables.metrics.find((m) => m.name === metric)?.total).toBe(expected.count);
  expect(threadCounts(result, metric)).toEqual(expected.threads);
  const frames = frameTotals(result, metric);
  // Hidden frames are kept, named as other frames are (the class name's slashes as dots).
  for (const [method, total] of Object.entries(expected.hidden)) {
    const names = Object.keys(frames).filter((name) => name.startsWith(`${method.replace(/\//g, ".")}(`));
    expect(names.map((name) => frames[name].total)).toEqual([total]);
    delete frames[names[0]];
  }
  expect(frames).toEqual(expected.frames);
}

// A recording stated field by field: two methods of one class, two threads, two stack traces.
const sym = (key: number, text: string): [number, Bytes] => [key, jstring(text)];
const POOLS: [number, [number, Bytes][]][] = [
  [22, [sym(1, "com/example/App"), sym(2, "main"), sym(3, "([Ljava/lang/String;)V"), sym(4, "work"), sym(5, "(IJ)D"), sym(6, "com/example")]],
  [23, [[1, varint(6)]]],
  [24, [[1, [...varint(1), ...varint(1)]]]],
  [25, [[1, [...varint(1), ...varint(2), ...varint(3)]], [2, [...varint(1), ...varint(4), ...varint(5)]]]],
  [26, [sym(1, "Interpreted"), sym(2, "JIT compiled")]],
  [28, [
    [1, [0, ...varint(2), ...varint(2), ...varint(10), ...varint(2), ...varint(1), ...varint(3), ...varint(1)]],
    [2, [1, ...varint(1), ...varint(1), ...varint(4), ...varint(1)]],
  ]],
  [21, [[1, [...jstring("main"), ...varint(101), ...jstring("main"), ...varint(1)]], [2, [...jstring("worker"), ...varint(102), ...jstring("pool-1-thread-1"), ...varint(12)]]]],
];
const sample = (ticks: number, thread: number, stack: number) => event(100, [...varint(ticks), ...varint(thread), ...varint(stack)]);
const CPU_LOAD = event(101, [...varint(1000), 0x3f, 0x00, 0x00, 0x00]);
const EVENTS = [sample(1500, 1, 1), sample(2500, 1, 1), sample(3500, 2, 2), sample(4500, 1, 1), CPU_LOAD];

describe("JFR importer", () => {
  it("reads the samples, threads and methods of a recording written as the format describes", async () => {
    const result = await importToMemory(jfrImporter, chunk({ events: EVENTS, pools: POOLS }), { chunkSize: 7 });
    expect(totalsByStack(result)).toEqual({
      samples: { "com.example.App.main(String[]);com.example.App.work(int, long)": 3, "com.example.App.main(String[])": 1 },
    });
    const rows = sampleRows(result);
    // Ticks are microseconds here (10^6 a second) from tick 1000 at the chunk's start.
    expect(rows.map((r) => r.time)).toEqual([500_000, 1_500_000, 2_500_000, 3_500_000]);
    expect(result.tables.tracks.map((t) => [t.thread_id, t.thread_name])).toEqual([
      ["101", "main"],
      ["102", "pool-1-thread-1"],
    ]);
    expect(result.tables.frames.map((f) => [f.name, f.module, f.kind, f.line])).toEqual([
      ["com.example.App.main(String[])", "com.example", "java", null],
      ["com.example.App.work(int, long)", "com.example", "java", null],
    ]);
    const codes = Object.fromEntries(result.summary.limitations.map((l) => [l.code, l.count]));
    expect(codes).toMatchObject({ JFR_STACK_TRUNCATED: 1, JFR_EVENTS_NOT_IMPORTED: 1, JFR_LINES_NOT_KEPT: 1 });
    expect(result.summary.limitations.find((l) => l.code === "JFR_EVENTS_NOT_IMPORTED")?.message).toContain("jdk.CPULoad 1");
    expect(result.summary.metadata).toMatchObject({ source_format: "jfr", "jfr.version": "2.1", "jfr.chunks": "1", time_origin_ns: "1700000000000000000", duration_ns: "1000000000" });
  });

  it("agrees with the JDK's reader on a JDK 17 recording of two busy threads", async () => {
    const result = await importToMemory(jfrImporter, read("jfr/burn.jfr"), { fileName: "burn.jfr" });
    const expected = oracle("jfr/burn.jfr.expected.json");
    expectAgreesWithJdk(result, "samples", expected["jdk.ExecutionSample"]);
    expect(result.tables.metrics.find((m) => m.name === "alloc_bytes")?.sample_count).toBe(306);
    expect(result.summary.limitations.map((l) => l.code)).not.toContain("JFR_MISSING_CONSTANT");
  });

  it("agrees with the JDK's reader on speedscope's sample recording, native method samples too", async () => {
    const result = await importToMemory(jfrImporter, read("peer/java-flight-recorder/heavy.jfr"), { fileName: "heavy.jfr" });
    const expected = oracle("jfr/heavy.jfr.expected.json");
    expectAgreesWithJdk(result, "samples", expected["jdk.ExecutionSample"]);
    expectAgreesWithJdk(result, "native_samples", expected["jdk.NativeMethodSample"]);
  });

  it("reads a file of several chunks, each with its own pools, times from the first chunk's start", async () => {
    const first = chunk({ events: EVENTS, pools: POOLS });
    const second = chunk({ events: [sample(1000, 1, 1)], pools: POOLS, startNanos: 1_700_000_000_000_000_000n + 5_000_000_000n });
    const result = await importToMemory(jfrImporter, new Uint8Array([...first, ...second]), { chunkSize: 1000 });
    expect(sampleRows(result).map((r) => r.time)).toEqual([500_000, 1_500_000, 2_500_000, 3_500_000, 5_000_000_000]);
    expect(result.summary.metadata["jfr.chunks"]).toBe("2");
    const real = new Uint8Array([...read("jfr/burn.jfr"), ...read("peer/java-flight-recorder/heavy.jfr")]);
    const both = await importToMemory(jfrImporter, real);
    expect(both.tables.metrics.find((m) => m.name === "samples")?.total).toBe(205 + 346);
  });

  it("draws a sample whose stack trace its chunk lacks as (unknown), and says so", async () => {
    const result = await importToMemory(jfrImporter, chunk({ events: [sample(1500, 1, 9)], pools: POOLS }));
    expect(totalsByStack(result)).toEqual({ samples: { "(unknown)": 1 } });
    expect(result.summary.limitations.find((l) => l.code === "JFR_MISSING_CONSTANT")?.count).toBe(1);
  });

  it("shows async-profiler's native frames (a symbol, no class) demangled, as native code", async () => {
    const pools = POOLS.map(([type, entries]): [number, [number, Bytes][]] => {
      if (type === 22) return [type, [...entries, sym(7, "_ZN2os5sleepEv"), sym(8, "")]];
      if (type === 24) return [type, [...entries, [2, [...varint(8), ...varint(0)]]]];
      if (type === 25) return [type, [...entries, [3, [...varint(2), ...varint(7), ...varint(8)]]]];
      if (type === 26) return [type, [...entries, sym(3, "C++")]];
      if (type === 28) return [type, [...entries, [3, [0, ...varint(2), ...varint(3), ...varint(0), ...varint(3), ...varint(1), ...varint(3), ...varint(1)]]]];
      return [type, entries];
    });
    const result = await importToMemory(jfrImporter, chunk({ events: [sample(1500, 1, 3)], pools }));
    expect(totalsByStack(result)).toEqual({ samples: { "com.example.App.main(String[]);os::sleep()": 1 } });
    expect(result.tables.frames.find((f) => f.name === "os::sleep()")).toMatchObject({ kind: "native", mangled_name: "_ZN2os5sleepEv", module: null });
  });

  it("formats method descriptors as jfr print does", () => {
    expect(jfrParameters("()V")).toBe("");
    expect(jfrParameters("(ZBCSIJFD)V")).toBe("boolean, byte, char, short, int, long, float, double");
    expect(jfrParameters("([[ILjava/util/Map$Entry;[Ljava/lang/Object;)Ljava/lang/String;")).toBe("int[][], Map$Entry, Object[]");
    expect(jfrParameters("(Ljava/lang/String")).toBeNull();
  });

  it("sniffs JFR chunks by their magic and version", () => {
    const head = read("jfr/burn.jfr").subarray(0, 4096);
    expect(jfrImporter.sniff(head, "", "x.jfr")).toBeGreaterThan(0.9);
    expect(jfrImporter.sniff(head, "", null)).toBeGreaterThan(0.9);
    expect(jfrImporter.sniff(new TextEncoder().encode("FLR is a word"), "", null)).toBe(0);
  });

  const real = read("jfr/burn.jfr");
  const good = chunk({ events: EVENTS, pools: POOLS });
  const metadataAt = Number(new DataView(good.buffer).getBigInt64(24));
  const badInputs: [string, Uint8Array, RegExp][] = [
    ["a real recording cut short", real.subarray(0, 200_000), /header says \d+ bytes but the input ends after 200000: truncated/],
    ["a cut chunk header", real.subarray(0, 40), /inside a chunk header .*truncated/],
    ["no magic", new Uint8Array([...new TextEncoder().encode("FLX\0"), ...real.subarray(4, 200)]), /magic/],
    ["format 1.x", (() => { const b = good.slice(); b[5] = 1; return b; })(), /format 1\.x/],
    ["an unfinished chunk (size 0)", withHeaderField(good, 8, 0), /never finished/],
    ["a metadata offset outside the chunk", withHeaderField(good, 24, good.length + 10), /metadata offset .* outside the chunk/],
    ["a metadata offset that is not the metadata", withHeaderField(good, 24, 68), /does not point at the metadata event/],
    ["a constant pool offset that is no checkpoint", withHeaderField(good, 16, metadataAt), /constant pool offset \d+ is not a checkpoint event/],
    ["a constant pool of a type the metadata lacks", chunk({ events: EVENTS, pools: [...POOLS, [999, [[1, [0]]]]] }), /type 999 is not in the chunk's metadata/],
    ["an unknown string encoding", chunk({ events: EVENTS, pools: [[21, [[1, [9, 1, 2, 3]]]]] }), /unknown string encoding 9/],
    ["an array longer than its event", chunk({ events: EVENTS, pools: [[28, [[1, [0, ...varint(100_000)]]]]] }), /array of 100000 values is longer/],
    ["an event of size 0", chunk({ events: [[0, 0, 0, 0]], pools: POOLS }), /an event has size 0/],
    ["an event running past the chunk", chunk({ events: [[...varint(5000), ...varint(100)]], pools: POOLS }), /event of 5000 bytes runs past the end of the chunk/],
    ["a value running past its event", chunk({ events: [event(100, [...varint(1500)])], pools: POOLS }), /runs past the end of its event/],
    ["no samples at all", chunk({ events: [CPU_LOAD], pools: POOLS }), /holds no execution, native-method or allocation samples/],
    ["nothing", new Uint8Array(0), /empty input/],
  ];
  it.each(badInputs)("fails with a typed error at an offset on %s", async (_name, input, message) => {
    const error = await parseErrorOf(jfrImporter, input);
    expect(error.message).toMatch(message);
    expect(error.at.offset).toBeGreaterThanOrEqual(0);
  });
});
