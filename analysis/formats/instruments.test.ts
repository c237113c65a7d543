// Real input: a Deep Copy from Instruments 16.0's Time Profiler (test/fixtures/peer). Xcode is not
// available here, so the other layouts (Instruments 7–9's Running Time, Allocations, CPU Counters,
// sample counts; process and thread rows) are written from what those versions copy.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, totalsByStack } from "../../test/helpers/evidence-rows";
import { instrumentsImporter, parseQuantity } from "./instruments";
import { importToMemory } from "./run";

const FIXTURE = path.resolve(import.meta.dirname, "../../test/fixtures/peer/Instruments/16.0/simple-time-profile-deep-copy.txt");

const rows = (header: string, lines: string[]) => [header, ...lines].join("\n") + "\n";

/** Instruments 13+ with "Separate by Thread": a process row, thread rows, then frames; ms, s and µs. */
const THREADS = rows("Weight\tSelf Weight\t\tSymbol Name", [
  "1.25 s  100.0%\t0 s\t \tMyApp (4321)",
  "1.00 s   80.0%\t0 s\t \t Main Thread  0x1a2b",
  "1.00 s   80.0%\t0 s\t \t  start",
  "1.00 s   80.0%\t10.00 ms\t \t   main",
  "740.00 ms   59.2%\t740.00 ms\t \t    render()",
  "250.00 ms   20.0%\t249.50 ms\t \t    layout()",
  "500.00 µs  \u20070.0%\t500.00 µs\t \t     measure()",
  "250.00 ms   20.0%\t0 s\t \t Thread 0x1a40",
  "250.00 ms   20.0%\t0 s\t \t  _pthread_start",
  "250.00 ms   20.0%\t250.00 ms\t \t   worker()",
]);

const expectParseError = (input: string) => parseErrorOf(instrumentsImporter, input);

