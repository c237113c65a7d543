/**
 * speedscope's own JSON format (https://www.speedscope.app/file-format-schema.json): shared frames
 * and profiles, each "sampled" (root-first stacks of frame indices with weights) or "evented"
 * (open/close frame events). Each profile is its own track (kind `profile`, thread id = its index, thread name = its name). Sampled
 * profiles → aggregate samples; evented profiles → spans (depth = open-stack depth) plus samples of
 * the open stack weighted by the time until the next event, so flame graphs work for both.
 * Units: time → wall_ns (converted to ns), bytes → alloc_bytes, none → samples (weights as values).
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { int64 } from "../evidence/int64";
import { parseJsonDocument, readBounded } from "../io/json-documents";
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

async function importSampled(profile: Record<string, unknown>, ctx: ProfileContext): Promise<void> {
  const { builder, frames } = ctx;
  const samples = Array.isArray(profile.samples) ? profile.samples : [];
  const weights = Array.isArray(profile.weights) ? profile.weights : [];
  if (samples.length !== weights.length) {
    builder.limit("SPEEDSCOPE_WEIGHTS_MISMATCH", "A sampled profile has a different number of samples and weights; only the pairs present were read.");
  }
  const count = Math.min(samples.length, weights.length);
  for (let i = 0; i < count; i++) {
    const stack = samples[i];
    const weight = weights[i];
    if (!Array.isArray(stack) || typeof weight !== "number" || !Number.isFinite(weight) || weight < 0) {
      builder.limit("SPEEDSCOPE_BAD_SAMPLE", "Some samples were not a list of frame indices with a non-negative weight and were skipped.");
      continue;
    }
    let node: number | null = null;
    let valid = true;
    const depth = Math.min(stack.length, ctx.maxDepth);
    if (stack.length > ctx.maxDepth) builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${ctx.maxDepth} frames; their leaf-most frames were dropped.`);
    for (let d = 0; d < depth; d++) {
      const index = stack[d];
      if (!isIndex(index) || index >= frames.count) {
        valid = false;
        break;
      }
      node = builder.stack(node, frames.id(index));
    }
    if (!valid) {
      builder.limit("SPEEDSCOPE_BAD_FRAME_INDEX", "Some samples or events named a frame index outside shared.frames and were skipped.");
      continue;
    }
    if (node === null) continue;
    builder.sample(node, ctx.trackId, null, ctx.metricId, int64(weight * ctx.unit.factor, FORMAT, "weights"));
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

async function importEvented(profile: Record<string, unknown>, ctx: ProfileContext): Promise<void> {
  const { builder, frames, unit } = ctx;
  const events = Array.isArray(profile.events) ? profile.events : [];
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

  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    if (!isRecord(event) || (event.type !== "O" && event.type !== "C") || typeof event.at !== "number" || !Number.isFinite(event.at)) {
      builder.limit("SPEEDSCOPE_BAD_EVENT", "Some events were not {type: O|C, frame, at} and were skipped.");
      continue;
    }
    if (!isIndex(event.frame) || event.frame >= frames.count) {
      builder.limit("SPEEDSCOPE_BAD_FRAME_INDEX", "Some samples or events named a frame index outside shared.frames and were skipped.");
      continue;
    }
    if (event.at < last) builder.limit("SPEEDSCOPE_EVENTS_OUT_OF_ORDER", "Some events went back in time; they were placed at the previous event's time.");
    advance(event.at);
    const frame = event.frame;
    if (event.type === "O") {
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
    const bytes = await readBounded(source.chunks());
    if (bytes.length === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0 });
    const file = parseJsonDocument(FORMAT, bytes);
    if (!isRecord(file)) throw new EvidenceParseError(FORMAT, "not a speedscope file: the top level is not an object", { offset: 0 });
    const shared = file.shared;
    if (!Array.isArray(file.profiles)) throw new EvidenceParseError(FORMAT, "not a speedscope file: no profiles array", { offset: 0 });
    if (!isRecord(shared) || !Array.isArray(shared.frames)) throw new EvidenceParseError(FORMAT, "not a speedscope file: no shared.frames array", { offset: 0 });

    const frames = new SharedFrames(builder, shared.frames);
    const profiles = file.profiles.filter(isRecord);
    const unitOf = (profile: Record<string, unknown>): UnitMapping => {
      const unit = UNITS[String(profile.unit)];
      if (unit) return unit;
      builder.limit("SPEEDSCOPE_UNKNOWN_UNIT", "A profile has a unit that is not in speedscope's list; its values were read as plain counts.");
      return UNITS.none;
    };
    // One time origin for the file: the earliest startValue of its time-based profiles, in ns.
    let originNs = Infinity;
    for (const profile of profiles) {
      const unit = UNITS[String(profile.unit)];
      if (unit?.isTime && typeof profile.startValue === "number") originNs = Math.min(originNs, profile.startValue * unit.factor);
    }
    if (!Number.isFinite(originNs)) originNs = 0;
    builder.metadata.time_origin_ns = String(originNs);
    if (typeof file.name === "string") builder.metadata.profile_group_name = builder.bound(file.name, "other");
    if (typeof file.exporter === "string") builder.metadata.exporter = builder.bound(file.exporter, "other");

    let imported = 0;
    for (let index = 0; index < file.profiles.length; index++) {
      const profile = file.profiles[index];
      if (!isRecord(profile) || (profile.type !== "sampled" && profile.type !== "evented")) {
        builder.limit("SPEEDSCOPE_UNKNOWN_PROFILE", "Some profiles were neither sampled nor evented and were skipped.");
        continue;
      }
      const unit = unitOf(profile);
      const startValue = typeof profile.startValue === "number" ? profile.startValue : 0;
      const ctx: ProfileContext = {
        builder,
        frames,
        trackId: builder.track({ threadId: index, threadName: typeof profile.name === "string" ? profile.name : `profile ${index}`, kind: "profile" }),
        metricId: builder.metric(unit.metric),
        unit,
        maxDepth: limits.maxDepth,
        originShiftNs: unit.isTime ? startValue * unit.factor - originNs : 0,
      };
      if (profile.type === "sampled") await importSampled(profile, ctx);
      else await importEvented(profile, ctx);
      imported++;
      await builder.checkpoint();
    }
    if (imported === 0) throw new EvidenceParseError(FORMAT, "no sampled or evented profile in the file", { offset: 0 });
  },
};
