/**
 * speedscope's own JSON format (https://www.speedscope.app/file-format-schema.json): shared frames
 * and profiles, each "sampled" (root-first stacks of frame indices with weights) or "evented"
 * (open/close frame events). Each profile is its own track (kind `profile`, thread id = its index, thread name = its name). Sampled
 * profiles → aggregate samples; evented profiles → spans (depth = open-stack depth) plus samples of
 * the open stack weighted by the time until the next event, so flame graphs work for both.
 * Units: time → wall_ns (converted to ns), bytes → alloc_bytes, none → samples (weights as values).
 * The file is streamed (analysis/io/json-stream), never held: see SpeedscopeReader.
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { int64 } from "../evidence/int64";
import { NumberColumn } from "../evidence/builder";
import { JsonStreamParser, type JsonPath, type JsonSelection, type JsonValue } from "../io/json-stream";
import { concatBytes } from "../io/bytes";
import { detectEncoding } from "../io/text";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "speedscope";
const SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json";

const CHECKPOINT_EVERY = 16_384;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;

interface UnitMapping {
  metric: { name: string; unit: string; kind: "sampled" | "temporal" };
  /** Multiplier to the metric's unit; time units become nanoseconds. */
  factor: number;
  isTime: boolean;
}

const UNITS: Record<string, UnitMapping> = {
  nanoseconds: { metric: { name: "wall_ns", unit: "ns", kind: "temporal" }, factor: 1, isTime: true },
  microseconds: { metric: { name: "wall_ns", unit: "ns", kind: "temporal" }, factor: 1e3, isTime: true },
  milliseconds: { metric: { name: "wall_ns", unit: "ns", kind: "temporal" }, factor: 1e6, isTime: true },
  seconds: { metric: { name: "wall_ns", unit: "ns", kind: "temporal" }, factor: 1e9, isTime: true },
  bytes: { metric: { name: "alloc_bytes", unit: "bytes", kind: "sampled" }, factor: 1, isTime: false },
  none: { metric: { name: "samples", unit: "count", kind: "sampled" }, factor: 1, isTime: false },
};

const PSEUDO_FRAMES: Record<string, FrameKind> = {
  "(garbage collector)": "gc",
  "(idle)": "idle",
  "(program)": "program",
  "(root)": "program",
};

/** speedscope frames carry no kind; pseudo-frames and the file's extension say what they can. */
function describeFrame(frame: Record<string, unknown>): FrameInput {
  const name = typeof frame.name === "string" ? frame.name : String(frame.name ?? "(anonymous)");
  const file = typeof frame.file === "string" && frame.file !== "" ? frame.file : null;
  const line = isIndex(frame.line) ? frame.line : null;
  const col = isIndex(frame.col) ? frame.col : null;
  let kind: FrameKind = PSEUDO_FRAMES[name] ?? "other";
  if (kind === "other" && file) {
    if (/\.(m?js|cjs|jsx|tsx?|mts|cts)$|^(https?|file|node):/.test(file)) kind = "js";
    else if (/\.py$/.test(file)) kind = "python";
  }
  return { name, file, line, col, kind };
}

/** Shared frames by index, made into builder frames on first use. */
class SharedFrames {
  private readonly ids: number[] = [];
  private readonly inputs: FrameInput[] = [];
  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly frames: unknown[],
  ) {}
  get count(): number {
    return this.frames.length;
  }
  describe(index: number): FrameInput {
    let input = this.inputs[index];
    if (input === undefined) {
      const frame = this.frames[index];
      input = describeFrame(isRecord(frame) ? frame : { name: String(frame) });
      this.inputs[index] = input;
    }
    return input;
  }
  id(index: number): number {
    let id = this.ids[index];
    if (id === undefined) {
      id = this.builder.frame(this.describe(index));
      this.ids[index] = id;
    }
    return id;
  }
}

interface ProfileContext {
  builder: EvidenceBuilder;
  frames: SharedFrames;
  trackId: number;
  metricId: number;
  unit: UnitMapping;
  maxDepth: number;
  /** Added to (value − startValue) × factor to place a profile's times on the file's common origin. */
  originShiftNs: number;
}

