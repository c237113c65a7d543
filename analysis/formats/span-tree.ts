import type { EvidenceBuilder } from "../evidence/builder";
import { FIELD_LIMITS } from "../evidence/schema";

/**
 * Depth of each span of a trace whose parents are known by index: a parent on the same track nests
 * it; a parent elsewhere (or none) makes it a root of its track. Iterative (traces can be deep);
 * a parent cycle is cut where it closes (`parentOf` is changed there) and reported by `onCycle`.
 */
export function spanDepths(trackOf: ArrayLike<number>, parentOf: Int32Array, onCycle: () => void): Int32Array {
  const n = parentOf.length;
  const depth = new Int32Array(n).fill(-1);
  const walk = new Int32Array(n).fill(-1);
  const chain: number[] = [];
  for (let i = 0; i < n; i++) {
    let at = i;
    while (depth[at] < 0) {
      const parent = parentOf[at];
      if (parent < 0 || trackOf[parent] !== trackOf[at]) {
        depth[at] = 0;
        break;
      }
      walk[at] = i;
      if (walk[parent] === i) {
        onCycle();
        parentOf[at] = -1;
        depth[at] = 0;
        break;
      }
      chain.push(at);
      at = parent;
    }
    while (chain.length > 0) {
      const child = chain.pop()!;
      depth[child] = depth[parentOf[child]] + 1;
    }
  }
  return depth;
}

/**
 * A span's args as JSON text within the schema's bound, rather than cut mid-token: first the list
 * under `listKey` goes (its length kept as `<prefix>.<list>_dropped`), then long strings and large
 * values are shortened, then later keys are left out (`<prefix>.truncated`). `limit` names the
 * importer's limitation code and what its args hold.
 */
export function boundedSpanArgs(builder: EvidenceBuilder, args: Record<string, unknown>, spec: { listKey: string; code: string; message: string }): string {
  const limit = FIELD_LIMITS.args;
  let text = JSON.stringify(args);
  if (text.length <= limit) return text;
  builder.limit(spec.code, spec.message);
  const smaller: Record<string, unknown> = { ...args };
  const list = smaller[spec.listKey];
  if (Array.isArray(list)) {
    smaller[`${spec.listKey}_dropped`] = list.length;
    delete smaller[spec.listKey];
  }
  for (const [key, value] of Object.entries(smaller)) {
    if (typeof value === "string" && value.length > 256) smaller[key] = `${value.slice(0, 256)}…`;
    else if (typeof value === "object" && value !== null && JSON.stringify(value).length > 1024) smaller[key] = "[too large]";
  }
  text = JSON.stringify(smaller);
  if (text.length <= limit) return text;
  const kept: Record<string, unknown> = { [`${spec.listKey.split(".")[0]}.truncated`]: true };
  let size = JSON.stringify(kept).length;
  for (const [key, value] of Object.entries(smaller)) {
    const entry = JSON.stringify({ [key]: value }).length;
    if (size + entry > limit) break;
    kept[key] = value;
    size += entry;
  }
  return JSON.stringify(kept);
}

/**
 * A trace's spans linked by their own ids: a span id each (the first of a duplicated id is the one
 * referred to), each span's parent index (-1 for none; a parent not in the file makes a root), and
 * depths, and each id's span index. `prefix` names the importer's limitations (`<prefix>_DUPLICATE_SPAN`, `_PARENT_MISSING`,
 * `_PARENT_CYCLE`); `refersTo` says what refers to span ids in its format.
 */
