import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseErrorOf, peerFixture, sampleRows } from "../../test/helpers/evidence-rows";
import { EvidenceBuilder, MemorySink } from "../evidence/builder";
import { gunzip, isGzip } from "../io/bytes";
import { chromeTraceImporter, FileOrder, sortNearlySorted } from "./chrome-trace";
import { importToMemory, sourceFromBytes, type MemoryImport } from "./run";
import { DEFAULT_IMPORT_LIMITS } from "./types";

const HAND_WRITTEN = [
  { name: "process_name", ph: "M", pid: 1, args: { name: "Browser" } },
  { name: "thread_name", ph: "M", pid: 1, tid: 10, args: { name: "Main" } },
  { name: "thread_sort_index", ph: "M", pid: 1, tid: 10, args: { sort_index: -1 } },
  { name: "Task", cat: "toplevel", ph: "X", pid: 1, tid: 10, ts: 1000, dur: 100, args: { k: 1 } },
  { name: "Inner", cat: "blink", ph: "B", pid: 1, tid: 10, ts: 1010, args: { a: 1 } },
  { name: "Inner", ph: "E", pid: 1, tid: 10, ts: 1030, args: { b: 2 } },
  { name: "Mark", ph: "i", s: "t", pid: 1, tid: 10, ts: 1020 },
  { name: "GlobalMark", ph: "I", s: "g", pid: 1, tid: 10, ts: 1050 },
  { name: "Req", cat: "net", ph: "b", id: "0x1", pid: 1, tid: 10, ts: 1005, args: { url: "/x" } },
  { name: "Step", cat: "net", ph: "n", id: "0x1", pid: 1, tid: 10, ts: 1015 },
  { name: "Req", cat: "net", ph: "e", id: "0x1", pid: 1, tid: 10, ts: 1090 },
  { name: "ipc", cat: "ipc", ph: "s", id: 7, pid: 1, tid: 10, ts: 1012 },
  { name: "Recv", cat: "ipc", ph: "X", pid: 1, tid: 20, ts: 1040, dur: 10 },
  { name: "ipc", cat: "ipc", ph: "f", id: 7, pid: 1, tid: 20, ts: 1039 },
  { name: "Send2", ph: "X", pid: 1, tid: 20, ts: 1060, dur: 5, bind_id: "0xA", flow_out: true },
  { name: "Recv2", ph: "X", pid: 1, tid: 10, ts: 1070, dur: 5, bind_id: "0xA", flow_in: true },
  { name: "Memory", ph: "C", pid: 1, ts: 1000, args: { heap: 10, rss: 20 } },
  { name: "Memory", ph: "C", pid: 1, ts: 1080, args: { heap: 15 } },
  { name: "Profile", ph: "P", id: "0x1", pid: 1, tid: 10, ts: 1000, args: { data: { startTime: 1000 } } },
  {
    name: "ProfileChunk",
    ph: "P",
    id: "0x1",
    pid: 1,
    tid: 11,
    ts: 1100,
    args: {
      data: {
        cpuProfile: {
          nodes: [
            { id: 1, callFrame: { functionName: "(root)", url: "", scriptId: 0, lineNumber: -1, columnNumber: -1 } },
            { id: 2, parent: 1, callFrame: { functionName: "work", url: "file:///w.js", scriptId: 5, lineNumber: 0, columnNumber: 0 } },
          ],
          samples: [2, 2],
        },
        timeDeltas: [10, 20],
      },
    },
  },
  {
    name: "ProfileChunk",
    ph: "P",
    id: "0x1",
    pid: 1,
    tid: 11,
    ts: 1101,
    args: { data: { cpuProfile: { nodes: [{ id: 3, parent: 2, callFrame: { functionName: "leaf", url: "file:///w.js", scriptId: 5, lineNumber: 4, columnNumber: 2 } }], samples: [3] }, timeDeltas: [30] } },
  },
  { name: "Relay", cat: "ipc", ph: "X", pid: 1, tid: 30, ts: 1020, dur: 5 },
  { name: "ipc", cat: "ipc", ph: "t", id: 7, pid: 1, tid: 30, ts: 1022 },
];

function bySpanId(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return [...rows].sort((a, b) => Number(a.span_id) - Number(b.span_id));
}

