import { spanIndexQuery, type WindowSpan } from "../../analysis/queries/trace-window";
import { EmberscopeError } from "../domain/errors";
import type { EvidenceReader } from "./engine";

/** trace_window's question (see traceWindowQuery), with the limit as asked of the rows. */
export interface SpanWindowQuestion {
  start_ns: number;
  end_ns: number;
  tracks: readonly number[] | null;
  /** Keyset: the last row already returned, as (track_id, start_ns, span_id, generation_id). */
  after: readonly [number, number, number, string] | null;
  limit: number;
}

/**
 * A run's spans in memory, answering trace_window's question without DuckDB: a window is a few
 * binary searches per track instead of a Parquet scan.
 *
 * Layout: columns (typed arrays, strings interned except args) sorted by track, then duration
 * class, then start, span and generation. A duration class holds spans of one power-of-two
 * duration range, so the spans of a class that can reach a window start at most the class's
 * longest duration before it. One process-long span then lengthens only its own class's search,
 * not every window's; within a class a window's search passes over at most the spans that end
 * before it (for properly nested spans, at most one per nesting depth).
 */
export interface SpanIndex {
  spans: number;
  /** Estimated heap bytes held (typed arrays, string slots and args text). */
  bytes: number;
  /** The rows, in trace_window's order; `seen.rows` counts the spans it looked at (returned or passed over). */
  window(question: SpanWindowQuestion, seen?: { rows: number }): WindowSpan[];
}

/**
 * Bytes per span: span, parent, start and duration (8 each), name, category, depth and status (4
 * each), generation (2) and the args slot (8). With args text, 95 B a span measured on a 360 k-span trace.
 */
const FIXED_BYTES_PER_SPAN = 8 * 4 + 4 * 4 + 2 + 8;
/** A V8 string's header and alignment, over its characters. */
const STRING_OVERHEAD = 24;

export interface SpanIndexLimits {
  /**
   * Runs with more spans are answered by SQL. Loading costs 5–8 µs a span (DuckDB decoding strings),
   * so a million spans load in 5–8 s: well inside the 15 s query budget, and about 100 MB (plus args).
   */
  maxSpans: number;
  /** Estimated bytes of all kept indexes; least recently used ones are dropped beyond it. */
  maxBytes: number;
}

export const DEFAULT_SPAN_INDEX_LIMITS: SpanIndexLimits = { maxSpans: 1_000_000, maxBytes: 512 * 1024 * 1024 };
let limits: SpanIndexLimits = { ...DEFAULT_SPAN_INDEX_LIMITS };

/** Changes the bounds (tests use small ones); returns the previous bounds. Kept indexes are dropped. */
export function setSpanIndexLimits(next: SpanIndexLimits): SpanIndexLimits {
  const previous = limits;
  limits = { ...next };
  indexes.clear();
  keptBytes = 0;
  return previous;
}

interface Kept {
  /** Resolves to null when the run is beyond the bounds (the caller asks SQL instead). */
  index: Promise<SpanIndex | null>;
  /** What `index` resolved to, once it has. */
  loaded?: SpanIndex | null;
  bytes: number;
}

/**
 * Indexes per (workspace, generations). A generation's files never change once published, so an
 * index stays exact across commits: a new import (a new HEAD) does not make it reload.
 */
const indexes = new Map<string, Kept>();
let keptBytes = 0;
let loads = 0;
let served = 0;
let loading = true;

/**
 * Whether loadedSpanIndex starts loads. One-shot CLI commands turn it off: a background load would
 * hold the process at exit for an index it never uses (servers keep it on).
 */
export function setSpanIndexLoading(enabled: boolean): void {
  loading = enabled;
}
/** Entries kept at most, counting runs found beyond the bounds (remembered so they are not measured again). */
const MAX_KEPT = 64;

/** Loads started and indexes handed out by loadedSpanIndex since the process began, and what is kept now. */
export function spanIndexStats(): { loads: number; served: number; kept: number; bytes: number } {
  return { loads, served, kept: indexes.size, bytes: keptBytes };
}

