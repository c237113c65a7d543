/**
 * The critical path of span traces, as Jaeger UI and Grafana Tempo draw it, and its aggregate over
 * the traces of a run, as Uber's CRISP reports it.
 *
 * Per root: every child is clipped to its parent's (clipped) interval; the walk starts at the
 * root's end and repeatedly steps into the last-finishing child that ends at or before the current
 * point, continuing in the parent from that child's start. Time a parent spends on the path
 * outside the children it stepped into is its own (exclusive) time on the path. Overlapping
 * siblings: only the ones the walk steps into are on the path (a sibling ending inside a taken one
 * is not). Children walk in order of clipped end (latest first), then clipped start (latest first,
 * so a zero-duration span at the end is taken before a long one ending at the same time), then
 * input order.
 *
 * Roots and links:
 * - a span without a parent, or whose parent is not in its trace, is a root (`parent_missing`
 *   says which); parent links that loop never reach a root and are left out (counted);
 * - a child lying wholly outside its parent's interval (it starts after the parent ends or ends
 *   before it starts) is left out with its subtree (counted); a zero-duration child at either
 *   edge of its parent is inside;
 * - follows_from: the span a follower follows did not wait for it (OpenTracing's definition), so,
 *   as in Jaeger UI, a follower is never on its cause's path. Where Jaeger then drops the follower
 *   and its subtree, a follower without a parent here starts a path of its own (a root, with
 *   `follows_span_id`), so asynchronous work still has its path and counts in the aggregate. A
 *   span with a parent in its trace stays that parent's child whatever its links say.
 *
 * Iterative throughout (explicit stacks), typed arrays per span, so a deep or wide trace does not
 * exhaust the call stack.
 */
import { frameKey } from "../evidence/builder";
import { stableKey } from "../evidence/hash";
import type { FlameInputNode } from "../flame/tree";
import { CriticalPathInputError } from "./errors";

export type SpanId = string | number;

export interface SpanInput {
  span_id: SpanId;
  /** The enclosing span (child-of), or null. */
  parent_span_id: SpanId | null;
  /** The trace (or track) the span belongs to: parents and links are looked up within it. */
  trace_id: SpanId;
  start_ns: number;
  dur_ns: number;
  name: string;
  service: string;
}

/** A follows_from edge: `to_span_id` follows from (was caused by, but not awaited by) `from_span_id`. */
export interface FollowsFromLink {
  from_span_id: SpanId;
  to_span_id: SpanId;
}

/** A stretch of the path during which `span_id` itself (not a child) was working. */
export interface CriticalSegment {
  span_id: SpanId;
  /** The span's index in the input list. */
  span_index: number;
  start_ns: number;
  end_ns: number;
}

export interface SpanOnPath {
  span_id: SpanId;
  span_index: number;
  /** The input index of its parent on the path; -1 for the path's root. */
  parent_index: number;
  /** The span's exclusive time on the path: the sum of its segments. */
  critical_ns: number;
}

export interface RootCriticalPath {
  trace_id: SpanId;
  root_span_id: SpanId;
  root_index: number;
  /** The root names a parent that is not in its trace. */
  parent_missing: boolean;
  /** The span this root follows from (in its trace), or null. */
  follows_span_id: SpanId | null;
  start_ns: number;
  end_ns: number;
  /** end_ns − start_ns: the segments' lengths add up to it. */
  critical_path_ns: number;
  /** The path in time order; zero-length only for zero-duration spans. */
  segments: CriticalSegment[];
  /** Every span the walk stepped into (with or without time of its own), by start, parents first. */
  spans: SpanOnPath[];
}

export interface SpanCriticalPaths {
  /** One per root: traces in order of first appearance, roots of a trace by start, then input order. */
  paths: RootCriticalPath[];
  /** Spans left out because their parent links loop (no root reaches them). */
  spans_in_parent_cycles: number;
  /** Spans left out because they, or an ancestor, lie wholly outside their parent's interval. */
  spans_outside_parent: number;
}

const KEPT = 1;
const OUTSIDE = 2;