/** What a sample's stack became as it streamed by (otherwise its leaf stack node, ≥ 0). */
const EMPTY_STACK = -1;
const BAD_FRAME = -2;
const NOT_A_LIST = -3;

const EVENT_BAD = 0;
const EVENT_OPEN = 1;
const EVENT_CLOSE = 2;

/**
 * A profile's values as they stream by, kept compactly until the profile (and, for an evented one,
 * the file) has ended: a sampled profile's stacks become the builder's stack nodes at once when
 * shared.frames and its type came first (as speedscope writes them), else their frame indices are
 * kept; weights and events are columns of numbers.
 */
class ProfileBuffer {
  isRecord = true;
  complete = false;
  /** Its scalar fields (type, name, unit, startValue, endValue). */
  readonly fields: Record<string, JsonValue> = {};
  /** Per sample: its leaf stack node, or EMPTY_STACK / BAD_FRAME / NOT_A_LIST. */
  readonly leaves = new NumberColumn();
  /** Per sample: 1 when it was deeper than the depth bound. */
  readonly truncated = new NumberColumn();
  /** Samples kept as frame indices (-1: not an index), rawFrames[rawStarts[i], rawEnds[i]); rawStarts[i] -1: not a list. */
  readonly rawFrames = new NumberColumn();
  readonly rawStarts = new NumberColumn();
  readonly rawEnds = new NumberColumn();
  /** Per weight: the number, or NaN when it is not one. */
  readonly weights = new NumberColumn();
  /** Per event: its EVENT_* kind, frame index (-1: not an index) and time. */
  readonly eventKinds = new NumberColumn();
  readonly eventFrames = new NumberColumn();
  readonly eventTimes = new NumberColumn();
}

/** The leaf stack node of a stack's first `depth` frame indices (EMPTY_STACK, or BAD_FRAME at the first bad index). */
function leafOf(stack: ArrayLike<unknown>, depth: number, frames: SharedFrames, builder: EvidenceBuilder): number {
  let node: number | null = null;
  for (let d = 0; d < depth; d++) {
    const index = stack[d];
    if (!isIndex(index) || index >= frames.count) return BAD_FRAME;
    node = builder.stack(node, frames.id(index));
  }
  return node === null ? EMPTY_STACK : node;
}

/** Stacks kept as frame indices (shared.frames or the type came after them) made into stack nodes, in sample order. */
function resolveRawStacks(buffer: ProfileBuffer, frames: SharedFrames, builder: EvidenceBuilder): void {
  const stack: number[] = [];
  for (let i = 0; i < buffer.rawStarts.length; i++) {
    const start = buffer.rawStarts.get(i);
    if (start < 0) {
      buffer.leaves.push(NOT_A_LIST);
      continue;
    }
    stack.length = 0;
    for (let k = start; k < buffer.rawEnds.get(i); k++) stack.push(buffer.rawFrames.get(k));
    buffer.leaves.push(leafOf(stack, stack.length, frames, builder));
  }
}

