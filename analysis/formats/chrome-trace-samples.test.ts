// Hermes / React Native traces: top-level `samples` + `stackFrames` beside `traceEvents`. The real
// files are speedscope's (test/fixtures/peer/trace-event); expected numbers are read from them here
// with JSON.parse and the Trace Event Format's description, not from the importer.
import { describe, expect, it } from "vitest";
import { peerFixture, sampleRows } from "../../test/helpers/evidence-rows";
import { chromeTraceImporter } from "./chrome-trace";
import { numberValue } from "./chrome-trace-samples";
import { EvidenceParseError } from "./errors";
import { detectFormat } from "./index";
import { importToMemory } from "./run";

interface HermesFile {
  traceEvents: { name: string; ph: string; pid: number; tid: string; ts: string; args: { name?: string } }[];
  samples: { pid: number; tid: string; ts: string; weight: string; sf: number }[];
  stackFrames: Record<string, { name: string; category: string; parent?: number }>;
}

/** What the file says, read independently: per sample its thread, µs time, weight and root-first frame names. */
function readHermes(bytes: Uint8Array) {
  const file = JSON.parse(new TextDecoder().decode(bytes)) as HermesFile;
  // Hermes writes a function's location into its name: `fn(url:line:col)`.
  const plainName = (name: string) => name.replace(/\(.+:\d+:\d+\)$/, "");
  const pathOf = (id: number): string[] => {
    const frame = file.stackFrames[String(id)];
    return [...(frame.parent === undefined ? [] : pathOf(frame.parent)), plainName(frame.name)];
  };
  const samples = file.samples.map((s) => ({ tid: s.tid, ts: Number(s.ts), weight: Number(s.weight), stack: pathOf(s.sf).join(";") }));
  const threadNames = new Map(file.traceEvents.filter((e) => e.name === "thread_name").map((e) => [e.tid, e.args.name]));
  return { file, samples, threadNames };
}

/** The importer's documented wall_ns: the gap to the thread's next sample; a thread's last sample its mean gap. */
function expectedWallByStack(samples: { tid: string; ts: number; stack: string }[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of new Set(samples.map((s) => s.tid))) {
    const own = samples.filter((s) => s.tid === tid).sort((a, b) => a.ts - b.ts);
    const mean = own.length > 1 ? (own[own.length - 1].ts - own[0].ts) / (own.length - 1) : 0;
    own.forEach((s, k) => {
      const gap = k + 1 < own.length ? own[k + 1].ts - s.ts : mean;
      const key = `${tid} ${s.stack}`;
      out.set(key, (out.get(key) ?? 0) + Math.round(gap * 1000));
    });
  }
  return out;
}

async function importHermes(relativePath: string) {
  const bytes = peerFixture(relativePath);
  const result = await importToMemory(chromeTraceImporter, bytes, { chunkSize: 256 });
  const threadOfTrack = new Map(result.tables.tracks.map((t) => [t.track_id, t]));
  const rows = sampleRows(result).map((r) => ({ ...r, tid: String(threadOfTrack.get(r.track)!.thread_id) }));
  return { bytes, result, rows, read: readHermes(bytes) };
}