/** The critical path from each root of each trace. */
export function spanCriticalPaths(spans: readonly SpanInput[], links: readonly FollowsFromLink[] = []): SpanCriticalPaths {
  const n = spans.length;
  const byTrace = new Map<SpanId, Map<SpanId, number>>();
  /** A link names spans by id only (ids are unique within a generation): the first span with the id. */
  const byId = new Map<SpanId, number>();
  const traceOrder: SpanId[] = [];
  for (let i = 0; i < n; i++) {
    const span = spans[i];
    if (!Number.isFinite(span.start_ns)) throw new CriticalPathInputError("a span's start is not a finite number", { span: i });
    if (!(span.dur_ns >= 0) || !Number.isFinite(span.dur_ns)) throw new CriticalPathInputError("a span's duration is not a finite number ≥ 0", { span: i });
    let ids = byTrace.get(span.trace_id);
    if (!ids) {
      byTrace.set(span.trace_id, (ids = new Map()));
      traceOrder.push(span.trace_id);
    }
    if (!ids.has(span.span_id)) ids.set(span.span_id, i);
    if (!byId.has(span.span_id)) byId.set(span.span_id, i);
  }
  const indexOf = (trace: SpanId, id: SpanId | null) => (id === null ? -1 : (byTrace.get(trace)?.get(id) ?? -1));

  const parent = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const p = indexOf(spans[i].trace_id, spans[i].parent_span_id);
    if (p !== i) parent[i] = p;
  }
  const follows = new Int32Array(n).fill(-1);
  for (const link of links) {
    const to = byId.get(link.to_span_id) ?? -1;
    if (to < 0 || parent[to] >= 0 || follows[to] >= 0) continue;
    // The cause is looked up in the follower's trace.
    const from = indexOf(spans[to].trace_id, link.from_span_id);
    if (from >= 0 && from !== to) follows[to] = from;
  }

  // Children lists (CSR by parent), then clipped intervals top-down from the roots.
  const childStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) if (parent[i] >= 0) childStart[parent[i] + 1]++;
  for (let i = 0; i < n; i++) childStart[i + 1] += childStart[i];
  const children = new Int32Array(childStart[n]);
  const fill = childStart.slice(0, n);
  for (let i = 0; i < n; i++) if (parent[i] >= 0) children[fill[parent[i]]++] = i;

  const clippedStart = new Float64Array(n);
  const clippedEnd = new Float64Array(n);
  const depth = new Int32Array(n);
  const state = new Uint8Array(n); // 0 until reached from a root
  const queue = new Int32Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) {
    if (parent[i] >= 0) continue;
    clippedStart[i] = spans[i].start_ns;
    clippedEnd[i] = spans[i].start_ns + spans[i].dur_ns;
    state[i] = KEPT;
    queue[tail++] = i;
  }
  let outside = 0;
  for (let head = 0; head < tail; head++) {
    const p = queue[head];
    for (let c = childStart[p]; c < childStart[p + 1]; c++) {
      const k = children[c];
      queue[tail++] = k;
      depth[k] = depth[p] + 1;
      const start = Math.max(spans[k].start_ns, clippedStart[p]);
      const end = Math.min(spans[k].start_ns + spans[k].dur_ns, clippedEnd[p]);
      if (state[p] === KEPT && (start < end || (start === end && spans[k].dur_ns === 0))) {
        state[k] = KEPT;
        clippedStart[k] = start;
        clippedEnd[k] = end;
      } else {
        state[k] = OUTSIDE;
        outside++;
      }
    }
  }
  const inCycles = n - tail;

  // Each parent's kept children in walk order: latest clipped end, then latest clipped start, then input order.
  const walkStart = new Int32Array(n + 1);
  const walk = new Int32Array(children.length);
  let w = 0;
  for (let p = 0; p < n; p++) {
    walkStart[p] = w;
    for (let c = childStart[p]; c < childStart[p + 1]; c++) if (state[children[c]] === KEPT) walk[w++] = children[c];
    if (w - walkStart[p] > 1) {
      const sorted = Array.from(walk.subarray(walkStart[p], w)).sort((a, b) => clippedEnd[b] - clippedEnd[a] || clippedStart[b] - clippedStart[a] || a - b);
      walk.set(sorted, walkStart[p]);
    }
  }
  walkStart[n] = w;

  const roots: number[] = [];
  for (let i = 0; i < n; i++) if (parent[i] < 0) roots.push(i);
  const traceRank = new Map(traceOrder.map((t, r) => [t, r]));
  roots.sort((a, b) => traceRank.get(spans[a].trace_id)! - traceRank.get(spans[b].trace_id)! || spans[a].start_ns - spans[b].start_ns || a - b);

  const critical = new Float64Array(n);
  const paths = roots.map((root) => walkFrom(root, spans, { clippedStart, clippedEnd, depth, parent, walkStart, walk, critical }));
  for (const path of paths) {
    const f = follows[path.root_index];
    path.parent_missing = spans[path.root_index].parent_span_id !== null;
    path.follows_span_id = f >= 0 ? spans[f].span_id : null;
  }
  return { paths, spans_in_parent_cycles: inCycles, spans_outside_parent: outside };
}