async function importSampled(buffer: ProfileBuffer, ctx: ProfileContext): Promise<void> {
  const { builder } = ctx;
  const samples = buffer.leaves.length;
  const weights = buffer.weights.length;
  if (samples !== weights) {
    builder.limit("SPEEDSCOPE_WEIGHTS_MISMATCH", "A sampled profile has a different number of samples and weights; only the pairs present were read.");
  }
  const count = Math.min(samples, weights);
  for (let i = 0; i < count; i++) {
    const leaf = buffer.leaves.get(i);
    const weight = buffer.weights.get(i);
    if (leaf === NOT_A_LIST || !Number.isFinite(weight) || weight < 0) {
      builder.limit("SPEEDSCOPE_BAD_SAMPLE", "Some samples were not a list of frame indices with a non-negative weight and were skipped.");
      continue;
    }
    if (buffer.truncated.get(i) === 1) builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${ctx.maxDepth} frames; their leaf-most frames were dropped.`);
    if (leaf === BAD_FRAME) {
      builder.limit("SPEEDSCOPE_BAD_FRAME_INDEX", "Some samples or events named a frame index outside shared.frames and were skipped.");
      continue;
    }
    if (leaf === EMPTY_STACK) continue;
    builder.sample(leaf, ctx.trackId, null, ctx.metricId, int64(weight * ctx.unit.factor, FORMAT, "weights"));
    if (i % CHECKPOINT_EVERY === 0) await builder.checkpoint();
  }
}

interface OpenFrame {
  frame: number;
  stack: number;
  /** -1 when the frame is beyond the depth bound and gets no span. */
  spanId: number;
  at: number;
}

async function importEvented(buffer: ProfileBuffer, ctx: ProfileContext): Promise<void> {
  const { builder, frames, unit } = ctx;
  const profile = buffer.fields;
  const startValue = typeof profile.startValue === "number" ? profile.startValue : 0;
  const endValue = typeof profile.endValue === "number" ? profile.endValue : startValue;
  // Spans need times; an evented profile in bytes or counts still yields its weighted samples.
  const withSpans = unit.isTime;
  if (!withSpans) builder.limit("SPEEDSCOPE_EVENTED_NOT_TIME", "An evented profile is not measured in time; it was read as weighted samples only, without spans.");
  const timeNs = (value: number) => int64((value - startValue) * unit.factor + ctx.originShiftNs, FORMAT, "events[].at");
  const open: OpenFrame[] = [];
  let last = startValue;

  const close = (until: number) => {
    const top = open.pop()!;
    if (top.spanId < 0 || !withSpans) return;
    const frame = frames.describe(top.frame);
    builder.span({
      spanId: top.spanId,
      trackId: ctx.trackId,
      parentSpanId: open.length > 0 && open[open.length - 1].spanId >= 0 ? open[open.length - 1].spanId : null,
      name: frame.name,
      category: null,
      startNs: timeNs(top.at),
      durNs: int64((until - top.at) * unit.factor, FORMAT, "events[].at"),
      depth: open.length,
      args: frame.file ? { file: frame.file, line: frame.line, col: frame.col } : null,
    });
  };
  const advance = (to: number) => {
    if (to > last && open.length > 0) builder.sample(open[open.length - 1].stack, ctx.trackId, unit.isTime ? timeNs(last) : null, ctx.metricId, int64((to - last) * unit.factor, FORMAT, "events[].at"));
    if (to > last) last = to;
  };

  const events = buffer.eventKinds.length;
  for (let i = 0; i < events; i++) {
    const kind = buffer.eventKinds.get(i);
    const frame = buffer.eventFrames.get(i);
    const at = buffer.eventTimes.get(i);
    if (kind === EVENT_BAD) {
      builder.limit("SPEEDSCOPE_BAD_EVENT", "Some events were not {type: O|C, frame, at} and were skipped.");
      continue;
    }
    if (frame < 0 || frame >= frames.count) {
      builder.limit("SPEEDSCOPE_BAD_FRAME_INDEX", "Some samples or events named a frame index outside shared.frames and were skipped.");
      continue;
    }
    if (at < last) builder.limit("SPEEDSCOPE_EVENTS_OUT_OF_ORDER", "Some events went back in time; they were placed at the previous event's time.");
    advance(at);
    if (kind === EVENT_OPEN) {
      const parent = open.length > 0 ? open[open.length - 1] : null;
      if (open.length >= ctx.maxDepth) {
        builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${ctx.maxDepth} frames; their leaf-most frames were dropped.`);
        open.push({ frame, stack: parent!.stack, spanId: -1, at: last });
      } else {
        open.push({ frame, stack: builder.stack(parent ? parent.stack : null, frames.id(frame)), spanId: builder.allocateSpanId(), at: last });
      }
    } else {
      let match = open.length - 1;
      while (match >= 0 && open[match].frame !== frame) match--;
      if (match < 0) {
        builder.limit("SPEEDSCOPE_UNMATCHED_EVENTS", "Some close events did not match an open frame (or frames were closed out of order); they were repaired by closing the frames above or ignoring the close.");
        continue;
      }
      if (match !== open.length - 1) {
        builder.limit("SPEEDSCOPE_UNMATCHED_EVENTS", "Some close events did not match an open frame (or frames were closed out of order); they were repaired by closing the frames above or ignoring the close.");
      }
      while (open.length > match) close(last);
    }
    if (i % CHECKPOINT_EVERY === 0) await builder.checkpoint();
  }
  if (open.length > 0) {
    builder.limit("SPEEDSCOPE_UNCLOSED_FRAMES", "Some frames were still open at the end of an evented profile; they were closed at its endValue.");
    advance(Math.max(endValue, last));
    while (open.length > 0) close(last);
  }
}