/**
 * The span index of a run's generations in the reader's commit, loading it on first use (callers
 * arriving meanwhile share the load). Null when the run is beyond the bounds. A failed load is
 * forgotten, so the next call tries again.
 */
export async function spanIndexFor(workspaceDir: string, reader: EvidenceReader, generations: readonly string[]): Promise<SpanIndex | null> {
  return keptIndex(workspaceDir, reader, generations).index;
}

/**
 * The run's span index if it is loaded; otherwise null, with its load started in the background.
 * Windows asked meanwhile go to SQL, so the first window of a large run does not wait seconds.
 */
export function loadedSpanIndex(workspaceDir: string, reader: EvidenceReader, generations: readonly string[]): SpanIndex | null {
  if (!loading) return null;
  const kept = keptIndex(workspaceDir, reader, generations);
  kept.index.catch(() => undefined); // a failed load is forgotten; the next call starts another
  if (kept.loaded) served++;
  return kept.loaded ?? null;
}

function keptIndex(workspaceDir: string, reader: EvidenceReader, generations: readonly string[]): Kept {
  const sorted = [...generations].sort();
  const key = `${workspaceDir}\u0000${sorted.join("\u0000")}`;
  const found = indexes.get(key);
  if (found) {
    indexes.delete(key);
    indexes.set(key, found);
    return found;
  }
  const kept: Kept = { index: loadSpanIndex(reader, sorted), bytes: 0 };
  indexes.set(key, kept);
  kept.index.then(
    (index) => {
      kept.loaded = index;
      if (indexes.get(key) !== kept) return;
      kept.bytes = index?.bytes ?? 0;
      keptBytes += kept.bytes;
      for (const [oldKey, old] of indexes) {
        if (keptBytes <= limits.maxBytes && indexes.size <= MAX_KEPT) break;
        if (old === kept) continue;
        indexes.delete(oldKey);
        keptBytes -= old.bytes;
      }
    },
    () => {
      if (indexes.get(key) === kept) indexes.delete(key);
    },
  );
  return kept;
}

/** Spans of the generations by their files' row counts (recorded at publication), before any load. */
function spanCount(reader: EvidenceReader, generations: readonly string[]): number {
  const wanted = new Set(generations);
  return reader.commit.generations
    .filter((g) => wanted.has(g.generation_id))
    .flatMap((g) => g.files.filter((f) => f.table === "spans"))
    .reduce((sum, f) => sum + f.row_count, 0);
}

/** A string table: each distinct value stored once, rows hold its number. */
class Interned {
  readonly values: string[] = [];
  private readonly numbers = new Map<string, number>();
  numberOf(value: string): number {
    let n = this.numbers.get(value);
    if (n === undefined) {
      n = this.values.length;
      this.values.push(value);
      this.numbers.set(value, n);
    }
    return n;
  }
}

/** Duration class: 0 for instants, else 1 + floor(log2(dur)), so a class's durations differ by less than 2×. */
function durationClass(durNs: number): number {
  return durNs < 1 ? 0 : Math.min(63, 1 + Math.floor(Math.log2(durNs)));
}

const toNumber = (v: unknown): number => (typeof v === "bigint" ? Number(v) : (v as number));