interface WalkTables {
  clippedStart: Float64Array;
  clippedEnd: Float64Array;
  depth: Int32Array;
  parent: Int32Array;
  walkStart: Int32Array;
  walk: Int32Array;
  /** Per span, its exclusive time on the path (each span is under one root, so never reset). */
  critical: Float64Array;
}

/** Jaeger's walk from one root's end, with an explicit stack: segments come out latest first. */
function walkFrom(root: number, spans: readonly SpanInput[], t: WalkTables): RootCriticalPath {
  const { clippedStart, clippedEnd, walkStart, walk, critical } = t;
  const reversed: CriticalSegment[] = [];
  const onPath: number[] = [root];
  const emit = (span: number, start: number, end: number) => {
    reversed.push({ span_id: spans[span].span_id, span_index: span, start_ns: start, end_ns: end });
    critical[span] += end - start;
  };
  const stackSpan: number[] = [root];
  const stackAt: number[] = [clippedEnd[root]];
  const stackNext: number[] = [walkStart[root]];
  while (stackSpan.length > 0) {
    const top = stackSpan.length - 1;
    const span = stackSpan[top];
    const at = stackAt[top];
    let next = stackNext[top];
    while (next < walkStart[span + 1] && clippedEnd[walk[next]] > at) next++;
    if (next < walkStart[span + 1]) {
      const child = walk[next];
      stackNext[top] = next + 1;
      if (clippedEnd[child] < at) emit(span, clippedEnd[child], at);
      stackAt[top] = clippedStart[child];
      onPath.push(child);
      stackSpan.push(child);
      stackAt.push(clippedEnd[child]);
      stackNext.push(walkStart[child]);
    } else {
      if (at > clippedStart[span] || clippedStart[span] === clippedEnd[span]) emit(span, clippedStart[span], at);
      stackSpan.pop();
      stackAt.pop();
      stackNext.pop();
    }
  }
  onPath.sort((a, b) => clippedStart[a] - clippedStart[b] || t.depth[a] - t.depth[b] || a - b);
  return {
    trace_id: spans[root].trace_id,
    root_span_id: spans[root].span_id,
    root_index: root,
    parent_missing: false,
    follows_span_id: null,
    start_ns: clippedStart[root],
    end_ns: clippedEnd[root],
    critical_path_ns: clippedEnd[root] - clippedStart[root],
    segments: reversed.reverse(),
    spans: onPath.map((i) => ({ span_id: spans[i].span_id, span_index: i, parent_index: i === root ? -1 : t.parent[i], critical_ns: critical[i] })),
  };
}

// ---------------------------------------------------------------------------------------------
// Aggregation over the traces of a run (CRISP)

export interface OperationCriticalTime {
  service: string;
  operation: string;
  /** The operation's exclusive time on the paths, summed over all traces. */
  critical_ns: number;
  /** How many of its spans are on the paths. */
  count: number;
  /** In how many traces it is on a path. */
  traces: number;
  /** Nearest-rank percentiles of its per-trace critical time, over the traces where it is on a path. */
  p50_ns: number;
  p95_ns: number;
}

