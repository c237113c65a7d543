/**
 * Safari / Web Inspector timeline recordings (the JSON the Timelines tab exports, version 1):
 * `recording.sampleStackTraces` (the JavaScript sampling profiler's stacks, leaf first, each at
 * a timestamp in seconds) with `recording.sampleDurations` (seconds each sample stands for), the
 * timeline `records` and `markers`. Samples become `samples` and `wall_ns` (their duration) on the
 * page's main thread track. Newer exports keep the samples per target (the page and each worker)
 * as `recording.samples: [{stackTraces, durations}]`: read the same way, a track per target (this
 * layout is read from a third-party converter's description, not from WebKit's own source, so each
 * entry is checked strictly). Script, layout and rendering-frame records become spans, nested on a
 * track per timeline as Web Inspector draws them; markers become instants; CPU records become
 * `cpu_usage` measurements (whole page and per thread) and memory records `memory_bytes`. Network,
 * heap, media and screenshot records are not imported, and a limitation counts them.
 */
import { NumberColumn, type EvidenceBuilder } from "../evidence/builder";
import { parseJsonStream, type JsonPath, type JsonValue } from "../io/json-stream";
import { EvidenceParseError, UnsupportedVersionError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "safari-timeline";
const CHECKPOINT_EVERY = 16_384;

type JsonObject = { [key: string]: JsonValue };
const isObject = (value: JsonValue | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);
const isNumber = (value: JsonValue | undefined): value is number => typeof value === "number" && Number.isFinite(value);

/** The timelines whose records become spans: record type → the track's name and the spans' category. */
const SPAN_TIMELINES: Record<string, { track: string; category: string }> = {
  "timeline-record-type-script": { track: "JavaScript & Events", category: "script" },
  "timeline-record-type-layout": { track: "Layout & Rendering", category: "layout" },
  "timeline-record-type-rendering-frame": { track: "Rendering Frames", category: "rendering-frame" },
};

/** Timelines whose records are not imported, by record type (without `timeline-record-type-`): their limitation. */
const SKIPPED_TIMELINES: Record<string, { code: string; what: string }> = {
  network: { code: "SAFARI_NETWORK_RECORDS_SKIPPED", what: "network" },
  "heap-allocations": { code: "SAFARI_HEAP_RECORDS_SKIPPED", what: "heap snapshot" },
  media: { code: "SAFARI_MEDIA_RECORDS_SKIPPED", what: "media" },
  screenshots: { code: "SAFARI_SCREENSHOT_RECORDS_SKIPPED", what: "screenshot" },
  memory: { code: "SAFARI_MEMORY_RECORDS_SKIPPED", what: "memory (without categories)" },
  cpu: { code: "SAFARI_CPU_RECORDS_SKIPPED", what: "CPU (without usage)" },
};

interface TimelineSpan {
  name: string;
  start: number;
  end: number;
  args: JsonObject | null;
}

/** One target's samples: stacks and times as they come, durations as they come (either may come first). */
class TargetSamples {
  readonly stacks = new NumberColumn();
  readonly times = new NumberColumn();
  readonly durations = new NumberColumn();
  constructor(public name: string | null) {}
}

class RecordingImport {
  version: JsonValue | undefined = undefined;
  versionOffset = 0;
  sawObject = false;
  startTime: number | null = null;
  displayName: string | null = null;
  readonly legacy = new TargetSamples(null);
  readonly targets: TargetSamples[] = [];
  private readonly spans = new Map<string, TimelineSpan[]>();
  private readonly markers: { name: string; time: number }[] = [];
  private readonly cpu: { time: number; usage: number; threads: { name: string; usage: number }[] }[] = [];
  private readonly memory: { time: number; category: string; size: number }[] = [];
  private readonly skipped = new Map<string, number>();
  private readonly frameIds = new Map<string, number>();
  private positions = 0;
  private emptyStacks = 0;
  private truncated = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  /** A stack trace `{timestamp, stackFrames: [leaf first…]}` of a target. */
  stackTrace(target: TargetSamples, value: JsonValue, offset: number): void {
    if (!isObject(value) || !isNumber(value.timestamp) || !Array.isArray(value.stackFrames)) {
      throw new EvidenceParseError(FORMAT, "a sample stack trace is not {timestamp, stackFrames}", { offset });
    }
    const frames = value.stackFrames;
    let stack: number | null = null;
    const kept = Math.min(frames.length, this.maxDepth);
    if (frames.length > kept) this.truncated++;
    for (let k = frames.length - 1; k >= frames.length - kept; k--) stack = this.builder.stack(stack, this.frameId(frames[k], offset));
    target.stacks.push(stack ?? -1);
    target.times.push(value.timestamp);
  }

  duration(target: TargetSamples, value: JsonValue, offset: number): void {
    if (!isNumber(value) || value < 0) throw new EvidenceParseError(FORMAT, "a sample duration is not a non-negative number of seconds", { offset });
    target.durations.push(value);
  }

  private frameId(frame: JsonValue, offset: number): number {
    if (!isObject(frame)) throw new EvidenceParseError(FORMAT, "a stack frame is not an object", { offset });
    const name = typeof frame.name === "string" && frame.name !== "" ? frame.name : "(anonymous function)";
    const url = typeof frame.url === "string" && frame.url !== "" ? frame.url : null;
    // Lines and columns count from 1; native functions have 0 for both.
    const line = isNumber(frame.line) && frame.line > 0 ? frame.line : null;
    const column = isNumber(frame.column) && frame.column > 0 ? frame.column : null;
    const key = `${name}\u0000${url ?? ""}\u0000${line ?? ""}\u0000${column ?? ""}`;
    let id = this.frameIds.get(key);
    if (id === undefined) {
      if (isObject(frame.expressionLocation)) this.positions++;
      id = this.builder.frame({ name, file: url, line, col: column, module: url, kind: url ? "js" : "native" });
      this.frameIds.set(key, id);
    }
    return id;
  }

  record(value: JsonValue, offset: number): void {
    if (!isObject(value) || typeof value.type !== "string") throw new EvidenceParseError(FORMAT, "a timeline record is not an object with a type", { offset });
    const type = value.type;
    const timeline = SPAN_TIMELINES[type];
    if (Object.hasOwn(SPAN_TIMELINES, type) && timeline) {
      if (!isNumber(value.startTime)) throw new EvidenceParseError(FORMAT, "a timeline record has no startTime", { offset });
      const end = isNumber(value.endTime) ? value.endTime : value.startTime;
      const name = typeof value.eventType === "string" ? value.eventType : type.replace("timeline-record-type-", "");
      const args: JsonObject = {};
      for (const key of ["details", "extraDetails", "quad"]) if (value[key] !== undefined && value[key] !== null && value[key] !== "") args[key] = value[key];
      let list = this.spans.get(type);
      if (!list) this.spans.set(type, (list = []));
      list.push({ name, start: value.startTime, end: Math.max(end, value.startTime), args: Object.keys(args).length > 0 ? args : null });
    } else if (type === "timeline-record-type-cpu" && isNumber(value.timestamp) && isNumber(value.usage)) {
      const threads = Array.isArray(value.threads) ? value.threads.filter(isObject).filter((t) => typeof t.name === "string" && isNumber(t.usage)).map((t) => ({ name: t.name as string, usage: t.usage as number })) : [];
      this.cpu.push({ time: value.timestamp, usage: value.usage, threads });
    } else if (type === "timeline-record-type-memory" && isNumber(value.timestamp) && Array.isArray(value.categories)) {
      for (const category of value.categories) {
        if (isObject(category) && typeof category.type === "string" && isNumber(category.size)) this.memory.push({ time: value.timestamp, category: category.type, size: category.size });
      }
    } else {
      const kind = type.startsWith("timeline-record-type-") ? type.slice("timeline-record-type-".length) : "";
      const key = Object.hasOwn(SKIPPED_TIMELINES, kind) ? kind : "";
      this.skipped.set(key, (this.skipped.get(key) ?? 0) + 1);
    }
  }

  marker(value: JsonValue, offset: number): void {
    if (!isObject(value) || !isNumber(value.time) || typeof value.type !== "string") throw new EvidenceParseError(FORMAT, "a marker is not {time, type}", { offset });
    this.markers.push({ name: value.type, time: value.time });
  }

  async finish(): Promise<void> {
    const { builder } = this;
    if (!this.sawObject) throw new EvidenceParseError(FORMAT, "the input is not a Web Inspector recording (no top-level object)", { offset: 0 });
    if (this.version !== 1) {
      const written = typeof this.version === "number" ? String(this.version) : "none";
      throw new UnsupportedVersionError(FORMAT, written, "1", this.version === undefined ? "the recording has no version" : `recording version ${written} is not one this importer knows`, { offset: this.versionOffset });
    }
    if (this.startTime === null) throw new EvidenceParseError(FORMAT, "the recording has no startTime", { offset: 0 });
    const originS = this.startTime;
    const ns = (seconds: number) => (seconds - originS) * 1e9;
    let samples = 0;
    const sampleSets = this.legacy.stacks.length > 0 || this.legacy.durations.length > 0 ? [this.legacy, ...this.targets] : this.targets;
    for (let t = 0; t < sampleSets.length; t++) {
      const target = sampleSets[t];
      const count = target.stacks.length;
      if (target.durations.length !== count) throw new EvidenceParseError(FORMAT, `a target has ${count} sample stack traces and ${target.durations.length} durations`, { offset: 0 });
      if (count === 0) continue;
      const trackId = builder.track({ threadId: target === this.legacy ? "main" : `target-${t}`, threadName: target.name ?? (target === this.legacy || t === 0 ? "Main Thread" : `Target ${t}`), kind: "thread" });
      const samplesMetric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
      const wallMetric = builder.metric({ name: "wall_ns", unit: "ns", kind: "temporal" });
      for (let k = 0; k < count; k++) {
        const stack = target.stacks.get(k);
        if (stack < 0) {
          this.emptyStacks++;
          continue;
        }
        const time = ns(target.times.get(k));
        builder.sample(stack, trackId, time, samplesMetric, 1);
        builder.sample(stack, trackId, time, wallMetric, target.durations.get(k) * 1e9);
        samples++;
        if (k % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
      }
    }
    let spans = 0;
    for (const [type, list] of this.spans) {
      const timeline = SPAN_TIMELINES[type];
      spans += this.writeSpans(builder.track({ threadId: timeline.category, threadName: timeline.track, kind: "timeline" }), timeline.category, list, ns);
      await builder.checkpoint();
    }
    if (this.markers.length > 0) {
      const track = builder.track({ threadId: "markers", threadName: "Markers", kind: "timeline" });
      for (const marker of this.markers) builder.span({ trackId: track, name: marker.name, category: "marker", startNs: ns(marker.time), durNs: 0, depth: 0 });
      spans += this.markers.length;
    }
    for (const record of this.cpu) {
      builder.measurement({ name: "cpu_usage", value: record.usage, unit: "percent", aggregation: "sample", dimensions: { time_ns: Math.round(ns(record.time)) } });
      for (const thread of record.threads) builder.measurement({ name: "cpu_usage", value: thread.usage, unit: "percent", aggregation: "sample", dimensions: { time_ns: Math.round(ns(record.time)), thread: builder.bound(thread.name, "other") } });
    }
    for (const record of this.memory) builder.measurement({ name: "memory_bytes", value: record.size, unit: "bytes", aggregation: "sample", dimensions: { time_ns: Math.round(ns(record.time)), category: builder.bound(record.category, "other") } });
    for (const [kind, count] of this.skipped) {
      const known = SKIPPED_TIMELINES[kind];
      if (known) builder.limit(known.code, `The recording's ${known.what} records were not imported.`, count);
      else builder.limit("SAFARI_OTHER_RECORDS_SKIPPED", "The recording's records of kinds this importer does not know were not imported.", count);
    }
    if (this.emptyStacks > 0) builder.limit("SAFARI_EMPTY_STACKS", "Some samples had no stack frames; they were left out.", this.emptyStacks);
    if (this.positions > 0) builder.limit("SAFARI_EXPRESSION_POSITIONS", "Frames carry their function's line and column; the expression each sample was executing (expressionLocation) was not kept.", this.positions);
    if (this.truncated > 0) builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${this.maxDepth} frames; their leaf-most frames were dropped.`, this.truncated);
    if (samples === 0 && spans === 0) throw new EvidenceParseError(FORMAT, "the recording has no samples and no timeline records", { offset: 0 });
    builder.metadata.time_origin_s = String(originS);
    if (this.displayName) builder.metadata.recording_name = builder.bound(this.displayName, "other");
    builder.metadata.wall_ns_weighting = "sampleDurations: the time each sample stands for";
  }

  /** Spans of one timeline, nested as intervals nest: a record inside an earlier one is its child. */
  private writeSpans(track: number, category: string, list: TimelineSpan[], ns: (s: number) => number): number {
    const { builder } = this;
    const order = list.map((_, i) => i).sort((a, b) => list[a].start - list[b].start || list[b].end - list[a].end || a - b);
    const open: { end: number; id: number }[] = [];
    let overlapping = 0;
    for (const index of order) {
      const span = list[index];
      // Sorted by start, the open spans all began first: one still open holds this one when it
      // ends no earlier; one that ended before this one began is done; any other overlaps it.
      while (open.length > 0 && open[open.length - 1].end < span.end) {
        if (open[open.length - 1].end > span.start) overlapping++;
        open.pop();
      }
      const parent = open.length > 0 ? open[open.length - 1].id : null;
      const id = builder.span({ trackId: track, parentSpanId: parent, name: span.name, category, startNs: ns(span.start), durNs: (span.end - span.start) * 1e9, depth: open.length, args: span.args });
      open.push({ end: span.end, id });
    }
    if (overlapping > 0) builder.limit("SAFARI_OVERLAPPING_RECORDS", "Some records overlapped an earlier one without lying inside it; they were drawn beside it rather than nested.", overlapping);
    return list.length;
  }
}

const RECORDING_VALUES = new Set(["startTime", "endTime", "displayName"]);

async function parseRecording({ source, builder, limits }: ImportContext): Promise<void> {
  const run = new RecordingImport(builder, limits.maxDepth);
  const targetOf = (index: number): TargetSamples => (run.targets[index] ??= new TargetSamples(null));
  const select = (path: JsonPath): "stream" | "materialize" | "skip" => {
    if (path.length === 0) return "stream";
    if (typeof path[0] !== "string") return "skip";
    run.sawObject = true;
    if (path[0] === "version") return path.length === 1 ? "materialize" : "skip";
    if (path[0] !== "recording") return "skip";
    if (path.length === 1) return "stream";
    const key = path[1];
    // An element of a recording that is an array: delivered, to be refused where it is.
    if (typeof key === "number") return path.length === 2 ? "materialize" : "skip";
    if (path.length === 2) {
      if (key === "records" || key === "markers" || key === "sampleStackTraces" || key === "sampleDurations" || key === "samples") return "stream";
      return typeof key === "string" && RECORDING_VALUES.has(key) ? "materialize" : "skip";
    }
    if (key === "records" || key === "markers" || key === "sampleStackTraces") return path.length === 3 ? "materialize" : "skip";
    if (key === "sampleDurations") return path.length === 3 ? "stream" : "skip";
    if (key === "samples") {
      if (path.length === 3) return "stream";
      const field = path[3];
      if (path.length === 4) return field === "stackTraces" || field === "durations" ? "stream" : field === "name" || field === "displayName" || field === "target" ? "materialize" : "skip";
      return path.length === 5 ? (field === "stackTraces" ? "materialize" : "stream") : "skip";
    }
    return "skip";
  };
  const onValue = (path: JsonPath, value: JsonValue, offset: number): void => {
    if (path.length === 0) throw new EvidenceParseError(FORMAT, "the top-level value is not an object", { offset });
    if (path[0] === "version") {
      run.version = value;
      run.versionOffset = offset;
      return;
    }
    const key = path[1];
    if (path.length === 1 || typeof key === "number") throw new EvidenceParseError(FORMAT, "recording is not an object", { offset });
    if (path.length === 2) {
      if (key === "startTime" && isNumber(value)) run.startTime = value;
      else if (key === "displayName" && typeof value === "string") run.displayName = value;
      else if (key === "records" || key === "markers" || key === "sampleStackTraces" || key === "sampleDurations" || key === "samples") throw new EvidenceParseError(FORMAT, `recording.${key} is not an array`, { offset });
      return;
    }
    if (key === "records") run.record(value, offset);
    else if (key === "markers") run.marker(value, offset);
    else if (key === "sampleStackTraces") run.stackTrace(run.legacy, value, offset);
    else if (key === "sampleDurations") run.duration(run.legacy, value, offset);
    else if (key === "samples") {
      if (path.length === 3) throw new EvidenceParseError(FORMAT, "a target's samples are not an object", { offset });
      const target = targetOf(path[2] as number);
      const field = path[3];
      if (path.length === 4) {
        if (field === "stackTraces" || field === "durations") throw new EvidenceParseError(FORMAT, `a target's ${field} is not an array`, { offset });
        if (typeof value === "string" && target.name === null) target.name = builder.bound(value, "other");
      } else if (field === "stackTraces") run.stackTrace(target, value, offset);
      else run.duration(target, value, offset);
    }
  };
  await parseJsonStream(source.chunks(), { format: FORMAT, maxDepth: limits.maxDepth, select, onValue }, () => builder.checkpoint());
  await run.finish();
}

export const safariTimelineImporter: FormatImporter = {
  id: "safari-timeline",
  title: "Safari Web Inspector timeline recording (JSON)",
  extensions: ["json"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{") || !/"recording"\s*:\s*\{/.test(text)) return 0;
    const inspector = /"timeline-record-type-[a-z-]+"/.test(text) || /"sampleStackTraces"\s*:/.test(text) || /"instrumentTypes"\s*:/.test(text);
    return inspector ? 0.95 : 0;
  },

  parse: parseRecording,
};