/** The spans by id (the importer gives ids in the file's order, by start: see FileOrder). */
function spans(result: MemoryImport) {
  return bySpanId(result.tables.spans).map(({ span_id, track_id, parent_span_id, name, category, start_ns, dur_ns, depth, status, args }) => ({
    span_id,
    track_id,
    parent_span_id,
    name,
    category,
    start_ns,
    dur_ns,
    depth,
    status,
    args: args === null ? null : JSON.parse(args as string),
  }));
}

const parseError = (input: string) => parseErrorOf(chromeTraceImporter, input);

const EXPECTED_SPANS = [
  { span_id: 0, track_id: 0, parent_span_id: null, name: "Task", category: "toplevel", start_ns: 0, dur_ns: 100_000, depth: 0, status: null, args: { k: 1 } },
  { span_id: 1, track_id: 2, parent_span_id: null, name: "Req", category: "net", start_ns: 5_000, dur_ns: 85_000, depth: 0, status: null, args: { url: "/x" } },
  { span_id: 2, track_id: 0, parent_span_id: 0, name: "Inner", category: "blink", start_ns: 10_000, dur_ns: 20_000, depth: 1, status: null, args: { a: 1, b: 2 } },
  { span_id: 3, track_id: 2, parent_span_id: 1, name: "Step", category: "net", start_ns: 15_000, dur_ns: 0, depth: 1, status: null, args: null },
  { span_id: 4, track_id: 0, parent_span_id: 2, name: "Mark", category: null, start_ns: 20_000, dur_ns: 0, depth: 2, status: null, args: null },
  { span_id: 5, track_id: 4, parent_span_id: null, name: "Relay", category: "ipc", start_ns: 20_000, dur_ns: 5_000, depth: 0, status: null, args: null },
  { span_id: 6, track_id: 3, parent_span_id: null, name: "Recv", category: "ipc", start_ns: 40_000, dur_ns: 10_000, depth: 0, status: null, args: null },
  { span_id: 7, track_id: 1, parent_span_id: null, name: "GlobalMark", category: null, start_ns: 50_000, dur_ns: 0, depth: 0, status: null, args: null },
  { span_id: 8, track_id: 3, parent_span_id: null, name: "Send2", category: null, start_ns: 60_000, dur_ns: 5_000, depth: 0, status: null, args: null },
  { span_id: 9, track_id: 0, parent_span_id: 0, name: "Recv2", category: null, start_ns: 70_000, dur_ns: 5_000, depth: 1, status: null, args: null },
];

