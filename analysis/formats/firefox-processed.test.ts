// No processed profile is among the real fixtures and neither samply nor Firefox is installed
// here, so the files are written by `processedProfile` below from the format's description
// (firefox-devtools/profiler src/types/profile.ts, and for older versions what each upgrader in
// src/profile-logic/processed-profile-versioning.ts undoes), one logical profile in each layout.
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows } from "../../test/helpers/evidence-rows";
import { UnsupportedVersionError } from "./errors";
import { firefoxProcessedImporter } from "./firefox-processed";
import { importToMemory, type MemoryImport } from "./run";

interface Func {
  name: string;
  js?: { file: string; line: number; col: number };
  lib?: string;
}
/** Functions of the logical profile; frames name them, with the frame's line and category. */
const FUNCS: Func[] = [
  { name: "(root)" },
  { name: "nsAppShell::Run", lib: "libxul.so" },
  { name: "main", js: { file: "https://app.example/main.js", line: 10, col: 5 } },
  { name: "render", js: { file: "https://app.example/ui.js", line: 40, col: 3 } },
  { name: "PollWrapper" },
];
const FRAMES = [
  { func: 0, line: null, category: 1 },
  { func: 1, line: null, category: 1 },
  { func: 2, line: 12, category: 2 },
  { func: 3, line: 40, category: 2 },
  { func: 4, line: null, category: 0 },
];
interface ThreadSpec {
  name: string;
  tid: number;
  /** [prefix stack, frame] per stack. */
  stacks: [number | null, number][];
  samples: { stack: (number | null)[]; time: number[]; weight: number[] | null; cpu?: number[] };
  jsAllocations?: { stack: number[]; time: number[]; weight: number[] };
  nativeAllocations?: { stack: number[]; time: number[]; weight: number[] };
}
const THREADS: ThreadSpec[] = [
  {
    name: "GeckoMain",
    tid: 100,
    stacks: [[null, 0], [0, 1], [1, 2], [2, 3], [1, 4]],
    samples: { stack: [2, 3, null, 4, 3], time: [0, 1, 2, 3, 5], weight: [1, 2, 1, 1, 3], cpu: [0, 800, 500, 200, 100] },
    jsAllocations: { stack: [3], time: [2.5], weight: [4096] },
    nativeAllocations: { stack: [2, 2], time: [3.5, 4], weight: [100, -100] },
  },
  { name: "DOM Worker", tid: 105, stacks: [[null, 0], [0, 3]], samples: { stack: [1, 1], time: [0.5, 4.5], weight: null } },
];

