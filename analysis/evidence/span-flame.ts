/**
 * A flame graph for evidence that has spans but no samples (B/E/X-only traces, OTLP): as Perfetto
 * and speedscope draw such traces, each span's self time (its duration minus its children's on the
 * same track) becomes `wall_ns` on the stack of span names from its root, per track. The builder
 * records every span's name, parent, track and duration as they come (about 24 bytes a span) and
 * derives the samples in `finish` only when no sample came.
 */
import type { EvidenceBuilder } from "./builder";

/** Distinct span names kept; past this the spans are not turned into samples (their names would fill memory). */
export const MAX_SPAN_FLAME_NAMES = 1 << 16;
const NO_PARENT = -1;
const NOT_RECORDED = -1;

function grownInt32(array: Int32Array<ArrayBuffer>, index: number, fill: number): Int32Array<ArrayBuffer> {
  if (index < array.length) return array;
  const grown = new Int32Array(Math.max(index + 1, array.length * 2)).fill(fill, array.length);
  grown.set(array);
  return grown;
}

function grownFloat64(array: Float64Array<ArrayBuffer>, index: number): Float64Array<ArrayBuffer> {
  if (index < array.length) return array;
  const grown = new Float64Array(Math.max(index + 1, array.length * 2));
  grown.set(array);
  return grown;
}

export class SpanFlameRecorder {
  private readonly nameIds = new Map<string, number>();
  private readonly names: string[] = [];
  /** Per draft id, its name's id (drafts are named before they are placed). */
  private draftNames = new Int32Array(1024).fill(NOT_RECORDED);
  /** Per span id: its name's id (NOT_RECORDED: no such span), parent span id, track and duration in ns. */
  private spanNames = new Int32Array(1024).fill(NOT_RECORDED);
  private spanParents = new Int32Array(1024);
  private spanTracks = new Int32Array(1024);
  private spanDurs = new Float64Array(1024);
  private spans = 0;
  private highestId = -1;
  /** Too many distinct names: nothing more is recorded and nothing is derived. */
  overflowed = false;

  get count(): number {
    return this.spans;
  }

  private nameId(name: string): number {
    let id = this.nameIds.get(name);
    if (id === undefined) {
      if (this.names.length >= MAX_SPAN_FLAME_NAMES) {
        this.release();
        return NOT_RECORDED;
      }
      id = this.names.length;
      this.nameIds.set(name, id);
      this.names.push(name);
    }
    return id;
  }

  draft(draftId: number, name: string): void {
    if (this.overflowed) return;
    const id = this.nameId(name);
    if (this.overflowed) return;
    this.draftNames = grownInt32(this.draftNames, draftId, NOT_RECORDED);
    this.draftNames[draftId] = id;
  }

  placeDraft(draftId: number, spanId: number, parentSpanId: number | null, trackId: number, durNs: number): void {
    if (this.overflowed) return;
    this.record(spanId, this.draftNames[draftId], parentSpanId, trackId, durNs);
  }

  span(spanId: number, name: string, parentSpanId: number | null, trackId: number, durNs: number): void {
    if (this.overflowed) return;
    const id = this.nameId(name);
    if (!this.overflowed) this.record(spanId, id, parentSpanId, trackId, durNs);
  }

  private record(spanId: number, nameId: number, parentSpanId: number | null, trackId: number, durNs: number): void {
    // Span ids come from the builder's counter (allocateSpanId): dense, from 0.
    if (!Number.isInteger(spanId) || spanId < 0 || spanId > 2 ** 31 - 2) return;
    this.spanNames = grownInt32(this.spanNames, spanId, NOT_RECORDED);
    this.spanParents = grownInt32(this.spanParents, spanId, NO_PARENT);
    this.spanTracks = grownInt32(this.spanTracks, spanId, 0);
    this.spanDurs = grownFloat64(this.spanDurs, spanId);
    if (this.spanNames[spanId] === NOT_RECORDED) this.spans++;
    this.spanNames[spanId] = nameId;
    this.spanParents[spanId] = parentSpanId === null || !Number.isInteger(parentSpanId) || parentSpanId < 0 || parentSpanId > 2 ** 31 - 2 ? NO_PARENT : parentSpanId;
    this.spanTracks[spanId] = trackId;
    this.spanDurs[spanId] = durNs;
    if (spanId > this.highestId) this.highestId = spanId;
  }

  release(): void {
    this.overflowed = true;
    this.nameIds.clear();
    this.names.length = 0;
    this.draftNames = new Int32Array(0);
    this.spanNames = new Int32Array(0);
    this.spanParents = new Int32Array(0);
    this.spanTracks = new Int32Array(0);
    this.spanDurs = new Float64Array(0);
  }

