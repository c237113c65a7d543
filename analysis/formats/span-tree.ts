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

/** `column`, or a copy twice as long when `index` is past its end (per-span columns of the trace importers). */
export function withRoom<T extends Int32Array | Float64Array | BigUint64Array>(column: T, index: number): T {
  if (index < column.length) return column;
  const grown = new (column.constructor as new (length: number) => T)(Math.max(column.length * 2, index + 1));
  grown.set(column as never);
  return grown;
}

/** A span key's last part when it is 16 lowercase hex digits (a 64-bit span id, as OTLP and Jaeger write them). */
const HEX_SPAN_ID = /\/[0-9a-f]{16}$/;
const NO_KEY = -1;
const TEXT_KEY = -2;

/**
 * Span keys (`<trace>/<span>`), many millions of them, held compactly: a key whose span part is 16
 * lowercase hex digits is its trace's number (each trace's text once) and the span id's two 32-bit
 * halves; any other key is kept as text. Two keys are equal exactly when their texts are: a text
 * splits into those parts in one way only, and a key kept as text has no such split.
 */
class SpanKeyColumn {
  private trace = new Int32Array(1024);
  private high = new Int32Array(1024);
  private low = new Int32Array(1024);
  /** Keys of no hex span part, by entry. */
  private readonly texts = new Map<number, string>();
  length = 0;

  constructor(private readonly traces: Map<string, number>) {}

  push(key: string | null): void {
    const at = this.length++;
    this.trace = withRoom(this.trace, at);
    this.high = withRoom(this.high, at);
    this.low = withRoom(this.low, at);
    if (key === null) {
      this.trace[at] = NO_KEY;
      return;
    }
    const parts = splitKey(key, this.traces, true);
    if (parts === null) {
      this.trace[at] = TEXT_KEY;
      this.texts.set(at, key);
      return;
    }
    this.trace[at] = parts.trace;
    this.high[at] = parts.high;
    this.low[at] = parts.low;
  }

  has(at: number): boolean {
    return this.trace[at] !== NO_KEY;
  }

  /** Entry `at`'s key in `index`: the span it names, or undefined. */
  find(at: number, index: SpanIndex): number | undefined {
    const trace = this.trace[at];
    if (trace === TEXT_KEY) return index.texts.get(this.texts.get(at)!);
    return index.find(trace, this.high[at], this.low[at]);
  }

  /** Makes entry `at` the span `span`'s key in `index` unless the key is there already; false then. */
  add(at: number, span: number, index: SpanIndex): boolean {
    const trace = this.trace[at];
    if (trace === TEXT_KEY) {
      const text = this.texts.get(at)!;
      if (index.texts.has(text)) return false;
      index.texts.set(text, span);
      return true;
    }
    return index.add(trace, this.high[at], this.low[at], span);
  }

  release(): void {
    this.trace = this.high = this.low = new Int32Array(0);
    this.texts.clear();
  }
}

/** A key's trace number and span id halves; null when its span part is not 16 lowercase hex digits. `add`: a trace not seen gets a number. */
function splitKey(key: string, traces: Map<string, number>, add: boolean): { trace: number; high: number; low: number } | null {
  if (key.length < 17 || !HEX_SPAN_ID.test(key)) return null;
  const traceText = key.slice(0, key.length - 17);
  let trace = traces.get(traceText);
  if (trace === undefined) {
    if (!add) return { trace: -3, high: 0, low: 0 };
    traces.set(traceText, (trace = traces.size));
  }
  return { trace, high: parseInt(key.slice(key.length - 16, key.length - 8), 16) | 0, low: parseInt(key.slice(key.length - 8), 16) | 0 };
}