describe("chrome-trace importer", () => {
  it("maps every phase of a hand-written trace to exact spans, edges, measurements, samples and tracks", async () => {
    for (const chunkSize of [13, 64 * 1024]) {
      const result = await importToMemory(chromeTraceImporter, JSON.stringify({ traceEvents: HAND_WRITTEN, displayTimeUnit: "ms" }), { chunkSize });
      expect(spans(result)).toEqual(EXPECTED_SPANS);
      // s (inside Inner) → t (inside Relay) → f (binds to the next slice, Recv); Send2 flow_out → Recv2 flow_in.
      expect(result.tables.edges).toEqual([
        { from_span_id: 2, to_span_id: 5, kind: "flow" },
        { from_span_id: 5, to_span_id: 6, kind: "flow" },
        { from_span_id: 8, to_span_id: 9, kind: "flow" },
      ]);
      expect(result.tables.measurements.map((m) => [m.name, m.value, m.aggregation, JSON.parse(m.dimensions as string)])).toEqual([
        ["Memory", 10, "sample", { time_ns: 0, pid: "1", series: "heap" }],
        ["Memory", 20, "sample", { time_ns: 0, pid: "1", series: "rss" }],
        ["Memory", 15, "sample", { time_ns: 80_000, pid: "1", series: "heap" }],
      ]);
      expect(result.tables.tracks).toEqual([
        { track_id: 0, process_id: "1", process_name: "Browser", thread_id: "10", thread_name: "Main", kind: "thread" },
        { track_id: 1, process_id: null, process_name: null, thread_id: null, thread_name: null, kind: "global" },
        { track_id: 2, process_id: "1", process_name: "Browser", thread_id: "net:0x1", thread_name: "Req", kind: "async" },
        { track_id: 3, process_id: "1", process_name: "Browser", thread_id: "20", thread_name: null, kind: "thread" },
        { track_id: 4, process_id: "1", process_name: "Browser", thread_id: "30", thread_name: null, kind: "thread" },
      ]);
      // Profile samples land on the Profile event's thread, at startTime + cumulative deltas.
      expect(sampleRows(result)).toEqual([
        { stack: "work", metric: "samples", time: 10_000, value: 1, track: 0 },
        { stack: "work", metric: "wall_ns", time: 10_000, value: 20_000, track: 0 },
        { stack: "work", metric: "samples", time: 30_000, value: 1, track: 0 },
        { stack: "work", metric: "wall_ns", time: 30_000, value: 30_000, track: 0 },
        { stack: "work;leaf", metric: "samples", time: 60_000, value: 1, track: 0 },
        { stack: "work;leaf", metric: "wall_ns", time: 60_000, value: 25_000, track: 0 },
      ]);
      expect(result.tables.frames.map(({ name, line, col, kind }) => ({ name, line, col, kind }))).toEqual([
        { name: "work", line: 1, col: 1, kind: "js" },
        { name: "leaf", line: 5, col: 3, kind: "js" },
      ]);
      expect(result.summary.metadata).toMatchObject({ time_origin_us: "1000", "thread_sort_index.1.10": "-1" });
      expect(result.summary.limitations).toEqual([]);
    }
  });

  it("reads the array form and Chrome's unterminated file (no closing bracket, trailing comma) alike", async () => {
    const arrayForm = JSON.stringify(HAND_WRITTEN);
    const unterminated = "[" + HAND_WRITTEN.map((e) => JSON.stringify(e) + ",\n").join("");
    for (const text of [arrayForm, unterminated, unterminated.trimEnd().slice(0, -1)]) {
      const result = await importToMemory(chromeTraceImporter, text, { chunkSize: 50 });
      expect(spans(result)).toEqual(EXPECTED_SPANS);
      expect(result.tables.edges).toHaveLength(3);
    }
  });

  it("stores args as the JSON text of their value, whatever their spacing, escapes or numbers, at every chunk size", async () => {
    const argsTexts = ['{"k":1}', '{ "k" : 1.50 }', String.raw`{"s":"a\"b\u00e9","n":[1,2e3,-0.5]}`, '{"big":12345678901234567890,"neg":-7}', "{}", "[1,2]", '{"nested":{"deep":[true,false,null]}}'];
    const lines = argsTexts.map((args, i) => `{"name":"E${i}","ph":"${i % 2 ? "X" : "i"}","pid":1,"tid":1,"ts":${i * 10},"dur":1,"args":${args}}`);
    const text = `[${lines.join(",\n")}]`;
    const expected = argsTexts.map((args) => {
      const value = JSON.parse(args);
      return Array.isArray(value) || Object.keys(value).length === 0 ? null : JSON.stringify(value);
    });
    for (const chunkSize of [7, 64, 1 << 16]) {
      const result = await importToMemory(chromeTraceImporter, text, { chunkSize });
      const spans = [...result.tables.spans].sort((a, b) => Number(a.start_ns) - Number(b.start_ns));
      expect(spans.map((s) => s.args), `chunk ${chunkSize}`).toEqual(expected);
    }
  });

  it("records unmatched, unfinished, reversed and overlapping events as limitations and keeps going", async () => {
    const trace = [
      { name: "Orphan", ph: "E", pid: 1, tid: 1, ts: 5 },
      { name: "Open", ph: "B", pid: 1, tid: 1, ts: 10 },
      { name: "A", ph: "X", pid: 1, tid: 2, ts: 0, dur: 10 },
      { name: "B", ph: "X", pid: 1, tid: 2, ts: 5, dur: 10 },
      { name: "Back", ph: "B", pid: 1, tid: 3, ts: 20 },
      { name: "Back", ph: "E", pid: 1, tid: 3, ts: 15 },
      { name: "NoDur", ph: "X", pid: 1, tid: 4, ts: 30 },
      { name: "NoTs", ph: "X", pid: 1, tid: 4 },
      "not an event",
      { name: "Snapshot", ph: "O", id: 1, pid: 1, tid: 1, ts: 40 },
      { name: "Done", ph: "e", cat: "c", id: 9, pid: 1, tid: 1, ts: 41 },
    ];
    const result = await importToMemory(chromeTraceImporter, JSON.stringify(trace));
    expect(result.summary.limitations.map((l) => l.code).sort()).toEqual(
      ["END_BEFORE_BEGIN", "INVALID_EVENT", "MISSING_DURATION", "MISSING_TIMESTAMP", "OUT_OF_ORDER_EVENTS", "OVERLAPPING_SLICES", "SAMPLES_FROM_SPANS", "UNFINISHED_SLICE", "UNMATCHED_ASYNC_END", "UNMATCHED_END", "UNSUPPORTED_PHASE"].sort(),
    );
    const byName = new Map(spans(result).map((s) => [s.name, s]));
    // The unfinished slice runs to the last timestamp of the trace (41 µs).
    expect(byName.get("Open")).toMatchObject({ start_ns: 10_000, dur_ns: 31_000, status: "unfinished" });
    expect(byName.get("Back")).toMatchObject({ start_ns: 20_000, dur_ns: 0 });
    expect(byName.get("B")).toMatchObject({ depth: 1, parent_span_id: byName.get("A")?.span_id });
    expect(byName.get("NoDur")).toMatchObject({ dur_ns: 0 });
    expect([...byName.keys()].sort()).toEqual(["A", "B", "Back", "NoDur", "Open"]);
  });

  it("nests slices written in any order as one stack per track would, and gives span ids in the file's order", async () => {
    // Slices on four threads, instants on the global track and async slices (b, then e) on three
    // ids, written in no order: equal starts with other durations, zero durations, overlaps, and
    // starts a fraction of a nanosecond apart.
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    type Slice = { name: string; track: string; ts: number; dur: number };
    const slices: Slice[] = [];
    const events: object[] = [];
    for (let i = 0; i < 3000; i++) {
      const name = `e${i}`;
      const ts = Math.floor(random() * 400) + [0, 0.5, 0.0001, 0.0002][Math.floor(random() * 4)];
      const dur = Math.floor(random() * 4) * Math.floor(random() * 30);
      const kind = random();
      if (kind < 0.05) {
        events.push({ name, ph: "I", s: "g", pid: 1, tid: 1, ts });
        slices.push({ name, track: "global", ts, dur: 0 });
      } else if (kind < 0.1) {
        const id = 1 + Math.floor(random() * 3);
        events.push({ name, cat: "c", ph: "b", id, pid: 1, tid: 1, ts }, { name, cat: "c", ph: "e", id, pid: 1, tid: 1, ts: ts + dur });
        slices.push({ name, track: `async ${id}`, ts, dur });
      } else {
        const tid = 1 + Math.floor(random() * 4);
        events.push({ name, ph: "X", pid: 1, tid, ts, dur });
        slices.push({ name, track: `thread ${tid}`, ts, dur });
      }
    }
    const result = await importToMemory(chromeTraceImporter, JSON.stringify(events), { chunkSize: 4096 });

    // The reference: per track, slices by start, the longer of two starting together first, then
    // file order; each is under the last slice still open at its start.
    const expected = new Map<string, { parent: string | null; depth: number }>();
    const tracks = new Map<string, Slice[]>();
    for (const slice of slices) tracks.set(slice.track, [...(tracks.get(slice.track) ?? []), slice]);
    for (const track of tracks.values()) {
      track.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
      const open: Slice[] = [];
      for (const slice of track) {
        while (open.length > 0 && open[open.length - 1].ts + open[open.length - 1].dur <= slice.ts) open.pop();
        expected.set(slice.name, { parent: open.length > 0 ? open[open.length - 1].name : null, depth: open.length });
        open.push(slice);
      }
    }
    const rows = result.tables.spans;
    const nameOf = new Map(rows.map((row) => [row.span_id, row.name]));
    expect(new Map(rows.map((row) => [row.name as string, { parent: row.parent_span_id === null ? null : (nameOf.get(row.parent_span_id) as string), depth: row.depth }]))).toEqual(expected);
    // Rows come in the file's order (start, then track), and span ids count up along it.
    expect(rows.map((row) => row.span_id)).toEqual(rows.map((_, k) => k));
    const fileOrder = [...rows].sort((a, b) => Number(a.start_ns) - Number(b.start_ns) || Number(a.track_id) - Number(b.track_id) || Number(a.span_id) - Number(b.span_id));
    expect(fileOrder).toEqual(rows);
  });

  it("imports a gzipped trace once the caller gunzips it with analysis/io/bytes", async () => {
    const gz = gzipSync(Buffer.from(JSON.stringify({ traceEvents: HAND_WRITTEN })));
    expect(isGzip(gz)).toBe(true);
    const compressed = sourceFromBytes(new Uint8Array(gz), "trace.json.gz", 100);
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink, 1024);
    await chromeTraceImporter.parse({ source: { fileName: "trace.json", chunks: () => gunzip(compressed.chunks(), 100) }, builder, limits: DEFAULT_IMPORT_LIMITS });
    await builder.finish();
    expect(bySpanId(sink.tables.spans).map((s) => s.name)).toEqual(EXPECTED_SPANS.map((s) => s.name));
  });

  it("imports a real trace written by node --trace-event-categories; slice counts match the raw file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-chrome-trace-"));
    const program = `
      const fs = require("fs");
      function work(n) { let x = 0; for (let i = 0; i < n; i++) x += i % 13; return x; }
      let pending = 20;
      for (let i = 0; i < 20; i++) setTimeout(() => fs.readFile(__filename ?? "/etc/hostname", () => { work(1e5); Promise.resolve(i).then(() => --pending); }), i);
    `;
    execFileSync(process.execPath, ["--trace-event-categories", "v8,node.async_hooks", "--trace-event-file-pattern", path.join(dir, "trace-${pid}.log"), "-e", program]);
    const file = readdirSync(dir).find((f) => f.startsWith("trace-")) as string;
    const bytes = readFileSync(path.join(dir, file));
    const raw = JSON.parse(bytes.toString("utf8")) as { traceEvents: { ph: string; s?: string }[] };
    const count = (...phases: string[]) => raw.traceEvents.filter((e) => phases.includes(e.ph)).length;
    expect(count("X") + count("b")).toBeGreaterThan(10);

    const head = bytes.subarray(0, 65536);
    expect(chromeTraceImporter.sniff(head, head.toString("utf8"), file)).toBeGreaterThan(0.9);
    const result = await importToMemory(chromeTraceImporter, bytes, { fileName: file, chunkSize: 4096 });
    const kindOf = new Map(result.tables.tracks.map((t) => [t.track_id, t.kind]));
    const onThreads = result.tables.spans.filter((s) => kindOf.get(s.track_id) === "thread").length;
    const onAsync = result.tables.spans.filter((s) => kindOf.get(s.track_id) === "async").length;
    expect(onThreads).toBe(count("X") + count("B") + raw.traceEvents.filter((e) => (e.ph === "i" || e.ph === "I") && (e.s ?? "t") === "t").length);
    expect(onAsync).toBe(count("b") + count("n"));
    // Node names its threads with M events; they reach the tracks.
    expect(result.tables.tracks.some((t) => typeof t.thread_name === "string")).toBe(true);
    expect(result.tables.spans.every((s) => (s.start_ns as number) >= 0)).toBe(true);
  });

  it("imports the CPU profiles Chrome 65 and 66 timelines keep in CpuProfile instant events, on their threads, and keeps no payload as a span", async () => {
    for (const [file, expectedSamples] of [
      ["Chrome/65/simple-timeline.json", 4081],
      ["Chrome/66/worker.json", 8239],
    ] as const) {
      const bytes = peerFixture(file);
      // The file's own account: per CpuProfile event, its samples' root-first paths ("(root)" left out).
      type Node = { id: number; callFrame: { functionName: string }; children?: number[] };
      type Event = { name: string; ph: string; pid: number; tid: number; args: { data: { cpuProfile: { nodes: Node[]; samples: number[] } } } };
      const events = (JSON.parse(new TextDecoder().decode(bytes)) as Event[]).filter((e) => e.name === "CpuProfile");
      const expected = new Map<string, number>();
      for (const event of events) {
        const { nodes, samples } = event.args.data.cpuProfile;
        const byId = new Map(nodes.map((n) => [n.id, n]));
        const parent = new Map<number, number>();
        for (const n of nodes) for (const child of n.children ?? []) parent.set(child, n.id);
        const pathOf = (id: number): string[] => {
          const names: string[] = [];
          for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) names.unshift(byId.get(at)!.callFrame.functionName || "(anonymous)");
          return names[0] === "(root)" && names.length > 1 ? names.slice(1) : names;
        };
        for (const id of samples) {
          const key = `${event.pid}/${event.tid} ${pathOf(id).join(";")}`;
          expected.set(key, (expected.get(key) ?? 0) + 1);
        }
      }
      expect([...expected.values()].reduce((a, b) => a + b, 0), file).toBe(expectedSamples);

      const result = await importToMemory(chromeTraceImporter, bytes, { fileName: file });
      const threadOf = new Map(result.tables.tracks.map((t) => [t.track_id, `${t.process_id}/${t.thread_id}`]));
      const got = new Map<string, number>();
      for (const r of sampleRows(result).filter((r) => r.metric === "samples")) {
        const key = `${threadOf.get(r.track)} ${r.stack}`;
        got.set(key, (got.get(key) ?? 0) + r.value);
      }
      expect(got, file).toEqual(expected);
      expect(sampleRows(result).filter((r) => r.metric === "wall_ns")).toHaveLength(expectedSamples);
      // The payload was read, not kept: no CpuProfile span, no args cut to their bound.
      expect(result.tables.spans.some((s) => s.name === "CpuProfile"), file).toBe(false);
      expect(result.summary.limitations.map((l) => l.code), file).not.toContain("FIELD_TRUNCATED");
    }
  });

  it("gives a trace of slices only a flame graph of its spans: self = duration - children, per track", async () => {
    // Thread 1: A [0, 100) holds B [10, 40) and C [50, 70); B holds D [20, 30). Thread 2: A again
    // [0, 10), its own track. An instant and an empty X add nothing.
    const trace = [
      { name: "A", ph: "B", pid: 1, tid: 1, ts: 0 },
      { name: "B", ph: "X", pid: 1, tid: 1, ts: 10, dur: 30 },
      { name: "D", ph: "X", pid: 1, tid: 1, ts: 20, dur: 10 },
      { name: "C", ph: "B", pid: 1, tid: 1, ts: 50 },
      { name: "C", ph: "E", pid: 1, tid: 1, ts: 70 },
      { name: "A", ph: "E", pid: 1, tid: 1, ts: 100 },
      { name: "A", ph: "X", pid: 1, tid: 2, ts: 0, dur: 10 },
      { name: "mark", ph: "i", s: "t", pid: 1, tid: 1, ts: 25 },
      { name: "empty", ph: "X", pid: 1, tid: 1, ts: 60, dur: 0 },
    ];
    const result = await importToMemory(chromeTraceImporter, JSON.stringify(trace));
    const threadOf = new Map(result.tables.tracks.map((t) => [t.track_id, t.thread_id]));
    const rows = sampleRows(result).map((r) => [threadOf.get(r.track), r.stack, r.metric, r.value, r.time]);
    expect(rows.sort()).toEqual(
      [
        ["1", "A", "wall_ns", 50_000, null],
        ["1", "A;B", "wall_ns", 20_000, null],
        ["1", "A;B;D", "wall_ns", 10_000, null],
        ["1", "A;C", "wall_ns", 20_000, null],
        ["2", "A", "wall_ns", 10_000, null],
      ].sort(),
    );
    // A frame's total is the time its spans cover, once under recursion: A = 100 + 10 µs.
    const frameName = new Map(result.tables.frames.map((f) => [f.frame_id, f.name]));
    const totals = Object.fromEntries(result.tables.frame_totals.map((t) => [frameName.get(t.frame_id), [t.self, t.total]]));
    expect(totals).toEqual({ A: [60_000, 110_000], B: [20_000, 30_000], D: [10_000, 10_000], C: [20_000, 20_000] });
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["SAMPLES_FROM_SPANS"]);
    expect(result.summary.metadata.wall_ns_source).toMatch(/^spans/);
  });

  it("reads X events with only tdur, string timestamps and E events named otherwise than their B, each with a limitation where it guessed", async () => {
    const trace = [
      { name: "Outer", ph: "B", pid: 1, tid: 1, ts: "1000" },
      { name: "Inner", ph: "B", pid: 1, tid: 1, ts: "1010.5" },
      // Ends Inner, the innermost open B, though it names Outer (as Chrome's trace viewer reads it).
      { name: "Outer", ph: "E", pid: 1, tid: 1, ts: "1020.5" },
      { ph: "E", pid: 1, tid: 1, ts: 1040 },
      { name: "ThreadTimed", ph: "X", pid: 1, tid: 2, ts: 1000, tdur: 7, tts: 5 },
      { name: "Bad", ph: "X", pid: 1, tid: 2, ts: "soon", dur: 1 },
    ];
    for (const scan of [true, false]) {
      // The same events written by JSON.stringify are read from their bytes; spaced out, they are not.
      const text = scan ? JSON.stringify(trace) : JSON.stringify(trace, null, 2);
      const result = await importToMemory(chromeTraceImporter, text);
      expect(spans(result).map((s) => [s.name, s.start_ns, s.dur_ns, s.depth])).toEqual([
        ["Outer", 0, 40_000, 0],
        ["ThreadTimed", 0, 7_000, 0],
        ["Inner", 10_500, 10_000, 1],
      ]);
      expect(result.summary.limitations.map((l) => l.code).sort()).toEqual(["DURATION_FROM_TDUR", "MISMATCHED_END", "MISSING_TIMESTAMP", "SAMPLES_FROM_SPANS"]);
    }
  });

  it("rejects a truncated, a corrupted and an empty file with EvidenceParseError and an offset", async () => {
    const text = JSON.stringify({ traceEvents: HAND_WRITTEN });
    const cut = text.indexOf('"Inner"') + 3;
    expect((await parseError(text.slice(0, cut))).at.offset).toBe(cut);
    // An unterminated array is accepted only between events, not inside one.
    const arrayText = JSON.stringify(HAND_WRITTEN);
    expect((await parseError(arrayText.slice(0, 200))).at.offset).toBe(200);
    const corrupted = text.replace('"ts":1010', '"ts";1010');
    expect((await parseError(corrupted)).at.offset).toBe(text.indexOf('"ts":1010') + 4);
    expect((await parseError("")).at.offset).toBe(0);
    expect((await parseError('{"metadata":{}}')).at.offset).toBe(0);
    expect((await parseError("42")).at.offset).toBe(0);
  });

  it("sniffs both forms and declines other JSON profiles", () => {
    const sniff = (text: string, name: string | null = null) => chromeTraceImporter.sniff(new TextEncoder().encode(text), text, name);
    expect(sniff('{"traceEvents":[{"ph":"X"')).toBeGreaterThan(0.9);
    expect(sniff('[{"name":"a","ph":"X","ts":1,"pid":1}', "x.json")).toBeGreaterThan(0.8);
    expect(sniff('{"nodes":[{"id":1,"callFrame":{}}]}')).toBe(0);
    expect(sniff('{"$schema":"https://www.speedscope.app/file-format-schema.json"}')).toBe(0);
    expect(sniff("\u0000\u0001garbage")).toBe(0);
  });
});