/** The logical profile above, written as a processed profile of `version` lays it out. */
function processedProfile(version: number, options: { timeDeltas?: boolean; oldFileNames?: boolean } = {}) {
  const strings: string[][] = [];
  const sharedStrings: string[] = [];
  const stringTable = (thread: number) => (version >= 56 ? sharedStrings : (strings[thread] ??= []));
  const intern = (thread: number, text: string) => {
    const table = stringTable(thread);
    const at = table.indexOf(text);
    return at >= 0 ? at : table.push(text) - 1;
  };
  const sources = { length: 0, [version >= 61 ? "id" : "uuid"]: [] as null[], filename: [] as number[] };
  const column = <T>(values: T[]) => values;
  const threadTables = THREADS.map((spec, t) => {
    const resources = { length: 0, lib: [] as (number | null)[], name: [] as number[], host: [] as (number | null)[], type: [] as number[] };
    const resourceOf = new Map<string, number>();
    const resource = (name: string, type: number) => {
      if (!resourceOf.has(name)) {
        resourceOf.set(name, resources.length++);
        resources.lib.push(type === 1 ? 0 : null);
        resources.name.push(intern(t, name));
        resources.host.push(type === 3 ? intern(t, name.replace("https://", "")) : null);
        resources.type.push(type);
      }
      return resourceOf.get(name)!;
    };
    const funcs = {
      length: FUNCS.length,
      name: FUNCS.map((f) => intern(t, f.name)),
      isJS: FUNCS.map((f) => Boolean(f.js)),
      ...(version >= 17 ? { relevantForJS: FUNCS.map(() => false) } : {}),
      resource: FUNCS.map((f) => (f.lib ? resource(f.lib, 1) : f.js ? resource(new URL(f.js.file).origin, 3) : -1)),
      lineNumber: FUNCS.map((f) => (f.js ? (options.oldFileNames ? f.js.col : f.js.line) : null)),
      ...(options.oldFileNames ? {} : { columnNumber: FUNCS.map((f) => f.js?.col ?? null) }),
    } as Record<string, unknown>;
    if (version >= 58) {
      funcs.source = FUNCS.map((f) => {
        if (!f.js) return null;
        const filename = intern(t, f.js.file);
        const at = sources.filename.indexOf(filename);
        if (at >= 0) return at;
        (sources[version >= 61 ? "id" : "uuid"] as null[]).push(null);
        sources.filename.push(filename);
        return sources.length++;
      });
    } else {
      // Before version 18 a JS function with a column kept "file:line" here and the column as its line.
      funcs.fileName = FUNCS.map((f) => (f.js ? intern(t, options.oldFileNames ? `${f.js.file}:${f.js.line}` : f.js.file) : null));
    }
    const frames: Record<string, unknown> = {
      length: FRAMES.length,
      address: FRAMES.map(() => -1),
      ...(version >= 40 ? { inlineDepth: FRAMES.map(() => 0) } : {}),
      category: FRAMES.map((f) => f.category),
      subcategory: FRAMES.map(() => 0),
      func: FRAMES.map((f) => f.func),
      ...(version >= 36 ? { nativeSymbol: FRAMES.map(() => null) } : {}),
      ...(version >= 27 ? { innerWindowID: FRAMES.map(() => 0) } : {}),
      ...(version < 54 ? { implementation: FRAMES.map(() => null) } : {}),
      line: FRAMES.map((f) => f.line),
      column: FRAMES.map(() => null),
      ...(version < 45 ? { optimizations: FRAMES.map(() => null) } : {}),
    };
    const stacks: Record<string, unknown> = {
      length: spec.stacks.length,
      frame: spec.stacks.map(([, frame]) => frame),
      prefix: spec.stacks.map(([prefix]) => prefix),
      ...(version < 53 ? { category: spec.stacks.map(() => 1), subcategory: spec.stacks.map(() => 0) } : {}),
    };
    return { resources, funcs, frames, stacks };
  });

  // Version 60 shares the tables: each thread's are appended, their indices moved by what came before.
  const shared = { stackTable: { length: 0, frame: [] as number[], prefix: [] as (number | null)[] }, frameTable: {} as Record<string, unknown[]>, funcTable: {} as Record<string, unknown[]>, resourceTable: {} as Record<string, unknown[]> };
  const stackOffsets: number[] = [];
  if (version >= 60) {
    const append = (target: Record<string, unknown[]>, table: Record<string, unknown>, move: Record<string, (v: unknown) => unknown> = {}) => {
      for (const [key, values] of Object.entries(table)) {
        if (key === "length") continue;
        target[key] ??= [];
        target[key].push(...(values as unknown[]).map((v) => (move[key] ? move[key](v) : v)));
      }
      (target as unknown as { length: number }).length = ((target as unknown as { length?: number }).length ?? 0) + (table.length as number);
    };
    threadTables.forEach((tables, t) => {
      const resourceBase = (shared.resourceTable as unknown as { length?: number }).length ?? 0;
      const funcBase = (shared.funcTable as unknown as { length?: number }).length ?? 0;
      const frameBase = (shared.frameTable as unknown as { length?: number }).length ?? 0;
      stackOffsets[t] = shared.stackTable.length;
      append(shared.resourceTable, tables.resources);
      append(shared.funcTable, tables.funcs, { resource: (r) => ((r as number) < 0 ? -1 : (r as number) + resourceBase) });
      append(shared.frameTable, tables.frames, { func: (f) => (f as number) + funcBase });
      const base = shared.stackTable.length;
      shared.stackTable.frame.push(...(tables.stacks.frame as number[]).map((f) => f + frameBase));
      shared.stackTable.prefix.push(...(tables.stacks.prefix as (number | null)[]).map((p) => (p === null ? null : p + base)));
      shared.stackTable.length += tables.stacks.length as number;
    });
  }
  const moveStack = (t: number, stack: number | null) => (stack === null || version < 60 ? stack : stack + stackOffsets[t]);
  const times = (values: number[]) => (options.timeDeltas ? { timeDeltas: values.map((v, k) => v - (k > 0 ? values[k - 1] : 0)) } : { time: column(values) });

  const threads = THREADS.map((spec, t) => {
    const tables = threadTables[t];
    const samples: Record<string, unknown> = {
      length: spec.samples.stack.length,
      stack: spec.samples.stack.map((s) => moveStack(t, s)),
      ...times(spec.samples.time),
      ...(version >= 29 ? { weight: spec.samples.weight, weightType: "samples" } : spec.samples.weight ? { duration: spec.samples.weight } : {}),
      ...(spec.samples.cpu ? { threadCPUDelta: spec.samples.cpu } : {}),
    };
    const allocations = (table: { stack: number[]; time: number[]; weight: number[] } | undefined, extra: Record<string, unknown>) =>
      table ? { ...extra, length: table.stack.length, stack: table.stack.map((s) => moveStack(t, s)), time: table.time, weight: table.weight, weightType: "bytes" } : undefined;
    return {
      processType: "default",
      processStartupTime: 0,
      processShutdownTime: null,
      registerTime: 0,
      unregisterTime: null,
      pausedRanges: [],
      name: spec.name,
      ...(version >= 46 ? { isMainThread: t === 0 } : {}),
      processName: "Parent Process",
      pid: version >= 47 ? "100" : 100,
      tid: spec.tid,
      samples,
      jsAllocations: allocations(spec.jsAllocations, { className: ["Object"], typeName: ["JSObject"], coarseType: ["Object"], inNursery: [true] }),
      nativeAllocations: allocations(spec.nativeAllocations, {}),
      markers: { length: 1, category: [1], data: [null], name: [intern(t, "Jank")], startTime: [1], endTime: [2], phase: [1] },
      ...(version < 60 ? { stackTable: tables.stacks, frameTable: tables.frames, funcTable: tables.funcs, resourceTable: tables.resources } : {}),
      ...(version >= 36 && version < 60 ? { nativeSymbols: { length: 0, libIndex: [], address: [], name: [], functionSize: [] } } : {}),
      ...(version < 41 ? { libs: [{ name: "libxul.so", path: "/opt/firefox/libxul.so", debugName: "libxul.so", debugPath: "", breakpadId: "AB", arch: "x86_64", start: 0, end: 1, offset: 0 }] } : {}),
      ...(version < 56 ? { stringArray: strings[t] } : {}),
    };
  });
  return {
    meta: {
      interval: 1,
      startTime: 1_700_000_000_000,
      processType: 0,
      product: "Firefox",
      stackwalk: 1,
      version: 27,
      preprocessedProfileVersion: version,
      categories: [
        { name: "Idle", color: "transparent", subcategories: ["Other"] },
        { name: "Other", color: "grey", subcategories: ["Other"] },
        { name: "JavaScript", color: "yellow", subcategories: ["Other"] },
      ],
      sampleUnits: { time: "ms", eventDelay: "ms", threadCPUDelta: "µs" },
      markerSchema: [],
    },
    ...(version >= 41 ? { libs: [{ arch: "x86_64", name: "libxul.so", path: "/opt/firefox/libxul.so", debugName: "libxul.so", debugPath: "", breakpadId: "AB", codeId: null }] } : {}),
    pages: [],
    threads,
    ...(version >= 56 ? { shared: { stringArray: sharedStrings, ...(version >= 58 ? { sources } : {}), ...(version >= 60 ? shared : {}) } } : {}),
  };
}