/** Which values of a speedscope file are kept, streamed or skipped, by their path. */
function selectSpeedscope(path: JsonPath): JsonSelection {
  const top = path[0];
  switch (path.length) {
    case 0:
      return "stream";
    case 1:
      if (top === "shared" || top === "profiles") return "stream";
      return top === "name" || top === "exporter" ? "materialize" : "skip";
    case 2:
      if (top === "shared") return path[1] === "frames" ? "stream" : "skip";
      return top === "profiles" ? "stream" : "skip";
    case 3:
      if (top === "shared") return typeof path[2] === "number" ? "materialize" : "skip";
      if (typeof path[2] === "number") return "skip";
      return path[2] === "samples" || path[2] === "weights" || path[2] === "events" ? "stream" : "materialize";
    case 4:
      return typeof path[3] === "number" ? "materialize" : "skip";
    default:
      return "skip";
  }
}

const under = (path: JsonPath, a: string, b: string | number) => path.length >= 3 && path[0] === a && path[1] === b;

/**
 * What the streamed file holds so far. The parser says when a value starts, not when it ends: a
 * list or profile has ended when the parser asks about a value outside it (or the input ends).
 */
class SpeedscopeReader {
  top: "object" | "other" | null = null;
  sawProfiles = false;
  profilesOther = false;
  framesOther = false;
  /** startValue in ns of each time-based profile (for the file's time origin). */
  readonly timeStarts: number[] = [];
  private framesOpen = false;
  private readonly frameValues: JsonValue[] = [];
  frames: SharedFrames | null = null;
  readonly profiles: (ProfileBuffer | null)[] = [];
  private current = -1;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  select = (path: JsonPath): JsonSelection => {
    if (this.framesOpen && !under(path, "shared", "frames")) this.endFrames();
    if (this.current >= 0 && !under(path, "profiles", this.current)) this.endProfile();
    if (path.length === 1) {
      this.top = typeof path[0] === "number" ? "other" : "object";
      if (path[0] === "profiles") this.sawProfiles = true;
    }
    else if (path.length === 2) {
      if (path[0] === "shared" && path[1] === "frames") this.framesOpen = true;
      else if (path[0] === "profiles") {
        if (typeof path[1] === "number") {
          this.profiles.push(new ProfileBuffer());
          this.current = path[1];
        } else this.profilesOther = true;
      }
    } else if (path.length === 3) {
      if (path[0] === "shared" && path[1] === "frames" && typeof path[2] !== "number") this.framesOther = true;
      else if (path[0] === "profiles" && typeof path[2] === "number") this.profiles[path[1] as number]!.isRecord = false;
    }
    return selectSpeedscope(path);
  };