describe("sortNearlySorted", () => {
  it.each([
    ["in order", (i: number) => i],
    ["nearly in order", (i: number) => i + ((i * 7919) % 5)],
    ["shuffled", (i: number) => (i * 7919) % 1000],
    ["reversed", (i: number) => -i],
  ])("sorts %s input as a general sort does", (_label, key) => {
    const keys = Array.from({ length: 1000 }, (_, i) => key(i));
    const compare = (a: number, b: number) => keys[a] - keys[b] || a - b;
    const order = Int32Array.from(keys.keys());
    sortNearlySorted(order, compare);
    expect([...order]).toEqual([...keys.keys()].sort(compare));
  });
});

describe("FileOrder", () => {
  it.each([
    ["one track", 1],
    ["a few tracks", 5],
    ["many tracks, some with one slice", 700],
  ])("merges the tracks' runs by start as placed, then track, then run position (%s)", (_label, tracks) => {
    const n = 2_000;
    // Starts in microseconds with fractions, so that some round to the same nanosecond.
    const track = Int32Array.from({ length: n }, (_, i) => (i * 7919) % tracks);
    const start = Float64Array.from({ length: n }, (_, i) => 1000.5 + ((i * 104729) % 400) * 0.0004);
    const origin = 1000;
    const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => track[a] - track[b] || start[a] - start[b] || a - b);
    const position = new Int32Array(n);
    order.forEach((index, p) => (position[index] = p));
    const ns = (index: number) => Math.round((start[index] - origin) * 1000);
    const expected = [...order].sort((a, b) => ns(a) - ns(b) || track[a] - track[b] || position[a] - position[b]);
    const merge = new FileOrder(order, track, start, origin);
    const merged: number[] = [];
    for (let index = merge.next(); index >= 0; index = merge.next()) merged.push(index);
    expect(merged).toEqual(expected);
  });
});