export function linkSpans(
  builder: EvidenceBuilder,
  spans: { keys: readonly (string | null)[]; parentKeys: readonly (string | null)[]; trackOf: ArrayLike<number> },
  spec: { prefix: string; refersTo: string },
): { spanIds: Int32Array; parentOf: Int32Array; depths: Int32Array; indexByKey: Map<string, number> } {
  const { keys, parentKeys } = spans;
  const count = keys.length;
  const indexByKey = new Map<string, number>();
  const spanIds = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const key = keys[i];
    if (key !== null) {
      if (indexByKey.has(key)) builder.limit(`${spec.prefix}_DUPLICATE_SPAN`, `Some span ids appeared more than once; ${spec.refersTo} refer to the first.`);
      else indexByKey.set(key, i);
    }
    spanIds[i] = builder.allocateSpanId();
  }
  const parentOf = new Int32Array(count).fill(-1);
  for (let i = 0; i < count; i++) {
    const parentKey = parentKeys[i];
    if (parentKey === null) continue;
    const parent = indexByKey.get(parentKey);
    if (parent === undefined) builder.limit(`${spec.prefix}_PARENT_MISSING`, "Some spans' parents are not in the file; they are shown as roots (depth 0).");
    else if (parent !== i) parentOf[i] = parent;
  }
  const depths = spanDepths(spans.trackOf, parentOf, () => builder.limit(`${spec.prefix}_PARENT_CYCLE`, "Some spans were (indirectly) their own parents; the cycle was cut there."));
  return { spanIds, parentOf, depths, indexByKey };
}

/**
 * The spans of a trace whose parents and references may come anywhere in the file (OTLP, Jaeger).
 * Each span's text (name, category, status, args) goes to the builder as a draft as soon as it is
 * read, so that millions of spans' strings do not wait in memory for the end of the input; what
 * linking and placing need stays, in columns: ids as text, the track, and the importer's times.
 */
export class DraftedSpans {
  readonly keys: (string | null)[] = [];
  readonly parentKeys: (string | null)[] = [];
  private trackOf = new Int32Array(1024);
  /** Other spans a span refers to (links, FOLLOWS_FROM), by span index: few spans have any. */
  private readonly refs = new Map<number, string[]>();

  constructor(private readonly builder: EvidenceBuilder) {}

  get length(): number {
    return this.keys.length;
  }

  /** Drafts a span; returns its index (its draft id), by which the importer keeps its times. */
  add(span: { key: string | null; parentKey: string | null; refs: string[]; trackId: number; name: string; category: string; status: string; args: string }): number {
    const index = this.keys.length;
    this.builder.spanDraft(index, { name: span.name, category: span.category, status: span.status, args: span.args });
    this.keys.push(span.key);
    this.parentKeys.push(span.parentKey);
    if (index === this.trackOf.length) {
      const grown = new Int32Array(this.trackOf.length * 2);
      grown.set(this.trackOf);
      this.trackOf = grown;
    }
    this.trackOf[index] = span.trackId;
    if (span.refs.length > 0) this.refs.set(index, span.refs);
    return index;
  }

  /**
   * Places every span, in the order read, at the times `timeOf` gives its index (ns from the
   * file's origin), with a `child` edge from its parent; `onRef` is told each reference: the index
   * of the span referred to (undefined when not in the file), the span's index and the span ids.
   */
  async place(
    spec: { prefix: string; refersTo: string },
    timeOf: (index: number) => { startNs: number; durNs: number },
    onRef: (from: number | undefined, index: number, spanIds: Int32Array) => void,
  ): Promise<void> {
    const { builder } = this;
    const trackOf = this.trackOf.subarray(0, this.length);
    const { spanIds, parentOf, depths, indexByKey } = linkSpans(builder, { keys: this.keys, parentKeys: this.parentKeys, trackOf }, spec);
    // The ids' text is not needed past linking: references are looked up by indexByKey.
    this.keys.length = 0;
    this.parentKeys.length = 0;
    for (let i = 0; i < trackOf.length; i++) {
      const parent = parentOf[i];
      const { startNs, durNs } = timeOf(i);
      builder.placeSpan(i, { spanId: spanIds[i], trackId: trackOf[i], parentSpanId: parent >= 0 ? spanIds[parent] : null, startNs, durNs, depth: depths[i] });
      if (parent >= 0) builder.edge(spanIds[parent], spanIds[i], "child");
      const refs = this.refs.get(i);
      if (refs) for (const key of refs) onRef(indexByKey.get(key), i, spanIds);
      if (i % 16_384 === 16_383) await builder.checkpoint();
    }
  }
}