  onValue = (path: JsonPath, value: JsonValue): void => {
    if (path.length === 0) {
      this.top = "other";
      return;
    }
    const top = path[0];
    if (top === "shared") {
      if (path.length === 3) this.frameValues.push(value);
      else if (path.length === 2 && path[1] === "frames") this.framesOther = true;
      return;
    }
    if (top === "profiles") {
      if (path.length === 1) this.profilesOther = true;
      if (path.length < 2 || typeof path[1] !== "number") return;
      const profile = this.profiles[path[1]]!;
      if (path.length === 2) profile.isRecord = false;
      else if (path.length === 3) profile.fields[path[2]] = value;
      else if (path[2] === "samples") this.sample(profile, value);
      else if (path[2] === "weights") profile.weights.push(typeof value === "number" ? value : NaN);
      else if (path[2] === "events") this.event(profile, value);
      return;
    }
    if (typeof value === "string") this.builder.metadata[top === "name" ? "profile_group_name" : "exporter"] = this.builder.bound(value, "other");
  };

  /** Everything has been read: lists and profiles still open have ended. */
  end(): void {
    if (this.framesOpen) this.endFrames();
    if (this.current >= 0) this.endProfile();
  }

  private endFrames(): void {
    this.framesOpen = false;
    if (!this.frames && !this.framesOther) this.frames = new SharedFrames(this.builder, this.frameValues);
  }

  private endProfile(): void {
    const profile = this.profiles[this.current]!;
    profile.complete = true;
    const unit = UNITS[String(profile.fields.unit)];
    if (profile.isRecord && unit?.isTime && typeof profile.fields.startValue === "number") this.timeStarts.push(profile.fields.startValue * unit.factor);
    this.current = -1;
  }

  private sample(profile: ProfileBuffer, stack: JsonValue): void {
    const truncated = Array.isArray(stack) && stack.length > this.maxDepth;
    profile.truncated.push(truncated ? 1 : 0);
    const depth = Array.isArray(stack) ? Math.min(stack.length, this.maxDepth) : 0;
    if (this.frames && profile.fields.type === "sampled" && profile.rawStarts.length === 0) {
      profile.leaves.push(Array.isArray(stack) ? leafOf(stack, depth, this.frames, this.builder) : NOT_A_LIST);
      return;
    }
    // Until shared.frames and the profile's type are known, the indices are kept.
    if (!Array.isArray(stack)) {
      profile.rawStarts.push(-1);
      profile.rawEnds.push(-1);
      return;
    }
    profile.rawStarts.push(profile.rawFrames.length);
    for (let d = 0; d < depth; d++) {
      const index = stack[d];
      profile.rawFrames.push(isIndex(index) ? index : -1);
    }
    profile.rawEnds.push(profile.rawFrames.length);
  }

  private event(profile: ProfileBuffer, event: JsonValue): void {
    if (!isRecord(event) || (event.type !== "O" && event.type !== "C") || typeof event.at !== "number" || !Number.isFinite(event.at)) {
      profile.eventKinds.push(EVENT_BAD);
      profile.eventFrames.push(-1);
      profile.eventTimes.push(0);
      return;
    }
    profile.eventKinds.push(event.type === "O" ? EVENT_OPEN : EVENT_CLOSE);
    profile.eventFrames.push(isIndex(event.frame) ? event.frame : -1);
    profile.eventTimes.push(event.at);
  }
}

