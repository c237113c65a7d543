// Real input: Firefox 63's DevTools performance panel recording (test/fixtures/peer, a Gecko
// profile of version 12 in its "Recorded Performance Data" wrapper). No Firefox, simpleperf or
// perf with the gecko script is installed here, so the other files are written from the format's
// description (firefox-devtools/profiler docs-developer/gecko-profile-format.md,
// src/types/gecko-profile.ts; simpleperf's gecko_profile_generator.py for its shape).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows, totalsByStack } from "../../test/helpers/evidence-rows";
import { UnsupportedVersionError } from "./errors";
import { geckoImporter } from "./gecko";
import { importToMemory, type MemoryImport } from "./run";

const FIXTURE = path.resolve(import.meta.dirname, "../../test/fixtures/peer/Firefox/63/simple-firefox.json");

const FRAME_SCHEMA = { location: 0, relevantForJS: 1, innerWindowID: 2, implementation: 3, line: 4, column: 5, category: 6, subcategory: 7 };
const frame = (location: number, line: number | null, category: number) => [location, false, 0, null, line, null, category, 0];

/** A parent process with two threads and a content process 500 ms later, as Firefox writes them today (version 27). */
function firefoxProfile() {
  const meta = (startTime: number) => ({
    version: 27,
    interval: 1,
    startTime,
    shutdownTime: null,
    processType: 0,
    product: "Firefox",
    stackwalk: 1,
    categories: [
      { name: "Idle", color: "transparent", subcategories: ["Other"] },
      { name: "Other", color: "grey", subcategories: ["Other"] },
      { name: "JavaScript", color: "yellow", subcategories: ["Other"] },
    ],
    sampleUnits: { time: "ms", eventDelay: "ms", threadCPUDelta: "µs" },
    markerSchema: [],
  });
  const main = {
    name: "GeckoMain",
    processType: "default",
    processName: "Parent Process",
    pid: 100,
    tid: 100,
    registerTime: 0,
    unregisterTime: null,
    samples: {
      schema: { stack: 0, time: 1, eventDelay: 2, threadCPUDelta: 3 },
      data: [
        [2, 0, 0, null],
        [3, 1, 0, 900],
        [5, 2, 0, 1000],
        [4, 4, 0, 300],
        [null, 5, 0, 0],
        [4, 5.5, 0, 100],
        [3, 10, 0, 200],
        [3, 9.5, 0, 50], // a step back in time
        [2, 11, 0, 400],
      ],
    },
    markers: { schema: { name: 0, startTime: 1, endTime: 2, phase: 3, category: 4, data: 5 }, data: [[7, 1, 2, 1, 1, null], [7, 3, null, 0, 1, null]] },
    stackTable: { schema: { prefix: 0, frame: 1 }, data: [[null, 0], [0, 2], [1, 3], [2, 4], [1, 5], [3, 1], [0, 6]] },
    frameTable: { schema: FRAME_SCHEMA, data: [frame(0, null, 1), frame(1, null, 1), frame(2, null, 1), frame(3, 12, 2), frame(4, 40, 2), frame(5, null, 0), frame(6, null, 1)] },
    stringTable: ["(root)", "0x1100", "nsAppShell::Run (in libxul.so)", "main (https://app.example/main.js:10:5)", "render (https://app.example/ui.js:40:3)[2]", "PollWrapper", "0x9999", "Jank"],
  };
  const renderer = {
    name: "Renderer",
    processType: "default",
    processName: "Parent Process",
    pid: 100,
    tid: 101,
    samples: { schema: { stack: 0, time: 1, eventDelay: 2 }, data: [[1, 0.5, 0], [2, 3, 0]] },
    markers: { schema: { name: 0, startTime: 1, endTime: 2, phase: 3, category: 4, data: 5 }, data: [] },
    stackTable: { schema: { prefix: 0, frame: 1 }, data: [[null, 0], [0, 1], [1, 2]] },
    frameTable: { schema: FRAME_SCHEMA, data: [frame(0, null, 1), frame(1, null, 1), frame(2, null, 1)] },
    stringTable: ["(root)", "RenderThread::Run (in libxul.so)", "0x5010"],
  };
  const content = {
    name: "GeckoMain",
    processType: "tab",
    processName: "Isolated Web Content",
    pid: 200,
    tid: 200,
    samples: { schema: { stack: 0, time: 1, eventDelay: 2 }, data: [[1, 10, 0], [1, 11.5, 0]] },
    markers: { schema: { name: 0, startTime: 1, endTime: 2, phase: 3, category: 4, data: 5 }, data: [] },
    stackTable: { schema: { prefix: 0, frame: 1 }, data: [[null, 0], [0, 1]] },
    frameTable: { schema: FRAME_SCHEMA, data: [frame(0, null, 1), frame(1, 3, 2)] },
    stringTable: ["(root)", "onClick (https://site.example/app.js:3)"],
  };
  return {
    meta: meta(1_700_000_000_000),
    libs: [
      { start: 0x5000, end: 0x6000, offset: 0, name: "libc.so.6", path: "/usr/lib/libc.so.6", debugName: "libc.so.6", debugPath: "", breakpadId: "A0", arch: "x86_64" },
      { start: 0x1000, end: 0x2000, offset: 0, name: "libxul.so", path: "/opt/firefox/libxul.so", debugName: "libxul.so", debugPath: "", breakpadId: "B0", arch: "x86_64" },
    ],
    pausedRanges: [{ startTime: 6, endTime: 9, reason: "profiler-paused" }],
    threads: [main, renderer],
    processes: [{ meta: meta(1_700_000_000_500), libs: [], pausedRanges: [], threads: [content], processes: [] }],
  };
}