describe("instruments deep copy importer", () => {
  it("reads Instruments 16's Time Profiler copy: each node's self weight on its stack, adding up to the root's weight", async () => {
    const text = readFileSync(FIXTURE, "utf8");
    const result = await importToMemory(instrumentsImporter, text, { chunkSize: 512 });
    // An independent reader: the Self Weight column, summed per symbol.
    const expected: Record<string, number> = {};
    for (const line of text.split("\n").slice(1)) {
      const [, self, symbol] = line.split("\t");
      if (!symbol) continue;
      const [, number, unit] = /^([\d.]+) (ms|s)$/.exec(self)!;
      expected[symbol.trim()] = (expected[symbol.trim()] ?? 0) + Math.round(Number(number) * (unit === "s" ? 1e9 : 1e6));
    }
    const ours: Record<string, number> = {};
    for (const [stack, value] of Object.entries(totalsByStack(result).cpu_ns)) {
      const leaf = stack.split(";").pop()!;
      ours[leaf] = (ours[leaf] ?? 0) + value;
    }
    for (const name of Object.keys(expected)) if (expected[name] === 0) delete expected[name];
    expect(ours).toEqual(expected);
    // The root row says 4.93 s; its self weights sum to the same.
    expect(result.tables.metrics).toEqual([expect.objectContaining({ name: "cpu_ns", unit: "ns", total: 4_930_000_000 })]);
    expect(ours["delta()"]).toBe(846_000_000);
    expect(totalsByStack(result).cpu_ns["start;main;delta();alpha()"]).toBe(786_000_000);
    expect(result.tables.frames.every((f) => f.kind === "native")).toBe(true);
    expect(result.summary.limitations).toEqual([]);
  });

  it("makes tracks of process and thread rows and reads weights in s, ms and µs", async () => {
    const result = await importToMemory(instrumentsImporter, THREADS, { chunkSize: 37 });
    expect(result.tables.tracks.map((t) => [t.process_id, t.process_name, t.thread_id, t.thread_name, t.kind])).toEqual([
      ["4321", "MyApp", "0x1a2b", "Main Thread", "thread"],
      ["4321", "MyApp", "0x1a40", "Thread", "thread"],
    ]);
    const byTrack: Record<string, number> = {};
    const names = new Map(result.tables.tracks.map((t) => [t.track_id, t.thread_id]));
    const stackNames = totalsByStack(result).cpu_ns;
    for (const row of result.tables.samples) byTrack[names.get(row.track_id) as string] = (byTrack[names.get(row.track_id) as string] ?? 0) + (row.value as number);
    expect(byTrack).toEqual({ "0x1a2b": 1_000_000_000, "0x1a40": 250_000_000 });
    expect(stackNames).toEqual({
      "start;main": 10_000_000,
      "start;main;render()": 740_000_000,
      "start;main;layout()": 249_500_000,
      "start;main;layout();measure()": 500_000,
      "_pthread_start;worker()": 250_000_000,
    });
    expect(result.tables.samples.every((s) => s.time_ns === null)).toBe(true);
    expect(result.summary.limitations).toEqual([]);
  });

  it("reads Instruments 7's Running Time with Self (ms), and a tree without self values by subtraction", async () => {
    const old = rows("Running Time\tSelf (ms)\t\tSymbol Name", [
      "3012.0ms  100.0%\t0\t \tserver (812)",
      "3012.0ms  100.0%\t0\t \t Main Thread  0x4a1",
      "3012.0ms  100.0%\t2\t \t  main",
      "2010.0ms   66.7%\t2010\t \t   handle()",
      "1000.0ms   33.2%\t600\t \t   parse()",
      "400.0ms   13.2%\t400\t \t    lex()",
    ]);
    const expected = { main: 2_000_000, "main;handle()": 2_010_000_000, "main;parse()": 600_000_000, "main;parse();lex()": 400_000_000 };
    expect(totalsByStack(await importToMemory(instrumentsImporter, old)).cpu_ns).toEqual(expected);
    // The same tree with only the inclusive column: self = weight − the children's.
    const inclusive = old.split("\n").map((line) => line.split("\t").filter((_, i) => i !== 1).join("\t")).join("\n");
    expect(totalsByStack(await importToMemory(instrumentsImporter, inclusive)).cpu_ns).toEqual(expected);
    // CRLF line endings (a copy saved on Windows) read the same.
    expect(totalsByStack(await importToMemory(instrumentsImporter, old.replace(/\n/g, "\r\n"))).cpu_ns).toEqual(expected);
  });

  it("reads Allocations' Bytes Used and Count, CPU Counters' cycles and plain sample counts", async () => {
    const allocations = rows("Bytes Used\tCount\t\tSymbol Name", [
      " 1.50 MB     100.0%\t300\t \tstart",
      " 1.50 MB     100.0%\t300\t \t main",
      " 1.00 MB      66.6%\t200\t \t  makeBuffers()",
      " 512.00 KB      33.3%\t100\t \t  readConfig()",
      " 2.00 KB     0.1%\t4\t \t   strdup",
    ]);
    const alloc = totalsByStack(await importToMemory(instrumentsImporter, allocations));
    expect(alloc.alloc_bytes).toEqual({ "start;main;makeBuffers()": 1024 ** 2, "start;main;readConfig()": 510 * 1024, "start;main;readConfig();strdup": 2048 });
    expect(alloc.alloc_count).toEqual({ "start;main;makeBuffers()": 200, "start;main;readConfig()": 96, "start;main;readConfig();strdup": 4 });
    const counters = rows("Weight\tSelf Weight\t\tSymbol Name", [
      "2.50 Gc  100.0%\t-\t \tcrunch (77)",
      "2.50 Gc  100.0%\t-\t \t main",
      "2.00 Gc   80.0%\t2.00 Gc\t \t  hash_block",
      "500.00 Mc   20.0%\t499.99 Mc\t \t  copy_out",
      "532 cycles    0.0%\t532 cycles\t \t   memcpy",
    ]);
    const cycles = await importToMemory(instrumentsImporter, counters);
    expect(totalsByStack(cycles).cycles).toEqual({ "main;hash_block": 2e9, "main;copy_out": 499_990_000, "main;copy_out;memcpy": 532 });
    // Frames directly under a process row are on the process's track.
    expect(cycles.tables.tracks.map((t) => [t.process_id, t.process_name, t.kind])).toEqual([["77", "crunch", "process"]]);
    expect(cycles.summary.limitations).toEqual([]);
    const counts = rows("# Samples\tSymbol Name", ["120\tMyApp (637)", "100\t Main Thread  0x12daf", "100\t  start", "60\t   work", "40\t   idle", "20\t Thread 0x2", "20\t  bg"]);
    expect(totalsByStack(await importToMemory(instrumentsImporter, counts)).samples).toEqual({ "start;work": 60, "start;idle": 40, bg: 20 });
  });

  it("counts a recursive function's time once per sample in its total", async () => {
    const recursive = rows("Weight\tSelf Weight\t\tSymbol Name", [
      "10.00 ms  100.0%\t1.00 ms\t \tmain",
      "9.00 ms  90.0%\t2.00 ms\t \t walk",
      "7.00 ms  70.0%\t3.00 ms\t \t  walk",
      "4.00 ms  40.0%\t4.00 ms\t \t   visit",
    ]);
    const result = await importToMemory(instrumentsImporter, recursive);
    const names = new Map(result.tables.frames.map((f) => [f.frame_id, f.name]));
    const totals = Object.fromEntries(result.tables.frame_totals.map((t) => [names.get(t.frame_id), [t.self, t.total]]));
    // walk's total is the outer walk's weight (9 ms), not 9 + 7.
    expect(totals).toEqual({ main: [1e6, 10e6], walk: [5e6, 9e6], visit: [4e6, 4e6] });
  });

  it("counts nodes whose weight disagrees with their self and children's beyond rounding, and imports them as copied", async () => {
    const pruned = rows("Weight\tSelf Weight\t\tSymbol Name", ["100.00 ms  100.0%\t10.00 ms\t \tmain", "50.00 ms  50.0%\t50.00 ms\t \t work"]);
    const result = await importToMemory(instrumentsImporter, pruned);
    expect(totalsByStack(result).cpu_ns).toEqual({ main: 10_000_000, "main;work": 50_000_000 });
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([["INSTRUMENTS_TOTALS_DISAGREE", 1]]);
  });

  it("parses the values Instruments writes, with their rounding", () => {
    expect(parseQuantity("4.93 s  100.0%", null)).toEqual({ value: 4.93e9, family: "time", rounding: 0.005e9 });
    expect(parseQuantity("4273.0ms   99.9%", null)).toMatchObject({ value: 4273e6, family: "time" });
    expect(parseQuantity("1,234.50 ms  10.0%", null)).toMatchObject({ value: 1234.5e6 });
    expect(parseQuantity("4,93 s  100,0 %", null)).toMatchObject({ value: 4.93e9 });
    expect(parseQuantity(" 429.93 MB     100.0%", null)).toMatchObject({ value: 429.93 * 1024 ** 2, family: "bytes" });
    expect(parseQuantity("2\t", "ms")).toMatchObject({ value: 2e6, family: "time" });
    expect(parseQuantity("-", null)).toMatchObject({ value: 0 });
    expect(parseQuantity("12 parsecs", null)).toBeNull();
    expect(parseQuantity("fast", null)).toBeNull();
  });

  it.each([
    ["no header", "main;work 12\n", /first line is not an Instruments call-tree header/, 1],
    ["an empty input", "\n\n", /empty/, 1],
    ["an unknown unit", rows("Weight\tSelf Weight\t\tSymbol Name", ["1.00 s  100.0%\t0 s\t \tmain", "12.00 parsecs  1.0%\t0 s\t \t work"]), /Weight column holds a value that is not a number with a known unit/, 3],
    ["a row without its symbol column", rows("Weight\tSelf Weight\t\tSymbol Name", ["1.00 s  100.0%\t0 s"]), /no Symbol Name column/, 2],
    ["an empty symbol", rows("Weight\tSelf Weight\t\tSymbol Name", ["1.00 s  100.0%\t1.00 s\t \t   "]), /empty symbol name/, 2],
    ["weights of two kinds", rows("Weight\tSelf Weight\t\tSymbol Name", ["1.00 ms  50.0%\t1.00 ms\t \tmain", "1.00 MB  50.0%\t1.00 MB\t \tother"]), /in bytes where earlier rows' were in time/, 3],
    ["a self value in other units", rows("Weight\tSelf Weight\t\tSymbol Name", ["1.00 ms  100.0%\t1.00 MB\t \tmain"]), /self value is in other units/, 2],
    ["no weight anywhere", rows("Weight\tSelf Weight\t\tSymbol Name", ["0 s  0.0%\t0 s\t \tmain"]), /no rows with weight/, 1],
  ])("refuses %s with a typed error naming the line", async (_name, input, reason, line) => {
    const error = await expectParseError(input);
    expect(error.reason).toMatch(reason);
    expect(error.at.line).toBe(line);
    expect(error.message).not.toContain("parsecs");
  });

  it("sniffs deep copies by their header, and declines folded stacks, perf script and JSON", () => {
    const sniff = (text: string) => instrumentsImporter.sniff(new TextEncoder().encode(text), text, null);
    expect(sniff(readFileSync(FIXTURE, "utf8"))).toBeGreaterThanOrEqual(0.9);
    expect(sniff(THREADS)).toBeGreaterThanOrEqual(0.9);
    expect(sniff("# Samples\tSymbol Name\n120\tMyApp (637)\n")).toBeGreaterThanOrEqual(0.9);
    expect(sniff("main;parse;lex 12\nmain 3\n")).toBe(0);
    expect(sniff("app 100/101 [002] 10.000100: 250000 cpu-clock:\n\tffff main (/app)\n")).toBe(0);
    expect(sniff('{"Weight":"x","Symbol Name":"y"}')).toBe(0);
  });
});