const operationKey = (span: SpanInput) => `${span.service}\u0000${span.name}`;

/**
 * Per operation (service + span name): its critical time over all paths, and the p50/p95 of its
 * per-trace critical time (the sum over the paths of all that trace's roots, followers included).
 * Heaviest first; ties by service, then operation.
 */
export function operationCriticalTimes(spans: readonly SpanInput[], result: SpanCriticalPaths): OperationCriticalTime[] {
  const perTrace = new Map<string, { service: string; operation: string; count: number; byTrace: Map<SpanId, number> }>();
  for (const path of result.paths) {
    for (const on of path.spans) {
      const span = spans[on.span_index];
      const key = operationKey(span);
      let entry = perTrace.get(key);
      if (!entry) perTrace.set(key, (entry = { service: span.service, operation: span.name, count: 0, byTrace: new Map() }));
      entry.count++;
      entry.byTrace.set(path.trace_id, (entry.byTrace.get(path.trace_id) ?? 0) + on.critical_ns);
    }
  }
  const rows: OperationCriticalTime[] = [];
  for (const entry of perTrace.values()) {
    const values = Array.from(entry.byTrace.values()).sort((a, b) => a - b);
    rows.push({
      service: entry.service,
      operation: entry.operation,
      critical_ns: values.reduce((a, b) => a + b, 0),
      count: entry.count,
      traces: values.length,
      p50_ns: nearestRank(values, 0.5),
      p95_ns: nearestRank(values, 0.95),
    });
  }
  return rows.sort((a, b) => b.critical_ns - a.critical_ns || compare(a.service, b.service) || compare(a.operation, b.operation));
}

/** The smallest value with at least fraction `q` of the values at or below it. */
export function nearestRank(sortedAscending: readonly number[], q: number): number {
  if (sortedAscending.length === 0) return 0;
  return sortedAscending[Math.max(0, Math.ceil(q * sortedAscending.length) - 1)];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * CRISP's calling-context view as flame-graph input: each span's exclusive time on a path, on the
 * stack of operations from its root, summed over all paths. Frames are operations (name, with the
 * service as module, so colours are stable per service); node ids hash the stack, so the same
 * calling context keeps its id across runs. Contexts with no time are left out.
 */
export function criticalPathFlame(spans: readonly SpanInput[], result: SpanCriticalPaths): FlameInputNode[] {
  const nodes: FlameInputNode[] = [];
  const parentOf: number[] = [];
  const childByKey = new Map<string, number>();
  const frameKeys = new Map<string, string>();
  for (const path of result.paths) {
    const nodeOfSpan = new Map<number, number>();
    for (const on of path.spans) {
      const span = spans[on.span_index];
      const parentNode = on.parent_index < 0 ? -1 : nodeOfSpan.get(on.parent_index)!;
      const opKey = operationKey(span);
      let key = frameKeys.get(opKey);
      if (key === undefined) frameKeys.set(opKey, (key = frameKey({ name: span.name, module: span.service, kind: "other" })));
      const lookup = `${parentNode}\u0000${key}`;
      let node = childByKey.get(lookup);
      if (node === undefined) {
        node = nodes.length;
        childByKey.set(lookup, node);
        const parentId = parentNode < 0 ? null : nodes[parentNode].node_id;
        nodes.push({ node_id: stableKey(`${parentId ?? ""}\u0000${key}`), parent_id: parentId, frame_key: key, name: span.name, file: null, line: null, module: span.service, kind: "other", self: 0, total: 0 });
        parentOf.push(parentNode);
      }
      nodes[node].self += on.critical_ns;
      nodeOfSpan.set(on.span_index, node);
    }
  }
  // Children are created after their parents: one reverse pass sums totals.
  for (let i = nodes.length - 1; i >= 0; i--) {
    nodes[i].total += nodes[i].self;
    if (parentOf[i] >= 0) nodes[parentOf[i]].total += nodes[i].total;
  }
  return nodes.filter((node) => node.total > 0);
}
