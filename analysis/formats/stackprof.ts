/**
 * Ruby stackprof results, as `stackprof --json` (or `JSON.generate(StackProf.run(...))`) writes
 * them, or as StackProf.run(out: …) dumps them with Marshal (the .dump files): `frames` by address (name, file, first line, self and total samples), and with `raw: true`
 * the stacks themselves: `raw` is [stack length, frame addresses root first…, times seen in a
 * row]…, with one `raw_timestamp_deltas` entry (µs since the previous sample) and, in newer
 * versions, one `raw_sample_timestamps` entry (µs, monotonic) per sample. Every sample becomes a
 * `samples` row on one track (stackprof samples whichever Ruby thread runs), and by mode:
 * `wall` → `wall_ns` from its delta (the wall time it closes, as stackprof's own reports use it);
 * `cpu` → `cpu_ns` of one interval (a SIGPROF sample stands for `interval` µs of CPU);
 * `object` → `alloc_count` of one interval (every interval-th allocation is sampled). GC samples
 * are the frames stackprof writes for them ((garbage collection), (marking), (sweeping)). A file
 * without `raw` keeps only per-frame counts: each frame's self samples are imported on a stack of
 * that frame alone, and a limitation says callers are unknown. Versions 1.x are read. A Marshal
 * dump is read whole (at most MAX_JSON_DOCUMENT_BYTES), JSON as it streams.
 * Format description: github.com/tmm1/stackprof ext/stackprof/stackprof.c (stackprof_results).
 */
