/**
 * The Trace Event Format's own sampling data, beside `traceEvents`: `stackFrames` (id → {name,
 * category, parent}) and `samples` ({pid?, tid, ts, sf, weight, cpu, name}), as Hermes / React
 * Native and Chrome's perf converters write them. Each sample becomes, on its thread's track, a
 * `samples` row (its weight, 1 when absent) and a `wall_ns` row: the time until the thread's next
 * sample, the last one the thread's mean interval (as cpuprofile's samples without an end time).
 * A stack frame's path runs from its root ancestor to itself; Hermes writes a function's location
 * into its name, `fn(url:line:col)`, which becomes the frame's file, line and column.
 */
import { NumberColumn, type EvidenceBuilder, type FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import type { JsonValue } from "../io/json-stream";
import { isJsonObject } from "./cpuprofile";
import { EvidenceParseError, InputBoundError } from "./errors";

const FORMAT = "chrome-trace";
const CHECKPOINT_EVERY = 16_384;
const HERMES_LOCATION = /^(.*)\((.+):(\d+):(\d+)\)$/;

/** A number, or a string holding one in JSON's notation (Hermes writes ts, weight and tid as strings); else undefined. */
export function numberValue(value: JsonValue | undefined): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value !== "string" || !/^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** Ids are numbers or strings; both name the same thing as text. */
function idText(value: JsonValue | undefined): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return null;
}

interface StackFrameEntry {
  name: string;
  category: string | null;
  parent: string | null;
}