  /**
   * Writes the derived samples into the builder (aggregate: no time, one row per track and stack)
   * and frees what was recorded. Returns how many sample rows it wrote.
   */
  derive(builder: EvidenceBuilder): number {
    const n = this.highestId + 1;
    const { spanNames: names, spanParents: parents, spanTracks: tracks, spanDurs: durs } = this;
    const isChild = (id: number) => {
      const parent = parents[id];
      return parent !== NO_PARENT && parent < n && parent !== id && names[parent] !== NOT_RECORDED && tracks[parent] === tracks[id];
    };
    // Self time: the duration less the children's on the same track, never below 0.
    const self = new Float64Array(n);
    for (let id = 0; id < n; id++) if (names[id] !== NOT_RECORDED) self[id] += durs[id];
    for (let id = 0; id < n; id++) if (names[id] !== NOT_RECORDED && isChild(id)) self[parents[id]] -= durs[id];
    let clamped = 0;
    for (let id = 0; id < n; id++) {
      if (self[id] < 0) {
        self[id] = 0;
        clamped++;
      }
    }

    const frames = new Int32Array(this.names.length).fill(-1);
    const frameOf = (nameId: number) => (frames[nameId] >= 0 ? frames[nameId] : (frames[nameId] = builder.frame({ name: this.names[nameId], kind: "other" })));
    // Stack node per span, resolved on demand (only spans with self time and their ancestors get one).
    const nodes = new Int32Array(n).fill(-1);
    const chain: number[] = [];
    let cycles = 0;
    const nodeOf = (id: number): number => {
      chain.length = 0;
      let parentNode: number | null = null;
      for (let at = id; ; at = parents[at]) {
        if (nodes[at] >= 0) {
          parentNode = nodes[at];
          break;
        }
        chain.push(at);
        if (!isChild(at)) break;
        // A parent chain longer than the spans loops: where it was noticed, the loop is cut.
        if (chain.length > n) {
          cycles++;
          break;
        }
      }
      for (let k = chain.length - 1; k >= 0; k--) {
        const span = chain[k];
        if (nodes[span] < 0) nodes[span] = builder.stack(parentNode, frameOf(names[span]));
        parentNode = nodes[span];
      }
      return nodes[id];
    };

    for (let id = 0; id < n; id++) if (names[id] !== NOT_RECORDED && self[id] > 0 && tracks[id] >= 0) nodeOf(id);
    this.release();
    // Self time per stack node and track: in arrays by node while a node has one track (most
    // have), in a map for the pairs beyond that.
    const nodeCount = builder.stackCount;
    const selfByNode = new Float64Array(nodeCount);
    const trackOfNode = new Int32Array(nodeCount).fill(-1);
    const others = new Map<string, number>();
    let rows = 0;
    for (let id = 0; id < n; id++) {
      const node = nodes[id];
      if (node < 0) continue;
      const value = self[id] > 0 ? self[id] : 0;
      if (value === 0) continue;
      const track = tracks[id];
      if (trackOfNode[node] < 0) {
        trackOfNode[node] = track;
        rows++;
      }
      if (trackOfNode[node] === track) selfByNode[node] += value;
      else {
        const key = `${node}/${track}`;
        const known = others.get(key);
        if (known === undefined) rows++;
        others.set(key, (known ?? 0) + value);
      }
    }
    if (rows === 0) return 0;
    const metric = builder.metric({ name: "wall_ns", unit: "ns", kind: "temporal" });
    for (let node = 0; node < nodeCount; node++) if (selfByNode[node] > 0) builder.sample(node, trackOfNode[node], null, metric, selfByNode[node]);
    for (const [key, value] of others) {
      const slash = key.indexOf("/");
      builder.sample(Number(key.slice(0, slash)), Number(key.slice(slash + 1)), null, metric, value);
    }
    builder.limit(
      "SAMPLES_FROM_SPANS",
      "The input has no samples: its flame graph is derived from its spans. Each span's self time (its duration minus its children's on the same track) is wall_ns on the path of span names from its root, per track, as Perfetto and speedscope draw span-only traces.",
    );
    if (clamped > 0) builder.limit("SPAN_CHILDREN_OUTLAST_PARENT", "In some spans the children on the same track took longer than the span itself (they overlap or run concurrently); those spans' derived self time is 0.", clamped);
    if (cycles > 0) builder.limit("SPAN_PARENT_CYCLE", "Some spans' parent links form a loop; for the derived flame graph the loop was cut.", cycles);
    return rows;
  }
}