import { NumberColumn, type EvidenceBuilder } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { concatBytes } from "../io/bytes";
import { readBounded } from "../io/json-documents";
import { parseJsonStream, type JsonPath, type JsonValue } from "../io/json-stream";
import { MarshalReader, RubyHash, RubySymbol, rubyToJson } from "../io/ruby-marshal";
import { EvidenceParseError, UnsupportedVersionError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "stackprof";
const MODES = ["wall", "cpu", "object", "custom"] as const;
type Mode = (typeof MODES)[number];
const GC_FRAMES = new Set(["(garbage collection)", "(marking)", "(sweeping)"]);
const CHECKPOINT_EVERY = 16_384;

interface StackprofFrame {
  name: string | null;
  file: string | null;
  line: number | null;
  /** Self samples, as stackprof counted them. */
  samples: number;
  id: number;
}

/** What stackprof results hold, however they were read (JSON here, Marshal in stackprof-marshal.ts). */
export class StackprofReader {
  readonly header: Record<string, JsonValue> = {};
  readonly frames = new Map<number, StackprofFrame>();
  private framesDone = false;
  private framesStarted = false;
  /** raw, while the frames are not all known yet: stored and walked at the end. */
  private readonly pendingRaw = new NumberColumn();
  private pendingRawOffset = 0;
  /** Per raw entry: its builder stack and how many samples in a row it stands for. */
  readonly entryStacks = new NumberColumn();
  readonly entryCounts = new NumberColumn();
  readonly deltas = new NumberColumn();
  readonly timestamps = new NumberColumn();
  private sawRaw = false;
  // The walk through raw: the stack being read, how many frames it still needs.
  private rawState: "length" | "frames" | "count" = "length";
  private rawNeeded = 0;
  private rawStack: number | null = null;
  private rawDepth = 0;
  private truncated = 0;
  /** Per frame id, the number of the raw stack it was last seen on (outermost = not yet on this one). */
  private onPath = new Int32Array(1024);
  private pathNumber = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  /** A top-level scalar or small value (version, mode, interval, metadata, counts). */
  headerValue(key: string, value: JsonValue): void {
    this.endFrames();
    this.header[key] = value;
  }

  /** A frame's fields, by its address. */
  frame(address: number, fields: Record<string, JsonValue>, offset: number): void {
    this.framesStarted = true;
    const name = typeof fields.name === "string" ? fields.name : null;
    const file = typeof fields.file === "string" && fields.file !== "" ? fields.file : null;
    const line = typeof fields.line === "number" && Number.isInteger(fields.line) && fields.line > 0 ? fields.line : null;
    const samples = fields.samples;
    if (samples !== undefined && (typeof samples !== "number" || !Number.isInteger(samples) || samples < 0)) {
      throw new EvidenceParseError(FORMAT, "a frame's samples is not a count", { offset });
    }
    this.frames.set(address, { name, file, line, samples: typeof samples === "number" ? samples : 0, id: -1 });
  }

  /** The frames are complete (the next top-level key began). */
  endFrames(): void {
    if (this.framesStarted && !this.framesDone) this.framesDone = true;
  }

  /** The results have `raw` (it may be empty). */
  rawPresent(): void {
    this.sawRaw = true;
  }

  /** One number of `raw`. */
  raw(value: JsonValue, offset: number): void {
    this.sawRaw = true;
    if (typeof value !== "number") throw new EvidenceParseError(FORMAT, "raw holds a value that is not a number", { offset });
    if (!this.framesDone) {
      if (this.pendingRaw.length === 0) this.pendingRawOffset = offset;
      this.pendingRaw.push(value);
      return;
    }
    this.rawStep(value, offset);
  }

  sampleTimestamp(value: JsonValue, offset: number): void {
    if (typeof value !== "number" || !Number.isFinite(value)) throw new EvidenceParseError(FORMAT, "raw_sample_timestamps holds a value that is not a number", { offset });
    this.timestamps.push(value);
  }

  timestampDelta(value: JsonValue, offset: number): void {
    if (typeof value !== "number" || !Number.isFinite(value)) throw new EvidenceParseError(FORMAT, "raw_timestamp_deltas holds a value that is not a number", { offset });
    this.deltas.push(value);
  }

  private rawStep(value: number, offset: number): void {
    if (this.rawState === "length") {
      if (!Number.isInteger(value) || value < 0) throw new EvidenceParseError(FORMAT, "a raw stack's length is not a count", { offset });
      this.rawNeeded = value;
      this.rawStack = null;
      this.rawDepth = 0;
      this.pathNumber++;
      this.rawState = value === 0 ? "count" : "frames";
      return;
    }
    if (this.rawState === "frames") {
      const frame = this.frames.get(value);
      if (!frame) throw new EvidenceParseError(FORMAT, "a raw stack names a frame that is not in frames", { offset });
      if (this.rawDepth < this.maxDepth) {
        if (frame.id < 0) frame.id = this.builder.frame(describeFrame(frame));
        if (frame.id >= this.onPath.length) {
          const grown = new Int32Array(Math.max(frame.id + 1, this.onPath.length * 2));
          grown.set(this.onPath);
          this.onPath = grown;
        }
        // The walk is of whole stacks, root first: it can tell the builder which nodes' frames are outermost.
        const outermost = this.onPath[frame.id] !== this.pathNumber;
        this.onPath[frame.id] = this.pathNumber;
        this.rawStack = this.builder.stack(this.rawStack, frame.id, outermost);
        this.rawDepth++;
      } else {
        this.truncated++;
      }
      if (--this.rawNeeded === 0) this.rawState = "count";
      return;
    }
    if (!Number.isInteger(value) || value < 1) throw new EvidenceParseError(FORMAT, "a raw stack's count is not a positive whole number", { offset });
    if (this.rawStack === null) throw new EvidenceParseError(FORMAT, "a raw stack has no frames", { offset });
    this.entryStacks.push(this.rawStack);
    this.entryCounts.push(value);
    this.rawState = "length";
  }

  /** Writes the samples once everything is read. */
  async finish(end: number): Promise<void> {
    const { builder } = this;
    this.framesDone = true;
    if (this.pendingRaw.length > 0) {
      for (let i = 0; i < this.pendingRaw.length; i++) this.rawStep(this.pendingRaw.get(i), this.pendingRawOffset);
    }
    if (this.rawState !== "length") throw new EvidenceParseError(FORMAT, "raw ends inside a stack", { offset: end });
    if (this.truncated > 0) builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${this.maxDepth} frames; their leaf-most frames were dropped.`, this.truncated);
    const mode = this.checkHeader();
    const intervalUs = typeof this.header.interval === "number" && this.header.interval > 0 ? this.header.interval : null;
    const track = builder.track({ kind: "thread", threadName: "Ruby" });
    const samplesMetric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
    const modeMetric =
      mode === "wall" ? builder.metric({ name: "wall_ns", unit: "ns", kind: "temporal" }) : mode === "cpu" && intervalUs ? builder.metric({ name: "cpu_ns", unit: "ns", kind: "sampled" }) : mode === "object" && intervalUs ? builder.metric({ name: "alloc_count", unit: "count", kind: "sampled" }) : -1;
    if ((mode === "cpu" || mode === "object") && !intervalUs) builder.limit("STACKPROF_NO_INTERVAL", `The ${mode} profile has no interval, so what each sample stands for is unknown; only sample counts were imported.`);
    const metadata = builder.metadata;
    metadata.stackprof_mode = mode;
    if (intervalUs) metadata.stackprof_interval = `${intervalUs} ${mode === "object" ? "allocations" : "µs"}`;
    for (const key of ["version", "samples", "gc_samples", "missed_samples"]) if (typeof this.header[key] === "number") metadata[`stackprof_${key}`] = String(this.header[key]);
    const extra = this.header.metadata;
    if (typeof extra === "object" && extra !== null && !Array.isArray(extra)) {
      for (const [key, value] of Object.entries(extra).slice(0, 32)) if (typeof value === "string" || typeof value === "number") metadata[`stackprof_metadata_${builder.bound(key, "other")}`] = builder.bound(String(value), "other");
    }

    if (!this.sawRaw) {
      await this.writeAggregate(mode, intervalUs, track, samplesMetric, modeMetric);
      return;
    }
    let total = 0;
    for (let e = 0; e < this.entryCounts.length; e++) total += this.entryCounts.get(e);
    if (total === 0) throw new EvidenceParseError(FORMAT, "the profile has no samples (raw is empty)", { offset: end });
    const deltas = this.deltas.length === total ? this.deltas : null;
    if (!deltas) builder.limit("STACKPROF_NO_DELTAS", this.deltas.length === 0 ? "The profile has no raw_timestamp_deltas: samples have no times and wall samples weigh one interval." : "raw_timestamp_deltas does not have one entry per sample: samples have no times and wall samples weigh one interval.");
    const stamps = deltas && this.timestamps.length === total ? this.timestamps : null;
    // Times count from the start of profiling: the first sample's time less its delta.
    const originUs = stamps && deltas ? stamps.get(0) - deltas.get(0) : 0;
    if (stamps) metadata.time_origin_us = String(originUs);
    if (mode === "wall") metadata.wall_ns_weighting = deltas ? "raw_timestamp_deltas: each sample weighs the wall time since the one before" : "one interval per sample (no deltas)";
    let sample = 0;
    let clockUs = 0;
    let negative = 0;
    for (let e = 0; e < this.entryCounts.length; e++) {
      const stack = this.entryStacks.get(e);
      const count = this.entryCounts.get(e);
      for (let c = 0; c < count; c++, sample++) {
        let delta = deltas ? deltas.get(sample) : intervalUs ?? 0;
        if (delta < 0) {
          negative++;
          delta = 0;
        }
        clockUs += delta;
        const timeNs = deltas ? ((stamps ? stamps.get(sample) - originUs : clockUs) * 1000) : null;
        builder.sample(stack, track, timeNs, samplesMetric, 1);
        if (mode === "wall") builder.sample(stack, track, timeNs, modeMetric, delta * 1000);
        else if (modeMetric >= 0) builder.sample(stack, track, timeNs, modeMetric, mode === "cpu" ? intervalUs! * 1000 : intervalUs!);
        if (sample % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
      }
    }
    if (negative > 0) builder.limit("STACKPROF_NEGATIVE_DELTAS", "Some raw_timestamp_deltas were negative; those samples weigh 0 wall time.", negative);
    if (mode === "wall" && !deltas && !intervalUs) builder.limit("STACKPROF_NO_INTERVAL", "The wall profile has neither deltas nor an interval; its samples weigh 0 wall time.");
  }

  private checkHeader(): Mode {
    const version = this.header.version;
    if (version !== undefined) {
      if (typeof version !== "number") throw new UnsupportedVersionError(FORMAT, "none", "1.x", "version is not a number", { offset: 0 });
      if (Math.floor(version) !== 1) throw new UnsupportedVersionError(FORMAT, String(version), "1.x", `stackprof results version ${version} is not one this importer knows`, { offset: 0 });
    }
    const mode = this.header.mode;
    if (typeof mode !== "string" || !(MODES as readonly string[]).includes(mode)) throw new EvidenceParseError(FORMAT, "mode is missing or none of wall, cpu, object and custom", { offset: 0 });
    return mode as Mode;
  }

  private async writeAggregate(mode: Mode, intervalUs: number | null, track: number, samplesMetric: number, modeMetric: number): Promise<void> {
    const { builder } = this;
    let total = 0;
    for (const frame of this.frames.values()) {
      if (frame.samples <= 0) continue;
      if (frame.id < 0) frame.id = builder.frame(describeFrame(frame));
      const stack = builder.stack(null, frame.id, true);
      builder.sample(stack, track, null, samplesMetric, frame.samples);
      if (modeMetric >= 0 && intervalUs) builder.sample(stack, track, null, modeMetric, frame.samples * (mode === "object" ? intervalUs : intervalUs * 1000));
      total += frame.samples;
    }
    if (total === 0) throw new EvidenceParseError(FORMAT, "the profile has no samples (no raw stacks, and no frame has self samples)", { offset: 0 });
    builder.limit("STACKPROF_NO_RAW", "The profile was recorded without raw: true, so it has no stacks: each frame's self samples were imported on a stack of that frame alone, and callers are unknown.");
    if (mode === "wall" && intervalUs) builder.metadata.wall_ns_weighting = "one interval per sample (no raw stacks or deltas)";
    await builder.checkpoint();
  }
}

function describeFrame(frame: StackprofFrame): { name: string; file: string | null; line: number | null; kind: FrameKind } {
  const name = frame.name ?? "(unknown)";
  return { name, file: frame.file, line: frame.line, kind: GC_FRAMES.has(name) ? "gc" : "other" };
}

const HEADER_KEYS = new Set(["version", "mode", "interval", "samples", "gc_samples", "missed_samples", "metadata"]);
const FRAME_FIELDS = new Set(["name", "file", "line", "samples"]);

function frameAddress(key: string | number, offset: number): number {
  const address = typeof key === "number" ? key : /^[0-9]{1,16}$/.test(key) ? Number(key) : NaN;
  if (!Number.isSafeInteger(address)) throw new EvidenceParseError(FORMAT, "a frame's key is not an address", { offset });
  return address;
}

/** The input's chunks again, the first one (already read) included. */
async function* replay(first: Uint8Array, rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** Marshal dumps start with their version (4.8); no JSON starts with byte 4. */
const isMarshal = (head: Uint8Array) => head.length >= 1 && head[0] === 4;

async function parseStackprof(ctx: ImportContext): Promise<void> {
  const chunks = ctx.source.chunks()[Symbol.asyncIterator]();
  const first = await chunks.next();
  if (first.done) throw new EvidenceParseError(FORMAT, "the input is empty", { offset: 0 });
  // A chunk may be overwritten once the next is asked for: the first is kept as a copy.
  const head = first.value.slice();
  if (isMarshal(head)) await parseStackprofMarshal(ctx, concatBytes([head, await readBounded(replayRest(chunks))]));
  else await parseStackprofJson(ctx, replay(head, chunks));
}

async function* replayRest(rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** A Marshal dump: the results Hash read key by key, its frames and raw arrays element by element. */
async function parseStackprofMarshal({ builder, limits }: ImportContext, bytes: Uint8Array): Promise<void> {
  const reader = new StackprofReader(builder, limits.maxDepth);
  const marshal = new MarshalReader(bytes, FORMAT, limits.maxDepth);
  marshal.header();
  if (marshal.peek() !== 0x7b) throw new EvidenceParseError(FORMAT, "the dump is not a Hash of stackprof results", { offset: marshal.offset });
  const keys = marshal.hashLength();
  let sawFrames = false;
  for (let k = 0; k < keys; k++) {
    const keyAt = marshal.offset;
    const key = marshal.value();
    const name = key instanceof RubySymbol ? key.name : typeof key === "string" ? key : null;
    if (name === null) throw new EvidenceParseError(FORMAT, "a key of the results is not a symbol", { offset: keyAt });
    if (name === "frames") {
      sawFrames = true;
      const frames = marshal.hashLength();
      for (let f = 0; f < frames; f++) {
        const at = marshal.offset;
        const address = marshal.value();
        if (typeof address !== "number" || !Number.isSafeInteger(address)) throw new EvidenceParseError(FORMAT, "a frame's key is not an address", { offset: at });
        const fields = marshal.value();
        if (!(fields instanceof RubyHash)) throw new EvidenceParseError(FORMAT, "a frame is not a Hash", { offset: at });
        const json: Record<string, JsonValue> = {};
        for (const field of FRAME_FIELDS) {
          const value = fields.get(field);
          if (value !== undefined) json[field] = rubyToJson(value);
        }
        reader.frame(address, json, at);
      }
      reader.endFrames();
    } else if (name === "raw" || name === "raw_timestamp_deltas" || name === "raw_sample_timestamps") {
      if (marshal.peek() === 0x30) {
        marshal.value();
        continue;
      }
      const count = marshal.arrayLength();
      if (name === "raw") reader.rawPresent();
      for (let i = 0; i < count; i++) {
        const at = marshal.offset;
        const value = marshal.value();
        if (name === "raw") reader.raw(value as JsonValue, at);
        else if (name === "raw_timestamp_deltas") reader.timestampDelta(value as JsonValue, at);
        else reader.sampleTimestamp(value as JsonValue, at);
        if (i % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
      }
    } else {
      reader.headerValue(name, rubyToJson(marshal.value()));
    }
  }
  if (marshal.offset !== bytes.length) throw new EvidenceParseError(FORMAT, "the dump goes on after the results", { offset: marshal.offset });
  if (!sawFrames || reader.frames.size === 0) throw new EvidenceParseError(FORMAT, "the dump has no frames (not stackprof results?)", { offset: 0 });
  builder.metadata.stackprof_encoding = "Marshal";
  await reader.finish(bytes.length);
}

async function parseStackprofJson({ builder, limits }: ImportContext, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const reader = new StackprofReader(builder, limits.maxDepth);
  let sawObject = false;
  let end = 0;
  const frameFields = new Map<number, Record<string, JsonValue>>();
  let currentFrame: { address: number; offset: number } | null = null;
  const closeFrame = () => {
    if (!currentFrame) return;
    reader.frame(currentFrame.address, frameFields.get(currentFrame.address) ?? {}, currentFrame.offset);
    frameFields.delete(currentFrame.address);
    currentFrame = null;
  };
  const select = (path: JsonPath): "stream" | "materialize" | "skip" => {
    if (path.length === 0) return "stream";
    const top = path[0];
    if (typeof top !== "string") return "skip";
    sawObject = true;
    if (path.length === 1) {
      closeFrame();
      if (top !== "frames") reader.endFrames();
      if (top === "raw") reader.rawPresent();
      if (top === "frames" || top === "raw" || top === "raw_timestamp_deltas" || top === "raw_sample_timestamps") return "stream";
      return HEADER_KEYS.has(top) ? "materialize" : "skip";
    }
    if (top === "frames") {
      if (path.length === 2) {
        closeFrame();
        return "stream";
      }
      return path.length === 3 && FRAME_FIELDS.has(path[2] as string) ? "materialize" : "skip";
    }
    return path.length === 2 ? "materialize" : "skip";
  };
  const onValue = (path: JsonPath, value: JsonValue, offset: number): void => {
    end = offset;
    if (path.length === 0) throw new EvidenceParseError(FORMAT, "the top-level value is not an object", { offset });
    const top = path[0] as string;
    if (path.length === 1) {
      if (top === "frames" || top === "raw" || top === "raw_timestamp_deltas" || top === "raw_sample_timestamps") {
        if (value !== null) throw new EvidenceParseError(FORMAT, `${top} is not ${top === "frames" ? "an object" : "an array"}`, { offset });
        return;
      }
      reader.headerValue(top, value);
      return;
    }
    if (top === "frames") {
      if (path.length === 2) throw new EvidenceParseError(FORMAT, "a frame is not an object", { offset });
      const address = frameAddress(path[1], offset);
      if (!currentFrame || currentFrame.address !== address) {
        closeFrame();
        currentFrame = { address, offset };
      }
      let fields = frameFields.get(address);
      if (!fields) frameFields.set(address, (fields = {}));
      fields[path[2] as string] = value;
    } else if (top === "raw") reader.raw(value, offset);
    else if (top === "raw_timestamp_deltas") reader.timestampDelta(value, offset);
    else if (top === "raw_sample_timestamps") reader.sampleTimestamp(value, offset);
  };
  await parseJsonStream(chunks, { format: FORMAT, maxDepth: limits.maxDepth, select, onValue }, () => builder.checkpoint());
  closeFrame();
  if (!sawObject) throw new EvidenceParseError(FORMAT, "the input is not stackprof results (no top-level object)", { offset: 0 });
  if (reader.frames.size === 0) throw new EvidenceParseError(FORMAT, "the input has no frames object (not stackprof results?)", { offset: 0 });
  await reader.finish(end);
}

export const stackprofImporter: FormatImporter = {
  id: "stackprof",
  title: "Ruby stackprof results (JSON or Marshal dump)",
  extensions: ["json", "stackprof.json", "dump"],
  version: "1",

  sniff(head, headText) {
    // A Marshal dump of a Hash whose first key is the symbol :version (stackprof_results' order).
    if (isMarshal(head)) return head[1] === 8 && head[2] === 0x7b && new TextDecoder("latin1").decode(head.subarray(0, 64)).includes("version") ? 0.95 : 0;
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{")) return 0;
    const mode = /"mode"\s*:\s*"(wall|cpu|object|custom)"/.test(text);
    const counts = ["gc_samples", "missed_samples", "raw_timestamp_deltas"].some((k) => text.includes(`"${k}"`));
    const frames = /"frames"\s*:\s*\{\s*"\d+"\s*:\s*\{/.test(text);
    if (mode && (counts || frames)) return 0.95;
    return frames && /"total_samples"\s*:/.test(text) ? 0.6 : 0;
  },

  parse: parseStackprof,
};