/** Span by key: an open-addressing table of span numbers over the key columns' numbers, and a map for text keys. */
class SpanIndex {
  readonly texts = new Map<string, number>();
  /** Per slot: span + 1 (0: empty), and the key's three numbers. */
  private readonly slots: Int32Array;
  private readonly mask: number;
  constructor(count: number) {
    let size = 1024;
    while (size < count * 2) size *= 2;
    this.slots = new Int32Array(size * 4);
    this.mask = size - 1;
  }
  private slotOf(trace: number, high: number, low: number): number {
    let h = Math.imul(trace ^ 0x9e3779b9, 0x85ebca6b) ^ high;
    h = Math.imul(h ^ (h >>> 15), 0xc2b2ae35) ^ low;
    h = Math.imul(h ^ (h >>> 13), 0x27d4eb2f);
    return (h ^ (h >>> 16)) & this.mask;
  }
  find(trace: number, high: number, low: number): number | undefined {
    const slots = this.slots;
    for (let slot = this.slotOf(trace, high, low); ; slot = (slot + 1) & this.mask) {
      const at = slot << 2;
      if (slots[at] === 0) return undefined;
      if (slots[at + 1] === trace && slots[at + 2] === high && slots[at + 3] === low) return slots[at] - 1;
    }
  }
  add(trace: number, high: number, low: number, span: number): boolean {
    const slots = this.slots;
    for (let slot = this.slotOf(trace, high, low); ; slot = (slot + 1) & this.mask) {
      const at = slot << 2;
      if (slots[at] === 0) {
        slots[at] = span + 1;
        slots[at + 1] = trace;
        slots[at + 2] = high;
        slots[at + 3] = low;
        return true;
      }
      if (slots[at + 1] === trace && slots[at + 2] === high && slots[at + 3] === low) return false;
    }
  }
  /** The span a key names, by its text (references: few). */
  findText(key: string, traces: Map<string, number>): number | undefined {
    const parts = splitKey(key, traces, false);
    if (parts === null) return this.texts.get(key);
    return parts.trace < 0 ? undefined : this.find(parts.trace, parts.high, parts.low);
  }
}

/**
 * The spans of a trace whose parents and references may come anywhere in the file (OTLP, Jaeger).
 * Each span's text (name, category, status, args) goes to the builder as a draft as soon as it is
 * read, so that millions of spans' strings do not wait in memory for the end of the input; what
 * linking and placing need stays, in columns: the keys (SpanKeyColumn), the track, and the
 * importer's own times. A span's key is `<trace>/<span id>`; the first of a duplicated key is the
 * one referred to; a parent not in the file makes a root.
 */
export class DraftedSpans {
  private readonly traces = new Map<string, number>();
  private readonly keys = new SpanKeyColumn(this.traces);
  private readonly parentKeys = new SpanKeyColumn(this.traces);
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
    this.trackOf = withRoom(this.trackOf, index);
    this.trackOf[index] = span.trackId;
    if (span.refs.length > 0) this.refs.set(index, span.refs);
    return index;
  }

  /**
   * Places every span, in the order read, at the times `timeOf` gives its index (ns from the
   * file's origin), with a `child` edge from its parent; `onRef` is told each reference: the index
   * of the span referred to (undefined when not in the file), the span's index and the span ids.
   * `prefix` names the importer's limitations (`<prefix>_DUPLICATE_SPAN`, `_PARENT_MISSING`,
   * `_PARENT_CYCLE`); `refersTo` says what refers to span ids in its format.
   */
  async place(
    spec: { prefix: string; refersTo: string },
    timeOf: (index: number) => { startNs: number; durNs: number },
    onRef: (from: number | undefined, index: number, spanIds: Int32Array) => void,
  ): Promise<void> {
    const { builder, keys, parentKeys } = this;
    const count = this.length;
    const trackOf = this.trackOf.subarray(0, count);
    const index = new SpanIndex(count);
    const spanIds = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      if (keys.has(i) && !keys.add(i, i, index)) builder.limit(`${spec.prefix}_DUPLICATE_SPAN`, `Some span ids appeared more than once; ${spec.refersTo} refer to the first.`);
      spanIds[i] = builder.allocateSpanId();
    }
    keys.release();
    const parentOf = new Int32Array(count).fill(-1);
    for (let i = 0; i < count; i++) {
      if (!parentKeys.has(i)) continue;
      const parent = parentKeys.find(i, index);
      if (parent === undefined) builder.limit(`${spec.prefix}_PARENT_MISSING`, "Some spans' parents are not in the file; they are shown as roots (depth 0).");
      else if (parent !== i) parentOf[i] = parent;
    }
    parentKeys.release();
    const depths = spanDepths(trackOf, parentOf, () => builder.limit(`${spec.prefix}_PARENT_CYCLE`, "Some spans were (indirectly) their own parents; the cycle was cut there."));
    for (let i = 0; i < count; i++) {
      const parent = parentOf[i];
      const { startNs, durNs } = timeOf(i);
      builder.placeSpan(i, { spanId: spanIds[i], trackId: trackOf[i], parentSpanId: parent >= 0 ? spanIds[parent] : null, startNs, durNs, depth: depths[i] });
      if (parent >= 0) builder.edge(spanIds[parent], spanIds[i], "child");
      const refs = this.refs.get(i);
      if (refs) for (const key of refs) onRef(index.findText(key, this.traces), i, spanIds);
      if (i % 16_384 === 16_383) await builder.checkpoint();
    }
  }
}
