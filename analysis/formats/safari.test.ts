// Real input: a timeline recording exported by Safari 13.1's Web Inspector (test/fixtures/peer).
// Safari is not available here, so the other recordings are written from the shape that export
// has (version 1: recording.records, markers, sampleStackTraces, sampleDurations) and, for the
// per-target layout of newer exports, from its description (recording.samples[].stackTraces/durations).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows, totalsByStack } from "../../test/helpers/evidence-rows";
import { UnsupportedVersionError } from "./errors";
import { importToMemory } from "./run";
import { safariTimelineImporter } from "./safari";

const FIXTURE = path.resolve(import.meta.dirname, "../../test/fixtures/peer/Safari/13.1/simple.html-recording.json");

const js = (name: string, line: number, column: number, url = "https://shop.example/app.js") => ({ sourceID: "12", name, line, column, url, expressionLocation: { line: line + 1, column: 3 } });
const native = (name: string) => ({ sourceID: "-1", name, line: 0, column: 0, url: "" });
/** A script's top-level code, as JSC names it. */
const program = () => ({ sourceID: "12", name: "(program)", line: 1, column: 1, url: "https://shop.example/app.js", expressionLocation: { line: 90, column: 1 } });

/** A recording with several script records (one nested in another, one overlapping), layout, markers, CPU, memory and heap records. */
function recording(overrides: Record<string, unknown> = {}) {
  return {
    version: 1,
    recording: {
      displayName: "Timeline Recording 2",
      startTime: 10,
      endTime: 14,
      discontinuities: [],
      instrumentTypes: ["timeline-record-type-script", "timeline-record-type-layout", "timeline-record-type-cpu", "timeline-record-type-memory"],
      records: [
        { type: "timeline-record-type-script", eventType: "script-evaluated", startTime: 10.1, endTime: 10.5, details: "", extraDetails: null },
        { type: "timeline-record-type-script", eventType: "timer-fired", startTime: 11, endTime: 11.4, details: 7, extraDetails: null },
        { type: "timeline-record-type-script", eventType: "event-dispatched", startTime: 11.1, endTime: 11.2, details: "click", extraDetails: null },
        { type: "timeline-record-type-script", eventType: "animation-frame-fired", startTime: 11.3, endTime: 11.6, details: 3, extraDetails: null },
        { type: "timeline-record-type-layout", eventType: "layout", startTime: 11.15, endTime: 11.16, quad: [0, 0, 10, 0, 10, 10, 0, 10] },
        { type: "timeline-record-type-layout", eventType: "invalidate-styles", startTime: 11.17, endTime: 11.17 },
        { type: "timeline-record-type-cpu", timestamp: 11.5, usage: 42.5, threads: [{ name: "Main Thread", usage: 40, type: "main" }, { name: "WebKit: Image Decoder", usage: 2.5, type: "webkit" }] },
        { type: "timeline-record-type-memory", timestamp: 11.5, categories: [{ type: "javascript", size: 4_000_000 }, { type: "images", size: 1_000_000 }] },
        { type: "timeline-record-type-heap-allocations", timestamp: 11.8, snapshot: { title: "x" } },
        { type: "a-type-from-the-future", timestamp: 11.9 },
      ],
      markers: [{ time: 10.2, type: "dom-content-event" }, { time: 10.9, type: "load-event" }],
      memoryPressureEvents: [],
      sampleStackTraces: [
        { timestamp: 10.2, stackFrames: [js("render", 40, 5), js("", 2, 1), program()] },
        { timestamp: 10.21, stackFrames: [native("forEach"), js("render", 40, 5), js("", 2, 1), program()] },
        { timestamp: 11.12, stackFrames: [js("onClick", 80, 9), program()] },
        { timestamp: 11.3, stackFrames: [] },
      ],
      sampleDurations: [0.002, 0.001, 0.0015, 0.001],
      ...overrides,
    },
    overview: { secondsPerPixel: 0.01, scrollStartTime: 9, selectionStartTime: 10, selectionDuration: 4 },
  };
}

const expectParseError = (input: string) => parseErrorOf(safariTimelineImporter, input);

