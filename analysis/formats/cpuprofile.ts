/**
 * V8 CPU profile (`.cpuprofile`: node --cpu-prof, Chrome DevTools). Each `nodes` entry is a call
 * tree node whose callFrame becomes a frame and whose root path becomes a stack (the "(root)" node
 * itself is left out, as DevTools and speedscope do). Each entry of `samples` becomes two sample
 * rows on one thread track: `samples` (1) and `wall_ns` (the time until the next sample).
 * positionTicks become `line_ticks` measurements. The V8 helpers here also serve chrome-trace.
 * The legacy layout (DevTools before 2016, v8-profiler) is read too: a `head` call tree of nested
 * nodes with the callFrame's fields on the node itself, `samples`, and `timestamps` (absolute µs,
 * one per sample) with startTime and endTime in seconds.
 */
import { NumberColumn, type EvidenceBuilder } from "../evidence/builder";
import { int64 } from "../evidence/int64";
import type { FrameKind } from "../evidence/schema";
import { parseJsonStream, type JsonPath, type JsonSelection, type JsonValue } from "../io/json-stream";
import { EvidenceParseError, InputBoundError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}


/** What a V8 callFrame says about itself: pseudo-frames by name, natives by having no script. */
export function v8FrameKind(name: string, url: string, scriptId: JsonValue | undefined, lineNumber: number): FrameKind {
  if (name === "(idle)") return "idle";
  if (name === "(garbage collector)") return "gc";
  if (name === "(program)" || name === "(root)") return "program";
  if (url !== "") return "js";
  if (name.startsWith("(") && name.endsWith(")")) return "other";
  // No URL but a script and a position: eval'd code. No script at all: a builtin or C++ binding.
  return scriptId === undefined || scriptId === 0 || scriptId === "0" || lineNumber < 0 ? "native" : "js";
}

/** The frame of a V8 callFrame (0-based lineNumber/columnNumber become 1-based). */
export function v8Frame(builder: EvidenceBuilder, callFrame: JsonObject): number {
  const name = typeof callFrame.functionName === "string" && callFrame.functionName !== "" ? callFrame.functionName : "(anonymous)";
  const url = typeof callFrame.url === "string" ? callFrame.url : "";
  const line = typeof callFrame.lineNumber === "number" ? callFrame.lineNumber : -1;
  const column = typeof callFrame.columnNumber === "number" ? callFrame.columnNumber : -1;
  return builder.frame({
    name,
    file: url || null,
    line: line >= 0 ? line + 1 : null,
    col: column >= 0 ? column + 1 : null,
    module: url || null,
    kind: v8FrameKind(name, url, callFrame.scriptId, line),
  });
}

/**
 * The nodes of one V8 profile (cpuprofile `nodes`, or a trace's ProfileChunk nodes), in any order,
 * linked by `children` or by `parent`; stacks are resolved once every node is known.
 */
const MAX_CACHED_NODE_ID = 1 << 24;