export const speedscopeImporter: FormatImporter = {
  id: "speedscope",
  title: "speedscope JSON",
  extensions: ["speedscope.json", "json"],
  version: "1",

  sniff(_head, headText, fileName) {
    try {
      const text = headText.replace(/^\uFEFF/, "").trimStart();
      if (!text.startsWith("{")) return 0;
      if (text.includes(SCHEMA_URL)) return 0.95;
      const named = /\.speedscope\.json$/i.test(fileName ?? "");
      if (text.includes('"profiles"') && text.includes('"shared"')) return named ? 0.9 : 0.6;
      return named ? 0.4 : 0;
    } catch {
      return 0;
    }
  },

  async parse({ source, builder, limits }: ImportContext) {
    const reader = new SpeedscopeReader(builder, limits.maxDepth);
    // The file's own structure nests five levels, whatever bound is set on stacks.
    const parser = new JsonStreamParser({ format: FORMAT, maxDepth: Math.max(limits.maxDepth, 8), select: reader.select, onValue: reader.onValue });
    let imported = 0;
    let next = 0;
    const unitOf = (profile: Record<string, unknown>): UnitMapping => {
      const unit = UNITS[String(profile.unit)];
      if (unit) return unit;
      builder.limit("SPEEDSCOPE_UNKNOWN_UNIT", "A profile has a unit that is not in speedscope's list; its values were read as plain counts.");
      return UNITS.none;
    };
    /**
     * Hands ended profiles to the builder in file order: a sampled one as soon as shared.frames is
     * known, an evented one (and all after it) only at the end, once the file's time origin is.
     */
    const emit = async (atEnd: boolean, originNs: number) => {
      while (next < reader.profiles.length) {
        const profile = reader.profiles[next]!;
        if (!profile.complete || !reader.frames) return;
        const type = profile.isRecord ? profile.fields.type : undefined;
        if (type === "evented" && !atEnd) return;
        const index = next++;
        reader.profiles[index] = null;
        if (type !== "sampled" && type !== "evented") {
          builder.limit("SPEEDSCOPE_UNKNOWN_PROFILE", "Some profiles were neither sampled nor evented and were skipped.");
          continue;
        }
        const unit = unitOf(profile.fields);
        const startValue = typeof profile.fields.startValue === "number" ? profile.fields.startValue : 0;
        const ctx: ProfileContext = {
          builder,
          frames: reader.frames,
          trackId: builder.track({ threadId: index, threadName: typeof profile.fields.name === "string" ? profile.fields.name : `profile ${index}`, kind: "profile" }),
          metricId: builder.metric(unit.metric),
          unit,
          maxDepth: limits.maxDepth,
          originShiftNs: unit.isTime ? startValue * unit.factor - originNs : 0,
        };
        if (type === "sampled") {
          if (profile.rawStarts.length > 0) resolveRawStacks(profile, reader.frames, builder);
          await importSampled(profile, ctx);
        } else await importEvented(profile, ctx);
        imported++;
        await builder.checkpoint();
      }
    };

    // UTF-8 as it comes (the parser drops a byte-order mark); UTF-16 (by its mark, in the first two bytes) re-encoded.
    let utf16: TextDecoder | null = null;
    let head: Uint8Array | null = new Uint8Array(0);
    const encoder = new TextEncoder();
    let bytes = 0;
    for await (const raw of source.chunks()) {
      bytes += raw.length;
      let chunk = raw;
      if (head) {
        chunk = head.length ? concatBytes([head, raw]) : raw;
        if (chunk.length < 2) {
          head = chunk.slice();
          continue;
        }
        head = null;
        const { encoding, bomLength } = detectEncoding(chunk);
        if (encoding !== "utf-8") {
          utf16 = new TextDecoder(encoding, { fatal: false });
          chunk = chunk.subarray(bomLength);
        }
      }
      parser.write(utf16 ? encoder.encode(utf16.decode(chunk, { stream: true })) : chunk);
      await emit(false, 0);
      await builder.checkpoint();
    }
    if (head?.length) parser.write(head);
    if (bytes === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0 });
    if (utf16) parser.write(encoder.encode(utf16.decode()));
    parser.end();
    reader.end();

    if (reader.top !== "object") throw new EvidenceParseError(FORMAT, "not a speedscope file: the top level is not an object", { offset: 0 });
    if (!reader.sawProfiles || reader.profilesOther) throw new EvidenceParseError(FORMAT, "not a speedscope file: no profiles array", { offset: 0 });
    if (!reader.frames) throw new EvidenceParseError(FORMAT, "not a speedscope file: no shared.frames array", { offset: 0 });

    // One time origin for the file: the earliest startValue of its time-based profiles, in ns.
    let originNs = Infinity;
    for (const startNs of reader.timeStarts) originNs = Math.min(originNs, startNs);
    if (!Number.isFinite(originNs)) originNs = 0;
    builder.metadata.time_origin_ns = String(originNs);
    await emit(true, originNs);
    if (imported === 0) throw new EvidenceParseError(FORMAT, "no sampled or evented profile in the file", { offset: 0 });
  },
};