async function loadSpanIndex(reader: EvidenceReader, generations: string[]): Promise<SpanIndex | null> {
  const expected = spanCount(reader, generations);
  if (expected > limits.maxSpans) return null;
  loads += 1;
  // Rows arrive in trace_window's order (track, start, span, generation); columns as spanIndexQuery selects them.
  const n = expected;
  const gen = new Uint16Array(n);
  const spanId = new Float64Array(n);
  const track = new Int32Array(n);
  const parent = new Float64Array(n); // NaN: no parent
  const name = new Uint32Array(n);
  const category = new Int32Array(n); // -1: null
  const start = new Float64Array(n);
  const dur = new Float64Array(n);
  const depth = new Int32Array(n);
  const status = new Int32Array(n); // -1: null
  const args: (string | null)[] = new Array(n).fill(null);
  const texts = new Interned();
  let rows = 0;
  let bytes = n * FIXED_BYTES_PER_SPAN;
  let overflow = false;
  const scanned = reader.scan(spanIndexQuery, { generations }, (columns, count) => {
    if (rows + count > n || bytes > limits.maxBytes) {
      overflow = true;
      return false;
    }
    const [g, id, t, p, nm, cat, s, d, dp, st, ar] = columns;
    for (let i = 0; i < count; i++) {
      const r = rows + i;
      gen[r] = (g[i] as number) - 1;
      spanId[r] = toNumber(id[i]);
      track[r] = t[i] as number;
      parent[r] = p[i] === null ? NaN : toNumber(p[i]);
      name[r] = texts.numberOf(nm[i] as string);
      category[r] = cat[i] === null ? -1 : texts.numberOf(cat[i] as string);
      start[r] = s[i] as number;
      dur[r] = d[i] as number;
      depth[r] = dp[i] as number;
      status[r] = st[i] === null ? -1 : texts.numberOf(st[i] as string);
      const a = ar[i] as string | null;
      args[r] = a;
      if (a !== null) bytes += STRING_OVERHEAD + a.length;
    }
    rows += count;
  });
  // A load that outlasts the query budget would again on the next call: SQL answers this run instead.
  const outcome = await scanned.catch((error: unknown) => {
    if (error instanceof EmberscopeError && error.code === "QUERY_BUDGET_EXCEEDED") return "over budget";
    throw error;
  });
  bytes += texts.values.reduce((sum, v) => sum + STRING_OVERHEAD + v.length, 0);
  // Beyond the bounds, or the files' recorded row counts were not the rows: SQL answers this run.
  if (outcome === "over budget" || overflow || rows !== n || bytes > limits.maxBytes) return null;
  return buildIndex({ gen, spanId, track, parent, name, category, start, dur, depth, status, args }, n, generations, texts.values, bytes);
}

interface Columns {
  gen: Uint16Array;
  spanId: Float64Array;
  track: Int32Array;
  parent: Float64Array;
  name: Uint32Array;
  category: Int32Array;
  start: Float64Array;
  dur: Float64Array;
  depth: Int32Array;
  status: Int32Array;
  args: (string | null)[];
}