/** Sample values per "metric tid stack". */
function byThread(result: MemoryImport): Record<string, number> {
  const tracks = new Map(result.tables.tracks.map((t) => [t.track_id, t.thread_id]));
  const out: Record<string, number> = {};
  for (const row of sampleRows(result)) {
    const key = `${row.metric} ${tracks.get(row.track)} ${row.stack}`;
    out[key] = (out[key] ?? 0) + row.value;
  }
  return out;
}

const R = "(root);nsAppShell::Run";
/** Worked by hand from THREADS: weights, wall time to the next sample (the last: one interval), CPU of the next sample (µs). */
const EXPECTED = {
  [`samples 100 ${R};main`]: 1,
  [`samples 100 ${R};main;render`]: 2 + 3,
  [`samples 100 ${R};PollWrapper`]: 1,
  [`wall_ns 100 ${R};main`]: 1_000_000,
  [`wall_ns 100 ${R};main;render`]: 1_000_000 + 1_000_000,
  [`wall_ns 100 ${R};PollWrapper`]: 2_000_000,
  [`cpu_ns 100 ${R};main`]: 800_000,
  [`cpu_ns 100 ${R};main;render`]: 500_000,
  [`cpu_ns 100 ${R};PollWrapper`]: 100_000,
  [`alloc_bytes 100 ${R};main;render`]: 4096,
  [`alloc_count 100 ${R};main;render`]: 1,
  [`native_alloc_bytes 100 ${R};main`]: 100,
  [`native_alloc_count 100 ${R};main`]: 1,
  "samples 105 (root);render": 2,
  "wall_ns 105 (root);render": 4_000_000 + 1_000_000,
};
const EXPECTED_FRAMES = {
  "(root)": { file: null, line: null, col: null, module: null, kind: "program" },
  "nsAppShell::Run": { file: null, line: null, col: null, module: "libxul.so", kind: "native" },
  main: { file: "https://app.example/main.js", line: 10, col: 5, module: "https://app.example/main.js", kind: "js" },
  render: { file: "https://app.example/ui.js", line: 40, col: 3, module: "https://app.example/ui.js", kind: "js" },
  PollWrapper: { file: null, line: null, col: null, module: null, kind: "idle" },
};