export class V8NodeTree {
  /** Frame id per node; null for a "(root)" node, whose frame is made only if a sample lands on it. */
  private readonly frames = new Map<number, number | null>();
  private readonly rootFrames = new Map<number, JsonObject>();
  private readonly parents = new Map<number, number>();
  private readonly stacks = new Map<number, number | null>();
  /** stackOf's answers by node id (+1; 0 = not yet resolved): samples ask millions of times. */
  private stackCache = new Int32Array(0);

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly format: string,
    private readonly maxDepth: number,
  ) {}

  get size(): number {
    return this.frames.size;
  }

  /**
   * Adds one node; returns its frame id (null for "(root)"). Throws when it has no id or callFrame.
   * `parentId`: for trees that nest children as objects (heap profiles) rather than by id.
   */
  add(node: JsonValue, offset: number, parentId?: number): number | null {
    if (!isJsonObject(node) || typeof node.id !== "number" || !isJsonObject(node.callFrame)) {
      throw new EvidenceParseError(this.format, "a profile node lacks a numeric id or a callFrame", { offset });
    }
    const isRoot = node.callFrame.functionName === "(root)" && node.parent === undefined && parentId === undefined;
    const frameId = isRoot ? null : v8Frame(this.builder, node.callFrame);
    this.frames.set(node.id, frameId);
    if (isRoot) this.rootFrames.set(node.id, node.callFrame);
    if (parentId !== undefined) this.parents.set(node.id, parentId);
    else if (typeof node.parent === "number") this.parents.set(node.id, node.parent);
    if (Array.isArray(node.children)) {
      for (const child of node.children) if (typeof child === "number") this.parents.set(child, node.id);
    }
    return frameId;
  }

  /** The stack of a node (root-first, "(root)" left out); undefined for an unknown node. */
  stackOf(nodeId: number): number | undefined {
    const cached = nodeId >= 0 && nodeId < this.stackCache.length ? this.stackCache[nodeId] : 0;
    if (cached !== 0) return cached - 1;
    const stack = this.resolveStack(nodeId);
    if (stack !== undefined && Number.isInteger(nodeId) && nodeId >= 0 && nodeId < MAX_CACHED_NODE_ID) {
      if (nodeId >= this.stackCache.length) {
        const grown = new Int32Array(Math.max(1024, 2 ** Math.ceil(Math.log2(nodeId + 1))));
        grown.set(this.stackCache);
        this.stackCache = grown;
      }
      this.stackCache[nodeId] = stack + 1;
    }
    return stack;
  }

  private resolveStack(nodeId: number): number | undefined {
    const known = this.stacks.get(nodeId);
    if (known !== undefined) return known ?? this.rootOnlyStack(nodeId);
    if (!this.frames.has(nodeId)) return undefined;
    const chain: number[] = [];
    let at: number | undefined = nodeId;
    while (at !== undefined && this.frames.has(at) && !this.stacks.has(at)) {
      chain.push(at);
      if (chain.length > this.maxDepth) {
        if (chain.indexOf(at) < chain.length - 1) throw new EvidenceParseError(this.format, "the parent links of the profile's nodes form a cycle", { offset: 0 });
        throw new InputBoundError("depth", this.maxDepth, `${this.format}: a stack is deeper than ${this.maxDepth} frames`);
      }
      at = this.parents.get(at);
    }
    let stack: number | null = at !== undefined && this.stacks.has(at) ? (this.stacks.get(at) ?? null) : null;
    for (let k = chain.length - 1; k >= 0; k--) {
      const frameId = this.frames.get(chain[k]);
      if (frameId !== null && frameId !== undefined) stack = this.builder.stack(stack, frameId);
      this.stacks.set(chain[k], stack);
    }
    return stack ?? this.rootOnlyStack(nodeId);
  }

  /** A sample on the "(root)" node itself has nothing below it: it keeps the root's own frame. */
  private rootOnlyStack(nodeId: number): number {
    const callFrame = this.rootFrames.get(nodeId) ?? { functionName: "(root)" };
    return this.builder.stack(null, v8Frame(this.builder, callFrame));
  }
}

export interface V8Samples {
  /** The importer, named by errors about its times. */
  format: string;
  tree: V8NodeTree;
  /** Node id per sample, in time order. */
  nodeIds: NumberColumn;
  /** µs since the previous sample (the first: since startUs); null when the profile has none. */
  timeDeltas: NumberColumn | null;
  startUs: number;
  /** When the profile ended (µs), for the last sample's weight; null: use the mean interval. */
  endUs: number | null;
  /** µs that time_ns 0 stands for. */
  originUs: number;
  trackId: number | null;
}

const CHECKPOINT_EVERY = 16_384;

/**
 * Writes one `samples` row and one `wall_ns` row per sample. As in Chrome DevTools, a sample's
 * weight is the time until the next sample; the last one's is endUs minus its time (or the mean
 * interval when that is unknown or negative). Timestamps that step back in time (V8 writes them
 * so, e.g. around `(program)`) would count the step twice, once in the gap before it and again
 * in the gaps after it: as DevTools does, such samples are first put in time order (a stable
 * sort), so the weights add up to the time the samples cover (last − first + the last one's).
 */