/** Reorders the rows by (track, duration class), keeping their order within each, and answers windows. */
function buildIndex(c: Columns, n: number, generations: string[], texts: string[], bytes: number): SpanIndex {
  // Segments: one per (track, duration class) present, in that order. Rows are sorted by track already.
  const segmentOf = new Int32Array(n);
  const segTrack: number[] = [];
  const segCount: number[] = [];
  const tracks: number[] = [];
  const trackFirstSegment: number[] = [];
  for (let from = 0; from < n; ) {
    const t = c.track[from];
    let to = from;
    while (to < n && c.track[to] === t) to++;
    const classSegment = new Map<number, number>();
    for (let r = from; r < to; r++) classSegment.set(durationClass(c.dur[r]), 0);
    tracks.push(t);
    trackFirstSegment.push(segTrack.length);
    for (const k of [...classSegment.keys()].sort((a, b) => a - b)) {
      classSegment.set(k, segTrack.length);
      segTrack.push(t);
      segCount.push(0);
    }
    for (let r = from; r < to; r++) {
      const s = classSegment.get(durationClass(c.dur[r]))!;
      segmentOf[r] = s;
      segCount[s]++;
    }
    from = to;
  }
  trackFirstSegment.push(segTrack.length);
  const segments = segTrack.length;
  const trackIds = Int32Array.from(tracks);
  const segBegin = new Int32Array(segments + 1);
  for (let s = 0; s < segments; s++) segBegin[s + 1] = segBegin[s] + segCount[s];
  const segMaxDur = new Float64Array(segments);
  const fill = segBegin.slice(0, segments);
  const order = new Uint32Array(n);
  for (let r = 0; r < n; r++) {
    const s = segmentOf[r];
    order[fill[s]++] = r;
    if (c.dur[r] > segMaxDur[s]) segMaxDur[s] = c.dur[r];
  }
  const permute = <A extends Float64Array | Int32Array | Uint32Array | Uint16Array>(from: A): A => {
    const to = new (from.constructor as new (n: number) => A)(n);
    for (let i = 0; i < n; i++) to[i] = from[order[i]];
    return to;
  };
  const gen = permute(c.gen);
  const spanId = permute(c.spanId);
  const parent = permute(c.parent);
  const name = permute(c.name);
  const category = permute(c.category);
  const start = permute(c.start);
  const dur = permute(c.dur);
  const depth = permute(c.depth);
  const status = permute(c.status);
  const args: (string | null)[] = new Array(n);
  for (let i = 0; i < n; i++) args[i] = c.args[order[i]];

  /** First row in [lo, hi) starting at or after `at`. */
  function firstFrom(lo: number, hi: number, at: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (start[mid] < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether row a comes before row b in (start, span, generation) order. */
  function before(a: number, b: number): boolean {
    return start[a] !== start[b] ? start[a] < start[b] : spanId[a] !== spanId[b] ? spanId[a] < spanId[b] : gen[a] < gen[b];
  }

  function rowOf(r: number, trackId: number): WindowSpan {
    return {
      generation_id: generations[gen[r]],
      span_id: spanId[r],
      track_id: trackId,
      parent_span_id: Number.isNaN(parent[r]) ? null : parent[r],
      name: texts[name[r]],
      category: category[r] < 0 ? null : texts[category[r]],
      start_ns: start[r],
      dur_ns: dur[r],
      depth: depth[r],
      status: status[r] < 0 ? null : texts[status[r]],
      args: args[r],
    };
  }

  function window(q: SpanWindowQuestion, seen?: { rows: number }): WindowSpan[] {
    const out: WindowSpan[] = [];
    const wanted = q.tracks === null ? null : new Set(q.tracks);
    const next: number[] = [];
    const ends: number[] = [];
    let t = 0;
    for (let hi = trackIds.length; q.after && t < hi; ) {
      const mid = (t + hi) >>> 1;
      if (trackIds[mid] < q.after[0]) t = mid + 1;
      else hi = mid;
    }
    for (; t < trackIds.length && out.length < q.limit; t++) {
      const trackId = trackIds[t];
      if (wanted && !wanted.has(trackId)) continue;
      // On the cursor's own track only rows after (start, span, generation) remain; start bounds the search.
      const keyset = q.after && trackId === q.after[0] ? q.after : null;
      const qualifies = (r: number) =>
        start[r] + dur[r] >= q.start_ns &&
        (!keyset || start[r] > keyset[1] || (start[r] === keyset[1] && (spanId[r] > keyset[2] || (spanId[r] === keyset[2] && generations[gen[r]] > keyset[3]))));
      next.length = 0;
      ends.length = 0;
      for (let s = trackFirstSegment[t]; s < trackFirstSegment[t + 1]; s++) {
        const from = keyset ? Math.max(q.start_ns - segMaxDur[s], keyset[1]) : q.start_ns - segMaxDur[s];
        const first = firstFrom(segBegin[s], segBegin[s + 1], from);
        const end = firstFrom(first, segBegin[s + 1], q.end_ns);
        let r = first;
        while (r < end && !qualifies(r)) r++;
        next.push(r);
        ends.push(end);
        if (seen) seen.rows -= first;
      }
      // Merge the classes' runs in (start, span, generation) order up to the limit.
      while (out.length < q.limit) {
        let best = -1;
        for (let k = 0; k < next.length; k++) {
          if (next[k] < ends[k] && (best < 0 || before(next[k], next[best]))) best = k;
        }
        if (best < 0) break;
        out.push(rowOf(next[best], trackId));
        let r = next[best] + 1;
        while (r < ends[best] && !qualifies(r)) r++;
        next[best] = r;
      }
      if (seen) for (let k = 0; k < next.length; k++) seen.rows += next[k];
    }
    return out;
  }

  return { spans: n, bytes, window };
}