const expectParseError = (input: string | Uint8Array) => parseErrorOf(firefoxProcessedImporter, input);

describe("firefox-processed importer", () => {
  it.each([
    [18, {}],
    [28, {}],
    [41, {}],
    [49, {}],
    [53, { timeDeltas: true }],
    [56, {}],
    [58, {}],
    [60, {}],
    [63, { timeDeltas: true }],
  ])("reads a version %i profile: the same tracks, frames, samples, wall and CPU time whatever the layout", async (version, options) => {
    const text = JSON.stringify(processedProfile(version, options));
    const result = await importToMemory(firefoxProcessedImporter, text, { chunkSize: 97 });
    // Before version 29 the weights are written as `duration`: the same numbers.
    expect(byThread(result)).toEqual(EXPECTED);
    expect(Object.fromEntries(result.tables.frames.map((f) => [f.name, { file: f.file, line: f.line, col: f.col, module: f.module, kind: f.kind }]))).toEqual(EXPECTED_FRAMES);
    expect(result.tables.tracks.map((t) => [t.process_id, t.process_name, t.thread_id, t.thread_name])).toEqual([
      ["100", "Parent Process", "100", "GeckoMain"],
      ["100", "Parent Process", "105", "DOM Worker"],
    ]);
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
      ["FIREFOX_EMPTY_STACKS", 1],
      ["FIREFOX_DEALLOCATIONS_SKIPPED", 1],
      ["FIREFOX_MARKERS_SKIPPED", 2],
      ["FIREFOX_FRAME_LINES", 1],
    ]);
    expect(result.summary.metadata).toMatchObject({ processed_version: String(version), gecko_version: "27", time_origin_ms: "1700000000000", product: "Firefox" });
    // Sample times are ms after meta.startTime.
    expect(sampleRows(result).filter((r) => r.metric === "wall_ns" && r.track === 1).map((r) => r.time)).toEqual([500_000, 4_500_000]);
  });

  it("upgrades a version 17 profile, whose JS functions kept their line in the file name", async () => {
    const result = await importToMemory(firefoxProcessedImporter, JSON.stringify(processedProfile(17, { oldFileNames: true })));
    const main = result.tables.frames.find((f) => f.name === "main")!;
    expect([main.file, main.line, main.col]).toEqual(["https://app.example/main.js", 10, 5]);
  });

  it("reads tracing-ms weights as wall time, byte weights as bytes, and a size profile without times", async () => {
    const tracing = processedProfile(49);
    Object.assign(tracing.threads[0].samples, { weight: [2.5, 1, 1, 1, 0.5], weightType: "tracing-ms" });
    const traced = byThread(await importToMemory(firefoxProcessedImporter, JSON.stringify(tracing)));
    expect(Object.entries(traced).filter(([key]) => key.includes(" 100 ") && !key.includes("alloc"))).toEqual([
      [`wall_ns 100 ${R};main`, 2_500_000],
      [`wall_ns 100 ${R};main;render`, 1_500_000],
      [`wall_ns 100 ${R};PollWrapper`, 1_000_000],
    ]);
    const sized = processedProfile(54);
    Object.assign(sized.meta.sampleUnits, { time: "bytes" });
    Object.assign(sized.threads[0].samples, { weight: [10, 20, 30, 40, 50], weightType: "bytes", threadCPUDelta: undefined });
    const result = await importToMemory(firefoxProcessedImporter, JSON.stringify(sized));
    expect(byThread(result)[`alloc_bytes 100 ${R};main;render`]).toBe(20 + 50 + 4096);
    expect(sampleRows(result).every((r) => r.time === null)).toBe(true);
    expect(result.summary.limitations.map((l) => l.code)).toContain("FIREFOX_SIZE_PROFILE");
  });

  it("refuses versions before 4 and after 63 by version, and a Gecko profile by its name", async () => {
    for (const [version, reason] of [
      [3, /before version 4/],
      [64, /newer than any/],
    ] as const) {
      const profile = processedProfile(49);
      profile.meta.preprocessedProfileVersion = version;
      const error = await expectParseError(JSON.stringify(profile));
      expect(error).toBeInstanceOf(UnsupportedVersionError);
      expect(error.reason).toMatch(reason);
      expect((error as UnsupportedVersionError).version).toBe(String(version));
    }
    const { preprocessedProfileVersion: _v, ...geckoMeta } = processedProfile(49).meta;
    expect((await expectParseError(JSON.stringify({ meta: geckoMeta, threads: [] }))).reason).toMatch(/--format gecko/);
  });

  it.each([
    ["truncated", JSON.stringify(processedProfile(49)).slice(0, 1500), /truncated/],
    ["a stack that is not an index", JSON.stringify(change(49, (p) => (p.threads[0].samples.stack = ["a"]))), /samples\.stack holds a value that is not an index/],
    ["a column that is not an array", JSON.stringify(change(49, (p) => (p.threads[0].samples.time = 4 as never))), /samples\.time is not an array/],
    ["samples shorter than their length", JSON.stringify(change(49, (p) => (p.threads[0].samples.length = 9))), /5 stacks for a length of 9/],
    ["a frame naming a missing function", JSON.stringify(change(49, (p) => ((p.threads[0].frameTable as { func: number[] }).func[2] = 70))), /function 70, beyond/],
    ["a function naming a missing resource", JSON.stringify(change(49, (p) => ((p.threads[0].funcTable as { resource: number[] }).resource[1] = 9))), /resource 9, beyond/],
    ["a name beyond the strings", JSON.stringify(change(49, (p) => ((p.threads[0].funcTable as { name: number[] }).name[3] = 900))), /string 900, beyond/],
    ["shared strings missing (version 56)", JSON.stringify(change(56, (p) => delete (p as { shared?: unknown }).shared)), /shared\.stringArray/],
    ["shared tables missing (version 60)", JSON.stringify(change(60, (p) => delete (p.shared as { stackTable?: unknown }).stackTable)), /no stackTable/],
    ["an unknown weight type", JSON.stringify(change(49, (p) => (p.threads[0].samples.weightType = "joules"))), /weightType other than/],
    ["no meta", JSON.stringify({ threads: [] }), /no meta/],
    ["no samples", JSON.stringify({ ...processedProfile(49), threads: [] }), /no samples/],
  ])("refuses %s with a typed error saying where", async (_name, input, reason) => {
    const error = await expectParseError(input);
    expect(error.reason).toMatch(reason);
    expect(error.message).not.toContain("nsAppShell");
  });

  it("sniffs processed profiles and declines Gecko profiles and other JSON", () => {
    const sniff = (text: string) => firefoxProcessedImporter.sniff(new TextEncoder().encode(text), text, null);
    expect(sniff(JSON.stringify(processedProfile(49)))).toBeGreaterThanOrEqual(0.9);
    expect(sniff(JSON.stringify(processedProfile(63)))).toBeGreaterThanOrEqual(0.9);
    const { preprocessedProfileVersion: _v, ...meta } = processedProfile(49).meta;
    expect(sniff(JSON.stringify({ meta, threads: [{ samples: { schema: { stack: 0, time: 1 }, data: [] }, stringTable: [] }] }))).toBe(0);
    expect(sniff('{"traceEvents":[{"ph":"X","name":"a","ts":1}]}')).toBe(0);
    expect(sniff('{"meta":{"name":"x"},"data":[]}')).toBe(0);
  });
});

type Profile = ReturnType<typeof processedProfile> & { shared: Record<string, unknown> };
function change(version: number, edit: (profile: Profile & { threads: { samples: Record<string, unknown>; frameTable?: unknown; funcTable?: unknown }[] }) => void) {
  const profile = processedProfile(version) as never;
  edit(profile);
  return profile;
}