export async function writeV8Samples(builder: EvidenceBuilder, input: V8Samples): Promise<void> {
  const { tree, nodeIds, timeDeltas } = input;
  const count = nodeIds.length;
  if (count === 0) return;
  const samplesMetric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
  const deltas = timeDeltas && timeDeltas.length === count ? timeDeltas : null;
  if (timeDeltas && !deltas) builder.limit("TIME_DELTAS_MISMATCH", "The profile has a different number of timeDeltas than samples; samples were kept without times.");
  if (!deltas) {
    for (let k = 0; k < count; k++) {
      const stack = tree.stackOf(nodeIds.get(k));
      if (stack === undefined) builder.limit("UNKNOWN_NODE", "Some samples name a profile node that does not exist; they were dropped.");
      else builder.sample(stack, input.trackId, null, samplesMetric, 1);
      if (k % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
    }
    return;
  }
  const wallMetric = builder.metric({ name: "wall_ns", unit: "ns", kind: "temporal" });
  // Sample k is at startUs + deltas 0..k. Most profiles never step back: their times are summed
  // as they go, with no array of them (a large profile has tens of millions of samples).
  const steps = backSteps(deltas);
  const times = steps.count > 0 ? timesOf(input.startUs, deltas) : null;
  const order = times ? timeOrder(times) : null;
  if (steps.count > 0) {
    const ms = (steps.totalUs / 1000).toLocaleString("en-US", { maximumFractionDigits: 3 });
    builder.limit(
      "SAMPLES_OUT_OF_ORDER",
      `${steps.count.toLocaleString("en-US")} sample timestamps step back in time, by ${ms} ms in total (the count sums every profile of the run; the figures are the first's): the samples were put in time order, as Chrome DevTools does, so that each weighs the time until the next and a thread's wall_ns adds up to the time its samples cover, not that plus the steps.`,
      steps.count,
    );
  }
  const meanDelta = count > 1 ? steps.spanUs / (count - 1) : 0;
  let time = input.startUs + deltas.get(0);
  for (let p = 0; p < count; p++) {
    const k = order ? order[p] : p;
    if (times) time = times[k];
    const next = p + 1 < count ? (order ? times![order[p + 1]] : time + deltas.get(p + 1)) : null;
    const stack = tree.stackOf(nodeIds.get(k));
    if (stack === undefined) {
      builder.limit("UNKNOWN_NODE", "Some samples name a profile node that does not exist; they were dropped.");
    } else {
      const weight = next !== null ? next - time : input.endUs !== null && input.endUs >= time ? input.endUs - time : meanDelta;
      const timeNs = int64((time - input.originUs) * 1000, input.format, "timeDeltas");
      builder.sample(stack, input.trackId, timeNs, samplesMetric, 1);
      builder.sample(stack, input.trackId, timeNs, wallMetric, int64(weight * 1000, input.format, "timeDeltas"));
    }
    if (next !== null) time = next;
    if (p % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
  }
}

/** How often and by how much (µs) the timestamps step back, and the span they cover (latest − earliest). */
function backSteps(deltas: NumberColumn): { count: number; totalUs: number; spanUs: number } {
  let count = 0;
  let totalUs = 0;
  let time = 0;
  let low = 0;
  let high = 0;
  for (let k = 1; k < deltas.length; k++) {
    const delta = deltas.get(k);
    time += delta;
    if (delta < 0) {
      count++;
      totalUs -= delta;
      if (time < low) low = time;
    } else if (time > high) high = time;
  }
  return { count, totalUs, spanUs: high - low };
}

function timesOf(startUs: number, deltas: NumberColumn): Float64Array {
  const times = new Float64Array(deltas.length);
  let time = startUs;
  for (let k = 0; k < deltas.length; k++) times[k] = time += deltas.get(k);
  return times;
}

/** The samples by time, ties in their order in the file (a stable sort). */
function timeOrder(times: Float64Array): Int32Array {
  const order = new Int32Array(times.length);
  for (let k = 0; k < order.length; k++) order[k] = k;
  return order.sort((a, b) => times[a] - times[b] || a - b);
}

const FORMAT = "cpuprofile";

function selectCpuprofile(path: JsonPath): JsonSelection {
  if (path.length === 0) return "stream";
  const top = path[0];
  if (top === "nodes" || top === "samples" || top === "timeDeltas" || top === "timestamps") return path.length === 1 ? "stream" : "materialize";
  // The legacy call tree is small and built whole.
  if (top === "head") return "materialize";
  return path.length === 1 && (top === "startTime" || top === "endTime") ? "materialize" : "skip";
}

/**
 * The nodes of a legacy `head` tree, parent first, as the current layout writes them: an id (made
 * up, negative, when a node has none) and the callFrame its fields form. Walked without recursion;
 * the JSON depth limit bounds it.
 */
function legacyNodes(head: JsonValue): { node: JsonObject; parentId: number | undefined }[] {
  const out: { node: JsonObject; parentId: number | undefined }[] = [];
  let madeUp = 0;
  const pending: { value: JsonValue; parentId: number | undefined }[] = [{ value: head, parentId: undefined }];
  while (pending.length > 0) {
    const { value, parentId } = pending.pop()!;
    if (!isJsonObject(value)) continue;
    const id = typeof value.id === "number" ? value.id : -++madeUp;
    const callFrame = isJsonObject(value.callFrame)
      ? value.callFrame
      : { functionName: value.functionName ?? "", url: value.url ?? "", scriptId: value.scriptId ?? 0, lineNumber: value.lineNumber ?? -1, columnNumber: value.columnNumber ?? -1 };
    out.push({ node: { id, callFrame, hitCount: value.hitCount ?? 0 }, parentId });
    if (Array.isArray(value.children)) for (let k = value.children.length - 1; k >= 0; k--) pending.push({ value: value.children[k], parentId: id });
  }
  return out;
}

async function parseCpuprofile(ctx: ImportContext): Promise<void> {
  const { builder } = ctx;
  const tree = new V8NodeTree(builder, FORMAT, ctx.limits.maxDepth);
  const nodeIds = new NumberColumn();
  const timeDeltas = new NumberColumn();
  const timestamps = new NumberColumn();
  const hitCounts = new Map<number, number>();
  const seen = { object: false, samples: false, timeDeltas: false, timestamps: false, head: null as JsonValue | null, headOffset: 0, startTime: null as number | null, endTime: null as number | null };

  const onValue = (path: JsonPath, value: JsonValue, offset: number): void => {
    if (path.length === 0) throw new EvidenceParseError(FORMAT, "the top-level value is not a profile object", { offset });
    const top = path[0];
    if (top === "samples" || top === "timeDeltas" || top === "timestamps") {
      if (typeof value !== "number") throw new EvidenceParseError(FORMAT, `${top} holds a non-number`, { offset });
      if (top === "samples") nodeIds.push(value);
      else if (top === "timeDeltas") timeDeltas.push(value);
      else timestamps.push(value);
    } else if (top === "head") {
      seen.head = value;
      seen.headOffset = offset;
    } else if (top === "nodes") {
      const frameId = tree.add(value, offset);
      const node = value as JsonObject;
      if (typeof node.hitCount === "number" && node.hitCount > 0) hitCounts.set(node.id as number, node.hitCount);
      if (frameId !== null && Array.isArray(node.positionTicks)) {
        for (const tick of node.positionTicks) {
          if (isJsonObject(tick) && typeof tick.line === "number" && typeof tick.ticks === "number") {
            builder.measurement({ name: "line_ticks", value: tick.ticks, unit: "samples", aggregation: "sum", dimensions: { frame_id: frameId, line: tick.line } });
          }
        }
      }
    } else if (typeof value === "number") {
      if (top === "startTime") seen.startTime = value;
      else seen.endTime = value;
    }
  };

  await parseJsonStream(
    ctx.source.chunks(),
    {
      format: FORMAT,
      maxDepth: ctx.limits.maxDepth,
      select: (path) => {
        if (path.length === 0) return "stream";
        if (typeof path[0] === "string") seen.object = true;
        if (path.length === 1 && path[0] === "samples") seen.samples = true;
        if (path.length === 1 && path[0] === "timeDeltas") seen.timeDeltas = true;
        if (path.length === 1 && path[0] === "timestamps") seen.timestamps = true;
        return selectCpuprofile(path);
      },
      onValue,
    },
    () => builder.checkpoint(),
  );

  const legacy = tree.size === 0 && seen.head !== null;
  if (legacy) {
    for (const { node, parentId } of legacyNodes(seen.head!)) {
      tree.add(node, seen.headOffset, parentId);
      if (typeof node.hitCount === "number" && node.hitCount > 0) hitCounts.set(node.id as number, node.hitCount);
    }
  }
  if (!seen.object || tree.size === 0) throw new EvidenceParseError(FORMAT, "the input is not a V8 CPU profile (no `nodes`, nor a legacy `head` tree)", { offset: 0 });
  const trackId = builder.track({ kind: "thread" });
  if (seen.samples) {
    let startUs = seen.startTime;
    let endUs = seen.endTime;
    let deltas = seen.timeDeltas ? timeDeltas : null;
    if (legacy) {
      builder.metadata.layout = "legacy (head tree, timestamps)";
      ({ startUs, endUs, deltas } = legacyTimes(builder, nodeIds.length, timestamps, seen));
    }
    if (startUs === null) builder.limit("MISSING_START_TIME", "The profile has no startTime; sample times count from 0.");
    builder.metadata.time_origin_us = String(startUs ?? 0);
    builder.metadata.wall_ns_weighting = "time until the next sample in time order; the last sample: endTime minus its time (mean interval if unknown)";
    await writeV8Samples(builder, { format: FORMAT, tree, nodeIds, timeDeltas: deltas, startUs: startUs ?? 0, endUs, originUs: startUs ?? 0, trackId });
  } else {
    // Old profiles carry only per-node hit counts: aggregate samples without times.
    builder.limit("NO_SAMPLES", "The profile has no samples array; per-node hitCount was used, without times.");
    const samplesMetric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
    for (const [nodeId, hits] of hitCounts) builder.sample(tree.stackOf(nodeId) as number, trackId, null, samplesMetric, int64(hits, FORMAT, "hitCount"));
  }
}

/**
 * A legacy profile's times in the current layout's terms: startTime and endTime are in seconds,
 * `timestamps` the absolute µs of each sample, turned into deltas from the start. A start later
 * than the first sample (seconds written as a whole number) gives way to that sample's time.
 */
function legacyTimes(
  builder: EvidenceBuilder,
  count: number,
  timestamps: NumberColumn,
  seen: { timestamps: boolean; startTime: number | null; endTime: number | null },
): { startUs: number | null; endUs: number | null; deltas: NumberColumn | null } {
  const firstUs = timestamps.length > 0 ? timestamps.get(0) : null;
  let startUs = seen.startTime === null ? firstUs : seen.startTime * 1e6;
  if (startUs !== null && firstUs !== null && startUs > firstUs) startUs = firstUs;
  const lastUs = count > 0 && timestamps.length > 0 ? timestamps.get(Math.min(count, timestamps.length) - 1) : null;
  const endUs = seen.endTime !== null && lastUs !== null && seen.endTime * 1e6 >= lastUs ? seen.endTime * 1e6 : null;
  if (!seen.timestamps) return { startUs, endUs, deltas: null };
  if (timestamps.length > count) {
    builder.limit("TIMESTAMPS_MISMATCH", `The profile has ${timestamps.length} timestamps for ${count} samples; each sample took the timestamp at its position, the rest were left out.`);
  }
  if (timestamps.length < count) {
    builder.limit("TIMESTAMPS_MISMATCH", `The profile has ${timestamps.length} timestamps for ${count} samples; samples were kept without times.`);
    return { startUs, endUs, deltas: null };
  }
  const deltas = new NumberColumn();
  for (let k = 0; k < count; k++) deltas.push(timestamps.get(k) - (k === 0 ? (startUs ?? 0) : timestamps.get(k - 1)));
  return { startUs, endUs, deltas };
}

export const cpuprofileImporter: FormatImporter = {
  id: "cpuprofile",
  title: "V8 CPU profile (.cpuprofile)",
  extensions: ["cpuprofile"],
  version: "2",
  sniff(_head, headText, fileName) {
    const text = headText.trimStart();
    const named = fileName !== null && fileName.toLowerCase().endsWith(".cpuprofile");
    if (!text.startsWith("{")) return 0;
    if (/"traceEvents"\s*:|"ph"\s*:|"selfSize"\s*:/.test(text)) return 0;
    const looksLike = /"nodes"\s*:/.test(text) && /"callFrame"\s*:/.test(text);
    if (looksLike) return named ? 1 : 0.9;
    // The legacy layout: a head tree whose nodes carry functionName and hitCount themselves.
    const legacy = /"head"\s*:/.test(text) && /"functionName"\s*:/.test(text) && /"hitCount"\s*:/.test(text);
    if (legacy) return named ? 1 : 0.85;
    return named && /"(samples|startTime|timeDeltas)"\s*:/.test(text) ? 0.6 : 0;
  },
  parse: parseCpuprofile,
};