/** Sample values per "metric thread-name stack". */
function byThread(result: MemoryImport): Record<string, number> {
  const tracks = new Map(result.tables.tracks.map((t) => [t.track_id, `${t.process_id}/${t.thread_id}`]));
  const out: Record<string, number> = {};
  for (const row of sampleRows(result)) {
    const key = `${row.metric} ${tracks.get(row.track)} ${row.stack}`;
    out[key] = (out[key] ?? 0) + row.value;
  }
  return out;
}

const expectParseError = (input: string | Uint8Array) => parseErrorOf(geckoImporter, input);

describe("gecko importer", () => {
  it("reads Firefox 63's DevTools recording: one thread, its samples, and wall time covering the recording", async () => {
    const bytes = readFileSync(FIXTURE);
    const result = await importToMemory(geckoImporter, bytes);
    // An independent reader: the file's own tables, resolved here leaf by leaf.
    const profile = JSON.parse(bytes.toString("utf8")).profile;
    const thread = profile.threads[0];
    const stringOf = (stack: number) => thread.stringTable[thread.frameTable.data[thread.stackTable.data[stack][1]][0]] as string;
    const leafCounts: Record<string, number> = {};
    for (const [stack] of thread.samples.data) {
      const location = stringOf(stack);
      // "name (url:line:col)", a script's top level written as "url:line:col", or a label.
      const name = / \(/.test(location)
        ? location.replace(/ \(.*$/, "")
        : /:\d+:\d+$/.test(location)
          ? `(root scope) ${location.split(" -> ").pop()!.replace(/:\d+:\d+$/, "")}`
          : location;
      leafCounts[name] = (leafCounts[name] ?? 0) + 1;
    }
    const rows = sampleRows(result);
    const ours: Record<string, number> = {};
    for (const row of rows.filter((r) => r.metric === "samples")) {
      const leaf = row.stack.split(";").pop()!;
      ours[leaf] = (ours[leaf] ?? 0) + row.value;
    }
    expect(ours).toEqual(leafCounts);
    expect(thread.samples.data.length).toBe(39);
    const times = thread.samples.data.map((r: number[]) => r[1]);
    const wall = rows.filter((r) => r.metric === "wall_ns").reduce((sum, r) => sum + r.value, 0);
    // Sample times are ascending: their wall time is the span they cover plus one interval (1 ms).
    expect(wall).toBeCloseTo((times[times.length - 1] - times[0] + profile.meta.interval) * 1e6, -2);
    expect(result.tables.tracks).toEqual([{ track_id: 0, process_id: "32922", process_name: "tab", thread_id: "7051856", thread_name: "GeckoMain", kind: "thread" }]);
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.file, f.line, f.col, f.kind]]));
    expect(frames.alpha).toEqual(["http://localhost:8000/simple.js", 1, 14, "js"]);
    expect(frames["(root)"]).toEqual([null, null, null, "program"]);
    // "a -> b" loader chains keep the script that ran.
    expect(frames["exports.makeInfallible/<"]).toEqual(["resource://devtools/shared/ThreadSafeDevToolsUtils.js", 107, 17, "js"]);
    // Version 12 predates relevantForJS: "AutoEntryScript <reason>" labels are named as upgraded files name them.
    expect(Object.keys(frames)).toContain("<script> element");
    expect(result.summary.metadata).toMatchObject({ gecko_version: "12", product: "Firefox", time_origin_ms: "1536100486169.2188" });
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
      ["FIREFOX_MARKERS_SKIPPED", 9],
      ["FIREFOX_FRAME_LINES", 55],
    ]);
  });

  it("reads every thread of every process as its own track, on one clock, with libraries, JS, labels and CPU time", async () => {
    for (const chunkSize of [13, 64 * 1024]) {
      const result = await importToMemory(geckoImporter, JSON.stringify(firefoxProfile()), { chunkSize });
      expect(result.tables.tracks.map((t) => [t.process_id, t.process_name, t.thread_id, t.thread_name])).toEqual([
        ["100", "Parent Process", "100", "GeckoMain"],
        ["100", "Parent Process", "101", "Renderer"],
        ["200", "Isolated Web Content", "200", "GeckoMain"],
      ]);
      const R = "(root);nsAppShell::Run";
      // Worked by hand from the samples above: each sample's wall time runs to the next sample's,
      // stops at the pause (6–9 ms), and the step back from 10 to 9.5 ms counts 9.5–11 once.
      expect(byThread(result)).toEqual({
        [`samples 100/100 ${R};main`]: 2,
        [`samples 100/100 ${R};main;render`]: 3,
        [`samples 100/100 ${R};main;render;0x1100`]: 1,
        [`samples 100/100 ${R};PollWrapper`]: 2,
        [`wall_ns 100/100 ${R};main`]: 2_000_000,
        [`wall_ns 100/100 ${R};main;render`]: 2_500_000,
        [`wall_ns 100/100 ${R};main;render;0x1100`]: 2_000_000,
        [`wall_ns 100/100 ${R};PollWrapper`]: 1_500_000,
        // Each sample gets the next one's threadCPUDelta (µs): 900, 1000, 300, 0, [100 on the empty
        // stack], 200, 50, 400, and the last sample none.
        [`cpu_ns 100/100 ${R};main`]: 900_000,
        [`cpu_ns 100/100 ${R};main;render`]: 1_000_000 + 50_000 + 400_000,
        [`cpu_ns 100/100 ${R};main;render;0x1100`]: 300_000,
        [`cpu_ns 100/100 ${R};PollWrapper`]: 200_000,
        "samples 100/101 (root);RenderThread::Run": 1,
        "samples 100/101 (root);RenderThread::Run;0x5010": 1,
        "wall_ns 100/101 (root);RenderThread::Run": 2_500_000,
        "wall_ns 100/101 (root);RenderThread::Run;0x5010": 1_000_000,
        "samples 200/200 (root);onClick": 2,
        "wall_ns 200/200 (root);onClick": 2_500_000,
      });
      // The content process's clock starts 500 ms after the parent's.
      const content = sampleRows(result).filter((r) => r.stack.endsWith("onClick") && r.metric === "samples");
      expect(content.map((r) => r.time)).toEqual([510_000_000, 511_500_000]);
      const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, { file: f.file, line: f.line, col: f.col, module: f.module, kind: f.kind }]));
      expect(frames).toEqual({
        "(root)": { file: null, line: null, col: null, module: null, kind: "program" },
        "nsAppShell::Run": { file: null, line: null, col: null, module: "libxul.so", kind: "native" },
        main: { file: "https://app.example/main.js", line: 10, col: 5, module: "https://app.example/main.js", kind: "js" },
        render: { file: "https://app.example/ui.js", line: 40, col: 3, module: "https://app.example/ui.js", kind: "js" },
        "0x1100": { file: null, line: null, col: null, module: "libxul.so", kind: "native" },
        PollWrapper: { file: null, line: null, col: null, module: null, kind: "idle" },
        "RenderThread::Run": { file: null, line: null, col: null, module: "libxul.so", kind: "native" },
        "0x5010": { file: null, line: null, col: null, module: "libc.so.6", kind: "native" },
        onClick: { file: "https://site.example/app.js", line: 3, col: null, module: "https://site.example/app.js", kind: "js" },
      });
      expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
        ["FIREFOX_EMPTY_STACKS", 1],
        ["FIREFOX_MARKERS_SKIPPED", 2],
        ["FIREFOX_FRAME_LINES", 1],
      ]);
      expect(result.summary.metadata).toMatchObject({ gecko_version: "27", time_origin_ms: "1700000000000" });
    }
  });

  it("reads simpleperf's export: presymbolicated native frames with their libraries, kernel frames as kernel", async () => {
    // The shape gecko_profile_generator.py writes: version 24, "symbol (in dso)" frames, monotonic ms.
    const thread = (tid: number, comm: string, samples: [number, number][]) => ({
      tid,
      pid: 4242,
      name: comm,
      markers: { schema: { name: 0, startTime: 1, endTime: 2, phase: 3, category: 4, data: 5 }, data: [] },
      samples: { schema: { stack: 0, time: 1, responsiveness: 2 }, data: samples.map(([stack, time]) => [stack, time, 0]) },
      frameTable: {
        schema: { location: 0, relevantForJS: 1, innerWindowID: 2, implementation: 3, optimizations: 4, line: 5, column: 6, category: 7, subcategory: 8 },
        data: [[0, false, 0, null, null, null, null, 2, 0], [1, false, 0, null, null, null, null, 3, 0], [2, false, 0, null, null, null, null, 1, 0]],
      },
      stackTable: { schema: { prefix: 0, frame: 1, category: 2 }, data: [[null, 0, 0], [0, 1, 0], [1, 2, 0]] },
      stringTable: ["__start_thread (in /apex/com.android.runtime/lib64/bionic/libc.so)", "art::ArtMethod::Invoke (in /apex/com.android.art/lib64/libart.so)", "__schedule (in [kernel.kallsyms])"],
      registerTime: 0,
      unregisterTime: null,
      processType: "default",
    });
    const profile = {
      libs: [],
      meta: {
        interval: 1,
        processType: 0,
        product: "/system/bin/simpleperf record -g --app com.example",
        stackwalk: 1,
        debug: 0,
        startTime: 1_700_000_123_000,
        shutdownTime: null,
        version: 24,
        presymbolicated: true,
        categories: ["User", "Kernel", "Native", "DEX", "OAT", "Off-CPU", "Other", "JIT"].map((name) => ({ name, color: "grey", subcategories: ["Other"] })),
        markerSchema: [],
      },
      pausedRanges: [],
      processes: [],
      threads: [thread(4242, "com.example", [[1, 86_400_000], [2, 86_400_010], [2, 86_400_011]]), thread(4250, "RenderThread", [[2, 86_400_004]])],
    };
    const result = await importToMemory(geckoImporter, JSON.stringify(profile));
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.module, f.kind]]));
    expect(frames).toEqual({
      __start_thread: ["/apex/com.android.runtime/lib64/bionic/libc.so", "native"],
      "art::ArtMethod::Invoke": ["/apex/com.android.art/lib64/libart.so", "native"],
      __schedule: ["[kernel.kallsyms]", "kernel"],
    });
    expect(totalsByStack(result).wall_ns).toEqual({
      "__start_thread;art::ArtMethod::Invoke": 10_000_000,
      "__start_thread;art::ArtMethod::Invoke;__schedule": 1_000_000 + 1_000_000 + 1_000_000,
    });
    expect(result.tables.tracks.map((t) => [t.process_id, t.process_name, t.thread_id, t.thread_name])).toEqual([
      ["4242", "default", "4242", "com.example"],
      ["4242", "default", "4250", "RenderThread"],
    ]);
  });

  it("refuses profiles older than version 5 or newer than 31 by their version, and a processed profile by its name", async () => {
    for (const [version, message] of [
      [4, /before version 5/],
      [32, /newer than any/],
      [undefined, /missing/],
    ] as const) {
      const profile = { ...firefoxProfile(), meta: { ...firefoxProfile().meta, version } };
      const error = await expectParseError(JSON.stringify(profile));
      expect(error).toBeInstanceOf(UnsupportedVersionError);
      expect(error.reason).toMatch(message);
      expect((error as UnsupportedVersionError).supported).toBe("5 to 31");
    }
    const processed = { meta: { version: 27, preprocessedProfileVersion: 49, interval: 1, startTime: 0, processType: 0 }, threads: [] };
    expect((await expectParseError(JSON.stringify(processed))).reason).toMatch(/--format firefox-processed/);
  });

  it.each([
    ["not JSON", "{ meta: 1 }", /property name/],
    ["truncated", JSON.stringify(firefoxProfile()).slice(0, 900), /truncated/],
    ["a top-level array", "[1, 2]", /not an object|no top-level object/],
    ["meta that is not an object", '{"meta": 3, "threads": []}', /meta is not an object/],
    ["a thread embedded as text (before version 5)", JSON.stringify({ ...firefoxProfile(), threads: ["{}"] }), /thread is a string/],
    ["a samples row that is not an array", JSON.stringify(withMain((t) => (t.samples.data[0] = 7 as never))), /samples row is not an array/],
    ["a stack that is not an index", JSON.stringify(withMain((t) => (t.samples.data[0][0] = 1.5))), /samples\.stack holds a value that is not an index/],
    ["a stack beyond the table", JSON.stringify(withMain((t) => (t.samples.data[0][0] = 99))), /stack 99, beyond/],
    ["prefixes that loop", JSON.stringify(withMain((t) => (t.stackTable.data[0] = [2, 0]))), /form a cycle/],
    ["a frame beyond the table", JSON.stringify(withMain((t) => (t.stackTable.data[1] = [0, 50]))), /frame 50, beyond/],
    ["a location beyond the string table", JSON.stringify(withMain((t) => (t.frameTable.data[2][0] = 80))), /string 80, beyond/],
    ["samples without times", JSON.stringify(withMain((t) => (t.samples.schema = { stack: 0 } as never))), /no time for every stack/],
    ["no samples at all", JSON.stringify({ ...firefoxProfile(), threads: [], processes: [] }), /no samples/],
    ["no meta", JSON.stringify({ threads: firefoxProfile().threads }), /no meta/],
  ])("refuses %s with a typed error saying where", async (_name, input, reason) => {
    const error = await expectParseError(input);
    expect(error.reason).toMatch(reason);
    // The reason never quotes the input's bytes.
    expect(error.message).not.toContain("nsAppShell");
  });

  it("sniffs Gecko profiles and DevTools recordings, and declines processed profiles and other JSON", () => {
    const sniff = (text: string) => geckoImporter.sniff(new TextEncoder().encode(text), text, null);
    const fixture = readFileSync(FIXTURE).subarray(0, 64 * 1024);
    expect(sniff(fixture.toString("utf8"))).toBeGreaterThanOrEqual(0.9);
    expect(sniff(JSON.stringify(firefoxProfile()))).toBeGreaterThanOrEqual(0.9);
    // Firefox writes its libraries first; with hundreds of them the head holds nothing else.
    const libs = Array.from({ length: 400 }, (_, i) => ({ start: i * 4096, end: i * 4096 + 4096, offset: 0, name: `lib${i}.so`, path: `/usr/lib/lib${i}.so`, debugName: `lib${i}.so`, debugPath: "", breakpadId: "AB", arch: "x86_64" }));
    expect(sniff(JSON.stringify({ libs, meta: {} }).slice(0, 64 * 1024))).toBeGreaterThanOrEqual(0.8);
    expect(sniff('{"meta":{"version":27,"preprocessedProfileVersion":49,"interval":1,"startTime":0,"processType":0},"threads":[]}')).toBe(0);
    expect(sniff('{"traceEvents":[{"ph":"X","name":"a","ts":1}]}')).toBe(0);
    expect(sniff('{"nodes":[{"id":1,"callFrame":{}}],"startTime":1,"samples":[]}')).toBe(0);
    expect(sniff('{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[]}')).toBe(0);
    expect(sniff('{"meta":{"name":"x"},"data":[]}')).toBe(0);
  });
});

type Thread = ReturnType<typeof firefoxProfile>["threads"][0];

/** The hand-written profile with its main thread changed by `change`. */
function withMain(change: (thread: Thread & { samples: { data: unknown[][] } }) => void) {
  const profile = firefoxProfile();
  change(profile.threads[0] as never);
  return profile;
}