describe("chrome-trace importer: Hermes samples and stackFrames", () => {
  it("is chosen for a Hermes file by sniffing", () => {
    const bytes = peerFixture("trace-event/simple-with-samples.json");
    expect(detectFormat(bytes, new TextDecoder().decode(bytes), "simple-with-samples.json")?.id).toBe("chrome-trace");
  });

  it("imports every sample of a one-thread Hermes trace, on its stack of stackFrames, weighted as the file says", async () => {
    const { result, rows, read } = await importHermes("trace-event/simple-with-samples.json");
    expect(read.samples).toHaveLength(7);
    // One `samples` and one `wall_ns` row per sample of the file, on the thread it names.
    const counted = rows.filter((r) => r.metric === "samples");
    expect(counted).toHaveLength(read.samples.length);
    const expectedCounts = new Map<string, number>();
    for (const s of read.samples) expectedCounts.set(`${s.tid} ${s.stack}`, (expectedCounts.get(`${s.tid} ${s.stack}`) ?? 0) + s.weight);
    const counts = new Map<string, number>();
    for (const r of counted) counts.set(`${r.tid} ${r.stack}`, (counts.get(`${r.tid} ${r.stack}`) ?? 0) + r.value);
    expect(counts).toEqual(expectedCounts);
    const walls = new Map<string, number>();
    for (const r of rows.filter((r) => r.metric === "wall_ns")) walls.set(`${r.tid} ${r.stack}`, (walls.get(`${r.tid} ${r.stack}`) ?? 0) + r.value);
    expect(walls).toEqual(expectedWallByStack(read.samples));
    // Times count from the trace's first timestamp (its metadata events carry none), in ns.
    const first = Math.min(...read.samples.map((s) => s.ts));
    expect(counted.map((r) => r.time)).toEqual([...read.samples].sort((a, b) => a.ts - b.ts).map((s) => (s.ts - first) * 1000));
    // The location Hermes writes into a name becomes the frame's file, line and column.
    const function1 = result.tables.frames.find((f) => f.name === "function1")!;
    expect(function1).toMatchObject({ file: expect.stringMatching(/^http:\/\/localhost:8081\/index\.bundle\?/), line: 1, col: 1, kind: "js" });
    expect(result.tables.frames.find((f) => f.name === "[GC Young Gen]")).toMatchObject({ kind: "gc" });
    // The thread keeps the name its M event gives it.
    expect(result.tables.tracks).toEqual([expect.objectContaining({ process_id: "7512", process_name: "hermes", thread_id: "7695", thread_name: "mqt_js" })]);
    expect(result.summary.limitations).toEqual([]);
  });

  it("imports a multi-thread Hermes trace per thread, with its X events of string timestamps", async () => {
    const { result, rows, read } = await importHermes("trace-event/multi-thread-with-samples.json");
    const perThread = (list: { tid: string }[]) => Object.fromEntries([...new Set(list.map((s) => s.tid))].map((tid) => [tid, list.filter((s) => s.tid === tid).length]));
    expect(perThread(rows.filter((r) => r.metric === "samples"))).toEqual(perThread(read.samples));
    expect(perThread(read.samples)).toEqual({ "1": 3, "2": 5 });
    const walls = new Map<string, number>();
    for (const r of rows.filter((r) => r.metric === "wall_ns")) walls.set(`${r.tid} ${r.stack}`, (walls.get(`${r.tid} ${r.stack}`) ?? 0) + r.value);
    expect(walls).toEqual(expectedWallByStack(read.samples));
    // Its two X events write ts as strings; both are kept, at the trace's first time.
    expect(result.tables.spans.map((s) => [s.name, s.start_ns, s.dur_ns])).toEqual([
      ["mqt_js", 0, 0],
      ["mqt_js", 0, 0],
    ]);
    expect(result.tables.tracks.find((t) => t.thread_id === "1")).toMatchObject({ thread_name: "mqt_js", process_name: "hermes" });
    expect(result.summary.limitations).toEqual([]);
  });

  it("drops samples on unknown stack frames with a limitation, and refuses stackFrames whose parents loop", async () => {
    const trace = {
      traceEvents: [{ name: "thread_name", ph: "M", pid: 1, tid: 2, args: { name: "js" } }],
      stackFrames: { a: { name: "main", category: "JavaScript" }, b: { name: "work", category: "JavaScript", parent: "a" } },
      samples: [
        { tid: 2, ts: 10, sf: "b" },
        { tid: 2, ts: 20, sf: "zzz" },
        { tid: 2, ts: 40, sf: "a", weight: 3 },
      ],
    };
    const result = await importToMemory(chromeTraceImporter, JSON.stringify(trace));
    expect(sampleRows(result).filter((r) => r.metric === "samples").map((r) => [r.stack, r.value, r.time])).toEqual([
      ["main;work", 1, 0],
      ["main", 3, 30_000],
    ]);
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["UNKNOWN_STACK_FRAME"]);

    const looped = { traceEvents: [], stackFrames: { a: { name: "x", parent: "b" }, b: { name: "y", parent: "a" } }, samples: [{ tid: 1, ts: 1, sf: "a" }] };
    await expect(importToMemory(chromeTraceImporter, JSON.stringify(looped))).rejects.toThrow(EvidenceParseError);
  });

  it("reads numbers written as strings in JSON's notation, and nothing else", () => {
    expect(["11552125241", "1.5", "-2", "1e3", " 7 "].map(numberValue)).toEqual([11552125241, 1.5, -2, 1000, 7]);
    expect(["", "0x10", "1,5", "Infinity", "NaN", "12abc", null, true].map((v) => numberValue(v as never))).toEqual(Array(8).fill(undefined));
  });
});
