import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows, totalsByStack } from "../../test/helpers/evidence-rows";
import { importToMemory, type MemoryImport } from "./run";
import { jsFunctionName, v8LogFields, v8LogImporter } from "./v8-log";

const FIXTURES = new URL("../../test/fixtures/", import.meta.url);
const text = (relative: string) => readFileSync(new URL(relative, FIXTURES), "utf8");
const NODE_8 = "peer/node/8.5.0/isolate-0x102802600-v8.log";
const NODE_20 = "v8-log/isolate-0x11b3ff90-27620-v8.log";

/**
 * The flat profile `node --prof-process` printed for a log (V8's own tick processor, kept beside
 * the log): ticks per JavaScript function (its tiers summed, keyed `name file:line:col`) and per
 * shared library (by file name), and the total and unaccounted ticks.
 */
function tickProcessor(relative: string): { ticks: number; unaccounted: number; js: Record<string, number>; libraries: Record<string, number> } {
  const out = text(relative);
  const [, ticks, unaccounted] = /\((\d+) ticks, (\d+) unaccounted/.exec(out)!;
  const section = (title: string) => {
    const body = out.split(`[${title}]:`)[1].split("\n\n")[0];
    return [...body.matchAll(/^\s+(\d+)\s+[\d.]+%\s+(?:[\d.]+%\s+)?(.+)$/gm)].map((m) => [Number(m[1]), m[2].replace(/"/g, "")] as const);
  };
  const js: Record<string, number> = {};
  for (const [count, name] of section("JavaScript")) {
    const key = name.replace(/^\w+: [~*^+]?/, "");
    js[key] = (js[key] ?? 0) + count;
  }
  const libraries: Record<string, number> = {};
  for (const [count, name] of section("Shared libraries")) libraries[name.slice(name.lastIndexOf("/") + 1)] = count;
  return { ticks: Number(ticks), unaccounted: Number(unaccounted), js, libraries };
}

/** Self samples per frame, JavaScript frames keyed as the tick processor names them. */
function selfByFrame(result: MemoryImport): Record<string, number> {
  const frames = new Map(result.tables.frames.map((f) => [f.frame_id, f]));
  const out: Record<string, number> = {};
  for (const row of result.tables.frame_totals) {
    const f = frames.get(row.frame_id)!;
    const key = f.kind === "js" ? `${f.name === "(anonymous)" ? "" : f.name} ${f.file}:${f.line}:${f.col}` : String(f.name);
    if ((row.self as number) > 0) out[key] = (out[key] ?? 0) + (row.self as number);
  }
  return out;
}

const lines = (...rows: string[]) => rows.join("\n") + "\n";

describe("V8 --prof log importer", () => {
  it("agrees with V8's tick processor on a Node 8 log (quoted strings, macOS libraries)", async () => {
    const result = await importToMemory(v8LogImporter, text(NODE_8), { fileName: "isolate-0x102802600-v8.log" });
    const expected = tickProcessor("v8-log/node-8.5.0-isolate-0x102802600-v8.prof-process.txt");
    expect(result.summary.rows.samples).toBe(expected.ticks);
    expect(text(NODE_8).match(/^tick,/gm)).toHaveLength(expected.ticks);
    const self = selfByFrame(result);
    for (const [name, ticks] of Object.entries(expected.js)) expect([name, self[name]]).toEqual([name, ticks]);
    // No symbols of the Mac's libraries are to be had here: every tick in one is the library's.
    for (const [name, ticks] of Object.entries(expected.libraries)) expect([name, self[name]]).toEqual([name, ticks]);
    expect(self["(unknown)"]).toBe(expected.unaccounted);
    expect(result.summary.metadata).toMatchObject({ "v8.version": "6.0.287.53", "v8.sampling_interval_us": "1000", "v8.ticks": "93" });
    expect(result.tables.tracks).toMatchObject([{ thread_id: "0x102802600", thread_name: "isolate 0x102802600", kind: "thread" }]);
  });

  it("agrees with V8's tick processor on a Node 20 log (escaped strings, code at several tiers)", async () => {
    const result = await importToMemory(v8LogImporter, text(NODE_20), { fileName: "isolate-0x11b3ff90-27620-v8.log" });
    const expected = tickProcessor("v8-log/isolate-0x11b3ff90-27620-v8.prof-process.txt");
    expect(result.summary.rows.samples).toBe(expected.ticks);
    const self = selfByFrame(result);
    // One frame per function whatever its tier: *strings and ^strings are one.
    expect(expected.js).toEqual({ "fib /tmp/fb/v8/small/work.js:1:13": 387, "strings /tmp/fb/v8/small/work.js:2:17": 30 });
    for (const [name, ticks] of Object.entries(expected.js)) expect([name, self[name]]).toEqual([name, ticks]);
    expect(result.tables.tracks).toMatchObject([{ process_id: "27620", thread_id: "0x11b3ff90" }]);
    // Ticks are µs since the log started; they keep the log's order.
    const times = sampleRows(result).map((r) => r.time as number);
    expect(times[0]).toBeGreaterThan(0);
    expect(times.every((t, i) => i === 0 || t >= times[i - 1])).toBe(true);
  });

  it("symbolizes ticks by the code alive at each point: moves, replacements, external callbacks, frameless calls", async () => {
    const log = lines(
      "v8-version,11,3,244,8,-node.38,0",
      "shared-library,/usr/bin/node,0x400000,0x500000,0",
      "code-creation,JS,10,100,0x1000,0x100,main /app/main.js:1:1,0xa0,~",
      "code-creation,JS,10,110,0x2000,0x100,work /app/main.js:5:10,0xa1,~",
      "code-creation,Builtin,2,120,0x3000,0x80,CallFunction",
      "tick,0x2010,1000,0,0x0,0,0x1010",
      // work is re-created optimized at another address; the old range now holds a helper.
      "code-creation,JS,13,1500,0x5000,0x100,work /app/main.js:5:10,0xa1,*",
      "code-creation,JS,10,1510,0x2000,0x40,help\\x2C me /app/main.js:9:1,0xa2,~",
      "tick,0x5010,2000,0,0x0,0,0x1010",
      "tick,0x2010,3000,0,0x0,0,0x1010",
      // A frameless builtin called from work: the top of stack points into work.
      "tick,0x3010,4000,0,0x5020,0,0x1010",
      // In an external callback the callback's address (in node) stands for the pc.
      "tick,0x7777,5000,1,0x400100,6,0x5010,0x1010",
      // Offsets relative to the previous frame, and an address in no code.
      "tick,0x5010,6000,0,0x0,0,+0x0,-0x4000,0x9999",
      "code-move,0x5000,0x6000",
      "tick,0x6010,7000,0,0x0,0,0x1010",
      "tick,0x5010,8000,0,0x0,0,0x1010",
    );
    const result = await importToMemory(v8LogImporter, log, { chunkSize: 17 });
    expect(sampleRows(result).map((r) => [r.time, r.stack])).toEqual([
      [1_000_000, "main;work"],
      [2_000_000, "main;work"],
      [3_000_000, "main;help, me"],
      [4_000_000, "main;work;Builtin: CallFunction"],
      [5_000_000, "main;work;node"],
      [6_000_000, "main;work;work"],
      [7_000_000, "main;work"],
      [8_000_000, "main;(unknown)"],
    ]);
    const work = result.tables.frames.filter((f) => f.name === "work");
    expect(work).toMatchObject([{ file: "/app/main.js", line: 5, col: 10, kind: "js" }]);
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
      ["V8_LOG_LIBRARY_UNSYMBOLIZED", 1],
      ["V8_LOG_UNKNOWN_CALLERS", 1],
    ]);
    expect(result.summary.metadata["v8.vm_states"]).toBe("js=7,external=1");
  });

  it("reads V8's CSV: quoted fields with commas (before V8 7) and escapes (after)", () => {
    expect(v8LogFields('code-creation,LazyCompile,5,14007,0x3a84,166,"a, b /x.js:1:1",0x45,~')).toEqual(["code-creation", "LazyCompile", "5", "14007", "0x3a84", "166", "a, b /x.js:1:1", "0x45", "~"]);
    expect(v8LogFields("code-creation,JS,10,1,0x1,2,f\\x2Cg \\u00e9/x.js:1:2,0x3,*")).toEqual(["code-creation", "JS", "10", "1", "0x1", "2", "f,g é/x.js:1:2", "0x3", "*"]);
    expect(jsFunctionName(" util.js:1:11")).toEqual({ name: "(anonymous)", file: "util.js", line: 1, col: 11 });
    expect(jsFunctionName("setupInspector bootstrap_node.js:364:40")).toEqual({ name: "setupInspector", file: "bootstrap_node.js", line: 364, col: 40 });
    expect(jsFunctionName("_stream_readable.js")).toEqual({ name: "(anonymous)", file: "_stream_readable.js", line: null, col: null });
  });

  it("sniffs logs by their first event lines", () => {
    const head = text(NODE_20).slice(0, 65536);
    expect(v8LogImporter.sniff(new TextEncoder().encode(head), head, "isolate-0x1-v8.log")).toBeGreaterThan(0.9);
    const noVersion = "shared-library,/usr/bin/node,0x400000,0x500000,0\ncode-creation,JS,10,1,0x1,2,f a.js:1:1,0x3,~\ntick,0x1,1,0,0x0,0\n";
    expect(v8LogImporter.sniff(new TextEncoder().encode(noVersion), noVersion, null)).toBeGreaterThanOrEqual(0.5);
    expect(v8LogImporter.sniff(new TextEncoder().encode("main;work 12\n"), "main;work 12\n", null)).toBe(0);
  });

  it("records a cut last line and malformed event lines as limitations, keeping the rest", async () => {
    const log = lines("v8-version,11,3,244,8,-node.38,0", "code-creation,JS,10,100,0x1000,0x100,main /a.js:1:1,0xa0,~", "tick,0x1010,1000,0,0x0,0", "tick,zz,1100,0,0x0,0", "tick,0x1010,1200,0,0x0,0") + "tick,0x10";
    const result = await importToMemory(v8LogImporter, log);
    expect(totalsByStack(result)).toEqual({ samples: { main: 2 } });
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
      ["V8_LOG_TRUNCATED", 1],
      ["V8_LOG_INVALID_LINES", 1],
    ]);
    expect(result.summary.limitations[1].message).toContain("line 4");
  });

  const badInputs: [string, string | Uint8Array, RegExp][] = [
    ["nothing", "", /empty input/],
    ["a first line that is no event", "hello world\ntick,0x1,1,0,0x0,0\n", /expected a V8 log event line/],
    ["no ticks", lines("v8-version,11,3,244,8,-node.38,0", "code-creation,JS,10,100,0x1000,0x100,main /a.js:1:1,0xa0,~"), /no tick events: was the program run with --prof/],
    ["NUL bytes", new Uint8Array([...new TextEncoder().encode("v8-version,11,3\ntick,0x1,1,0,0x0,0\n"), 0, 1]), /NUL bytes/],
    ["events of another program", "alpha,1,2\nbeta,3\n", /no V8 log events/],
  ];
  it.each(badInputs)("fails with a typed error on %s", async (_name, input, message) => {
    const error = await parseErrorOf(v8LogImporter, input);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain("hello");
  });
});