describe("safari timeline importer", () => {
  it("reads Safari 13.1's recording: sampled stacks with their durations, and its timeline records", async () => {
    const text = readFileSync(FIXTURE, "utf8");
    const result = await importToMemory(safariTimelineImporter, text, { chunkSize: 1000 });
    // An independent reader: the file's own samples, leaf frame first, and their durations.
    const file = JSON.parse(text).recording;
    const expected: Record<string, number> = {};
    file.sampleStackTraces.forEach((trace: { stackFrames: { name: string }[] }, k: number) => {
      const leaf = trace.stackFrames[0].name || "(anonymous function)";
      expected[leaf] = (expected[leaf] ?? 0) + file.sampleDurations[k] * 1e9;
    });
    const ours: Record<string, number> = {};
    for (const row of sampleRows(result).filter((r) => r.metric === "wall_ns")) {
      const leaf = row.stack.split(";").pop()!;
      ours[leaf] = (ours[leaf] ?? 0) + row.value;
    }
    expect(Object.keys(ours).sort()).toEqual(Object.keys(expected).sort());
    for (const name of Object.keys(expected)) expect(ours[name]).toBeCloseTo(expected[name], -1);
    expect(result.tables.metrics.find((m) => m.name === "samples")!.total).toBe(file.sampleStackTraces.length);
    const kinds = (type: string) => file.records.filter((r: { type: string }) => r.type === type).length;
    const spansOn = (trackName: string) => result.tables.spans.filter((s) => s.track_id === result.tables.tracks.find((t) => t.thread_name === trackName)!.track_id).length;
    expect(spansOn("JavaScript & Events")).toBe(kinds("timeline-record-type-script"));
    expect(spansOn("Layout & Rendering")).toBe(kinds("timeline-record-type-layout"));
    expect(spansOn("Rendering Frames")).toBe(kinds("timeline-record-type-rendering-frame"));
    expect(spansOn("Markers")).toBe(file.markers.length);
    const cpuRecords = file.records.filter((r: { type: string }) => r.type === "timeline-record-type-cpu");
    expect(result.tables.measurements.filter((m) => m.name === "cpu_usage").length).toBe(cpuRecords.reduce((n: number, r: { threads: unknown[] }) => n + 1 + r.threads.length, 0));
    const gamma = result.tables.frames.find((f) => f.name === "gamma")!;
    expect([gamma.file, gamma.line, gamma.col, gamma.kind]).toEqual(["file:///speedscope/sample/programs/javascript/simple.js", 20, 15, "js"]);
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
      ["SAFARI_NETWORK_RECORDS_SKIPPED", kinds("timeline-record-type-network")],
      ["SAFARI_EXPRESSION_POSITIONS", result.tables.frames.length],
    ]);
    expect(result.summary.metadata.recording_name).toBe("Grabación de Control temporal 1");
  });

  it("nests script records as Web Inspector draws them, and places samples, markers and CPU on the recording's clock", async () => {
    const result = await importToMemory(safariTimelineImporter, JSON.stringify(recording()), { chunkSize: 29 });
    const tracks = new Map(result.tables.tracks.map((t) => [t.track_id, t.thread_name]));
    const spans = result.tables.spans.map((s) => ({ track: tracks.get(s.track_id), id: s.span_id, parent: s.parent_span_id, name: s.name, start: s.start_ns, dur: s.dur_ns, depth: s.depth }));
    const script = spans.filter((s) => s.track === "JavaScript & Events");
    const id = (name: string) => script.find((s) => s.name === name)!.id;
    // timer-fired (1.0–1.4 s) holds event-dispatched (1.1–1.2 s); animation-frame-fired (1.3–1.6 s)
    // overlaps it without lying inside it, so it is drawn beside it.
    expect(script.map(({ name, parent, start, dur, depth }) => ({ name, parent, start, dur, depth }))).toEqual([
      { name: "script-evaluated", parent: null, start: 100_000_000, dur: 400_000_000, depth: 0 },
      { name: "timer-fired", parent: null, start: 1_000_000_000, dur: 400_000_000, depth: 0 },
      { name: "event-dispatched", parent: id("timer-fired"), start: 1_100_000_000, dur: 100_000_000, depth: 1 },
      { name: "animation-frame-fired", parent: null, start: 1_300_000_000, dur: 300_000_000, depth: 0 },
    ]);
    expect(JSON.parse(result.tables.spans.find((s) => s.name === "event-dispatched")!.args as string)).toEqual({ details: "click" });
    expect(spans.filter((s) => s.track === "Layout & Rendering").map((s) => [s.name, s.depth, s.dur])).toEqual([
      ["layout", 0, 10_000_000],
      ["invalidate-styles", 0, 0],
    ]);
    expect(spans.filter((s) => s.track === "Markers").map((s) => [s.name, s.start, s.dur])).toEqual([
      ["dom-content-event", 200_000_000, 0],
      ["load-event", 900_000_000, 0],
    ]);
    expect(totalsByStack(result).wall_ns).toEqual({
      "(program);(anonymous function);render": 2_000_000,
      "(program);(anonymous function);render;forEach": 1_000_000,
      "(program);onClick": 1_500_000,
    });
    expect(sampleRows(result).filter((r) => r.metric === "samples").map((r) => r.time)).toEqual([200_000_000, 210_000_000, 1_120_000_000]);
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.file, f.line, f.col, f.kind]]));
    expect(frames).toEqual({
      "(program)": ["https://shop.example/app.js", 1, 1, "js"],
      "(anonymous function)": ["https://shop.example/app.js", 2, 1, "js"],
      render: ["https://shop.example/app.js", 40, 5, "js"],
      forEach: [null, null, null, "native"],
      onClick: ["https://shop.example/app.js", 80, 9, "js"],
    });
    expect(result.tables.measurements.map((m) => [m.name, m.value, JSON.parse(m.dimensions as string)])).toEqual([
      ["cpu_usage", 42.5, { time_ns: 1_500_000_000 }],
      ["cpu_usage", 40, { time_ns: 1_500_000_000, thread: "Main Thread" }],
      ["cpu_usage", 2.5, { time_ns: 1_500_000_000, thread: "WebKit: Image Decoder" }],
      ["memory_bytes", 4_000_000, { time_ns: 1_500_000_000, category: "javascript" }],
      ["memory_bytes", 1_000_000, { time_ns: 1_500_000_000, category: "images" }],
    ]);
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([
      ["SAFARI_OVERLAPPING_RECORDS", 1],
      ["SAFARI_HEAP_RECORDS_SKIPPED", 1],
      ["SAFARI_OTHER_RECORDS_SKIPPED", 1],
      ["SAFARI_EMPTY_STACKS", 1],
      ["SAFARI_EXPRESSION_POSITIONS", 4],
    ]);
  });

  it("reads samples kept per target (the page and a worker) as a track each", async () => {
    const { sampleStackTraces, sampleDurations, ...rest } = recording().recording;
    const perTarget = {
      version: 1,
      recording: {
        ...rest,
        samples: [
          { displayName: "Page", stackTraces: sampleStackTraces.slice(0, 2), durations: sampleDurations.slice(0, 2) },
          { displayName: "worker.js", stackTraces: [{ timestamp: 12, stackFrames: [js("crunch", 5, 2, "https://shop.example/worker.js")] }], durations: [0.004] },
        ],
      },
    };
    const result = await importToMemory(safariTimelineImporter, JSON.stringify(perTarget));
    const tracks = new Map(result.tables.tracks.map((t) => [t.track_id, t.thread_name]));
    const byTrack: Record<string, number> = {};
    for (const row of sampleRows(result).filter((r) => r.metric === "wall_ns")) byTrack[tracks.get(row.track) as string] = (byTrack[tracks.get(row.track) as string] ?? 0) + row.value;
    expect(byTrack).toEqual({ Page: 3_000_000, "worker.js": 4_000_000 });
  });

  it("refuses recordings of another version, or with none", async () => {
    for (const version of [2, undefined]) {
      const error = await expectParseError(JSON.stringify({ ...recording(), version }));
      expect(error).toBeInstanceOf(UnsupportedVersionError);
      expect((error as UnsupportedVersionError).supported).toBe("1");
    }
  });

  it.each([
    ["truncated", JSON.stringify(recording()).slice(0, 300), /truncated/],
    ["a recording that is not an object", '{"version":1,"recording":[1]}', /recording is not an object/],
    ["a record without a type", JSON.stringify(recording({ records: [{ startTime: 1 }] })), /record is not an object with a type/],
    ["a script record without a start", JSON.stringify(recording({ records: [{ type: "timeline-record-type-script", eventType: "x" }] })), /no startTime/],
    ["a malformed stack trace", JSON.stringify(recording({ sampleStackTraces: [{ timestamp: 1, stackFrames: 3 }] })), /not \{timestamp, stackFrames\}/],
    ["a frame that is not an object", JSON.stringify(recording({ sampleStackTraces: [{ timestamp: 1, stackFrames: ["gamma"] }], sampleDurations: [0.001] })), /stack frame is not an object/],
    ["a negative duration", JSON.stringify(recording({ sampleDurations: [0.001, -1, 0, 0] })), /not a non-negative number/],
    ["fewer durations than stacks", JSON.stringify(recording({ sampleDurations: [0.001] })), /4 sample stack traces and 1 durations/],
    ["a marker without a time", JSON.stringify(recording({ markers: [{ type: "load-event" }] })), /marker is not/],
    ["no start time", JSON.stringify(recording({ startTime: undefined })), /no startTime/],
    ["nothing to import", JSON.stringify(recording({ records: [], markers: [], sampleStackTraces: [], sampleDurations: [] })), /no samples and no timeline records/],
  ])("refuses %s with a typed error saying where", async (_name, input, reason) => {
    const error = await expectParseError(input);
    expect(error.reason).toMatch(reason);
    expect(error.message).not.toContain("onClick");
  });

  it("sniffs Web Inspector recordings and declines other JSON", () => {
    const sniff = (text: string) => safariTimelineImporter.sniff(new TextEncoder().encode(text), text, null);
    expect(sniff(readFileSync(FIXTURE, "utf8").slice(0, 65536))).toBeGreaterThanOrEqual(0.9);
    expect(sniff(JSON.stringify(recording()))).toBeGreaterThanOrEqual(0.9);
    expect(sniff('{"traceEvents":[{"ph":"X","name":"recording","ts":1}]}')).toBe(0);
    expect(sniff('{"recording":{"name":"x"}}')).toBe(0);
    expect(sniff('{"meta":{"version":27,"interval":1,"startTime":0,"processType":0},"threads":[]}')).toBe(0);
  });
});