function frameKind(name: string, category: string | null): FrameKind {
  const cat = category?.toLowerCase() ?? "";
  if (/^\[?(gc|garbage collect)/i.test(name) || cat === "gc") return "gc";
  if (/^[[(]idle[\])]$/i.test(name) || cat === "idle") return "idle";
  if (cat === "root" || /^[[(](root|program)[\])]$/i.test(name)) return "program";
  if (cat === "javascript" || cat === "js") return "js";
  if (cat === "native") return "native";
  return "other";
}

/** A stack frame as a frame: Hermes' `name(url:line:col)` gives its location; a category that names no kind is its module. */
function describeFrame(entry: StackFrameEntry): FrameInput {
  const kind = frameKind(entry.name, entry.category);
  const located = HERMES_LOCATION.exec(entry.name);
  if (located) {
    return { name: located[1] === "" ? "(anonymous)" : located[1], file: located[2], line: Number(located[3]), col: Number(located[4]), module: located[2], kind };
  }
  const module = kind === "other" && entry.category ? entry.category : null;
  return { name: entry.name === "" ? "(unnamed)" : entry.name, module, kind };
}

export class TraceSamples {
  private readonly frames = new Map<string, StackFrameEntry>();
  private readonly frameRefs: string[] = [];
  private readonly frameRefIds = new Map<string, number>();
  private readonly track = new NumberColumn();
  private readonly ts = new NumberColumn();
  private readonly frameRef = new NumberColumn();
  private readonly weight = new NumberColumn();

  get count(): number {
    return this.ts.length;
  }

  /** One entry of `stackFrames`. */
  stackFrame(builder: EvidenceBuilder, id: string, value: JsonValue): void {
    if (!isJsonObject(value) || typeof value.name !== "string") {
      builder.limit("INVALID_STACK_FRAME", "Some stackFrames entries are not objects with a name; samples on them were dropped.");
      return;
    }
    this.frames.set(id, { name: value.name, category: typeof value.category === "string" ? value.category : null, parent: idText(value.parent) });
  }

  /** One entry of `samples`; `track` finds its thread's track. Returns its ts (µs), or undefined when it was skipped. */
  sample(builder: EvidenceBuilder, value: JsonValue, track: (pid: JsonValue | undefined, tid: JsonValue | undefined) => number): number | undefined {
    if (!isJsonObject(value)) {
      builder.limit("INVALID_SAMPLE", "Some samples are not objects with ts and sf; they were skipped.");
      return undefined;
    }
    const ts = numberValue(value.ts);
    const sf = idText(value.sf);
    if (ts === undefined || sf === null) {
      builder.limit("INVALID_SAMPLE", "Some samples are not objects with ts and sf; they were skipped.");
      return undefined;
    }
    let weight = value.weight === undefined ? 1 : numberValue(value.weight);
    if (weight === undefined || weight < 0) {
      builder.limit("INVALID_SAMPLE_WEIGHT", "Some samples have a weight that is not a non-negative number; they count 1.");
      weight = 1;
    }
    let ref = this.frameRefIds.get(sf);
    if (ref === undefined) {
      ref = this.frameRefs.length;
      this.frameRefIds.set(sf, ref);
      this.frameRefs.push(sf);
    }
    this.track.push(track(value.pid, value.tid));
    this.ts.push(ts);
    this.frameRef.push(ref);
    this.weight.push(weight);
    return ts;
  }

  /** Writes the samples, per track in time order (`originUs`: what time_ns 0 stands for). */
  async write(builder: EvidenceBuilder, originUs: number, maxDepth: number): Promise<void> {
    const n = this.ts.length;
    if (n === 0) return;
    const stacks = this.stacksOfRefs(builder, maxDepth);
    const samplesMetric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
    const wallMetric = builder.metric({ name: "wall_ns", unit: "ns", kind: "temporal" });
    builder.metadata.wall_ns_weighting = "time until the thread's next sample; a thread's last sample: its mean interval";
    const order = Int32Array.from({ length: n }, (_, k) => k);
    const track = this.track.view();
    const ts = this.ts.view();
    order.sort((a, b) => track[a] - track[b] || ts[a] - ts[b] || a - b);
    let written = 0;
    for (let from = 0; from < n; ) {
      let to = from + 1;
      while (to < n && track[order[to]] === track[order[from]]) to++;
      const mean = to - from > 1 ? (ts[order[to - 1]] - ts[order[from]]) / (to - from - 1) : 0;
      for (let p = from; p < to; p++) {
        const k = order[p];
        const stack = stacks[this.frameRef.get(k)];
        if (stack < 0) continue;
        const timeNs = (ts[k] - originUs) * 1000;
        const gapUs = p + 1 < to ? ts[order[p + 1]] - ts[k] : mean;
        builder.sample(stack, track[k], timeNs, samplesMetric, this.weight.get(k));
        builder.sample(stack, track[k], timeNs, wallMetric, gapUs * 1000);
        if (++written % CHECKPOINT_EVERY === 0) await builder.checkpoint();
      }
      from = to;
    }
  }

  /** The stack of each stack frame samples name (-1: unknown, dropped with a limitation). */
  private stacksOfRefs(builder: EvidenceBuilder, maxDepth: number): Int32Array {
    const stackOfFrame = new Map<string, number>();
    const frameIds = new Map<string, number>();
    const stackOf = (id: string): number => {
      const chain: string[] = [];
      let parentStack: number | null = null;
      for (let at: string | null = id; at !== null; ) {
        const known = stackOfFrame.get(at);
        if (known !== undefined) {
          parentStack = known;
          break;
        }
        const entry = this.frames.get(at);
        if (!entry) {
          // A parent that is not in stackFrames: the path starts below it.
          if (at !== id) builder.limit("UNKNOWN_PARENT_FRAME", "Some stack frames name a parent that is not in stackFrames; their paths start below it.");
          break;
        }
        chain.push(at);
        if (chain.length > maxDepth) {
          if (new Set(chain).size < chain.length) throw new EvidenceParseError(FORMAT, "the parent links of stackFrames form a cycle", { offset: 0 });
          throw new InputBoundError("depth", maxDepth, `${FORMAT}: a stack is deeper than ${maxDepth} frames`);
        }
        at = entry.parent;
      }
      for (let k = chain.length - 1; k >= 0; k--) {
        const entry = this.frames.get(chain[k])!;
        const key = `${entry.name}\u0000${entry.category ?? ""}`;
        let frame = frameIds.get(key);
        if (frame === undefined) frameIds.set(key, (frame = builder.frame(describeFrame(entry))));
        parentStack = builder.stack(parentStack, frame);
        stackOfFrame.set(chain[k], parentStack);
      }
      return parentStack ?? -1;
    };
    return Int32Array.from(this.frameRefs, (ref) => {
      if (!this.frames.has(ref)) {
        builder.limit("UNKNOWN_STACK_FRAME", "Some samples name a stack frame that is not in stackFrames; they were dropped.");
        return -1;
      }
      return stackOf(ref);
    });
  }
}
