/**
 * One answer shape for "what is the critical path of this run", whichever it holds — a compiled
 * workflow (agent tool calls) or span traces (OTLP, Jaeger, Chrome) — as the CLI's `--json`, tRPC,
 * MCP and the page all give it. Pure; the server and the page fill it from the same evidence rows,
 * so their numbers are equal by construction (a test checks the page against the CLI).
 *
 * - Workflow: the DAG of analysis/workflow/compile.ts under the recorded-duration model (each
 *   node's weight is its own time), see dag.ts. Path entries are placed at their earliest start.
 * - Span traces: per trace, Jaeger's walk (spans.ts). One trace is shown (`trace`; default: the
 *   one with the longest path, the first among equals): `critical_path_ns` and `path` are its
 *   longest root's, `sequential_ns` is its work done one span at a time (the sum of every walked
 *   span's exclusive time: its clipped duration less what its children cover, over all its roots,
 *   asynchronous followers included), and the bound is their ratio. `operations` sums each
 *   operation's exclusive time on the paths of all the run's traces, with per-trace p50/p95.
 */
import type { Workflow } from "../workflow/compile";
import type { EdgeRow, SpanRow } from "../workflow/from-spans";
import { buildDag, dagCriticalPath, whatIf, type Dag } from "./dag";
import { CriticalPathInputError } from "./errors";
import { unionLength } from "./intervals";
import { operationCriticalTimes, spanCriticalPaths, type FollowsFromLink, type RootCriticalPath, type SpanCriticalPaths, type SpanInput } from "./spans";

export interface PathEntry {
  /** The workflow node's id, or the span's id. */
  id: string;
  name: string;
  service: string;
  start_ns: number;
  end_ns: number;
  /** Its time on the path: a node's own time, a span's exclusive time on the path. */
  critical_ns: number;
}

export interface OperationEntry {
  service: string;
  operation: string;
  critical_ns: number;
  count: number;
  /** Span traces only: in how many traces, and the nearest-rank p50/p95 of per-trace time. */
  traces?: number;
  p50_ns?: number;
  p95_ns?: number;
}

export interface NodeTiming {
  id: string;
  name: string;
  service: string;
  duration_ns: number;
  earliest_start_ns: number;
  slack_ns: number;
  on_path: boolean;
}

export interface TraceSummary {
  trace_id: string;
  root_span_id: string;
  name: string;
  critical_path_ns: number;
}

export interface CriticalPathReport {
  kind: "workflow" | "spans";
  sequential_ns: number;
  critical_path_ns: number;
  /** sequential / critical path (1 when both are 0). */
  speedup_bound: number;
  path: PathEntry[];
  operations: OperationEntry[];
  /** Workflow: every node's timing, in node order. */
  nodes?: NodeTiming[];
  /** Spans: every root's path length, in order; `trace` is the one `path` shows. */
  traces?: TraceSummary[];
  trace?: string;
  what_if?: { node: string; duration_ns: number; recorded_ns: number };
}

// ---------------------------------------------------------------------------------------------
// Workflows

export interface WorkflowGraph {
  dag: Dag;
  ids: string[];
}

export function workflowGraph(workflow: Workflow): WorkflowGraph {
  const index = new Map(workflow.nodes.map((n, i) => [n.id, i]));
  const from = new Int32Array(workflow.edges.length);
  const to = new Int32Array(workflow.edges.length);
  workflow.edges.forEach((edge, k) => {
    from[k] = index.get(edge.from) ?? -1;
    to[k] = index.get(edge.to) ?? -1;
  });
  const dag = buildDag({ durations: workflow.nodes.map((n) => n.recorded.own_ns), from, to });
  return { dag, ids: workflow.nodes.map((n) => n.id) };
}

/** The workflow's critical path; with `whatIfNode`, as if that node took `whatIfNs`. */
export function workflowCriticalPathReport(workflow: Workflow, options: { whatIfNode?: string; whatIfNs?: number } = {}): CriticalPathReport {
  const { dag, ids } = workflowGraph(workflow);
  let durations = dag.durations;
  let whatIfEntry: CriticalPathReport["what_if"];
  let graph = dag;
  if (options.whatIfNode !== undefined) {
    const node = ids.indexOf(options.whatIfNode);
    if (node < 0) throw new CriticalPathInputError(`the what-if names no node of the workflow (${options.whatIfNode.slice(0, 64)})`, {});
    const ns = options.whatIfNs ?? 0;
    whatIf(dag, node, ns); // validates the duration
    durations = dag.durations.slice();
    durations[node] = ns;
    graph = { ...dag, durations };
    whatIfEntry = { node: ids[node], duration_ns: ns, recorded_ns: dag.durations[node] };
  }
  const result = dagCriticalPath(graph);
  const service = (i: number) => workflow.nodes[i].agent;
  const path: PathEntry[] = Array.from(result.path, (i) => ({
    id: ids[i],
    name: workflow.nodes[i].tool,
    service: service(i),
    start_ns: result.earliestStart[i],
    end_ns: result.earliestFinish[i],
    critical_ns: durations[i],
  }));
  const operations = new Map<string, OperationEntry>();
  for (const entry of path) {
    const key = `${entry.service}\u0000${entry.name}`;
    const op = operations.get(key) ?? { service: entry.service, operation: entry.name, critical_ns: 0, count: 0 };
    op.critical_ns += entry.critical_ns;
    op.count++;
    operations.set(key, op);
  }
  return {
    kind: "workflow",
    sequential_ns: result.sequentialNs,
    critical_path_ns: result.lengthNs,
    speedup_bound: result.speedupBound,
    path,
    operations: sortOperations([...operations.values()]),
    nodes: workflow.nodes.map((node, i) => ({
      id: node.id,
      name: node.tool,
      service: service(i),
      duration_ns: durations[i],
      earliest_start_ns: result.earliestStart[i],
      slack_ns: result.slack[i],
      on_path: result.onPath[i] === 1,
    })),
    ...(whatIfEntry ? { what_if: whatIfEntry } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Span traces

export interface TrackRow {
  track_id: number;
  process_name: string | null;
  thread_name: string | null;
}

/** Trace ids the importers keep in a span's args. */
const TRACE_ID_KEYS = ["otel.trace_id", "jaeger.trace_id", "trace_id"];

/**
 * Span inputs from evidence rows: the trace is the span's recorded trace id (OTLP, Jaeger) or its
 * track (a Chrome thread: each root there is a trace of its own); the service is the track's
 * process name (its thread name when it has none).
 */
export function spanInputsFromRows(rows: readonly SpanRow[], tracks: readonly TrackRow[], edges: readonly EdgeRow[]): { spans: SpanInput[]; links: FollowsFromLink[] } {
  const trackById = new Map(tracks.map((t) => [t.track_id, t]));
  const spans = [...rows]
    .sort((a, b) => a.span_id - b.span_id)
    .map((row): SpanInput => {
      const track = trackById.get(row.track_id);
      return {
        span_id: row.span_id,
        parent_span_id: row.parent_span_id,
        trace_id: traceIdOf(row),
        start_ns: row.start_ns,
        dur_ns: row.dur_ns,
        name: row.name,
        service: track?.process_name ?? track?.thread_name ?? `track ${row.track_id}`,
      };
    });
  const links = edges.filter((e) => e.kind === "follows_from").map((e) => ({ from_span_id: e.from_span_id, to_span_id: e.to_span_id }));
  return { spans, links };
}

function traceIdOf(row: SpanRow): string {
  if (row.trace_id) return row.trace_id;
  if (row.args !== null && row.args.includes("trace_id")) {
    try {
      const args = JSON.parse(row.args) as Record<string, unknown>;
      for (const key of TRACE_ID_KEYS) if (typeof args[key] === "string" && args[key] !== "") return args[key] as string;
    } catch {
      // Args that are no JSON name no trace.
    }
  }
  return `track:${row.track_id}`;
}

/** The critical path of a run's span traces (see the file comment); `trace` selects the trace shown. */
export function spanCriticalPathReport(spans: readonly SpanInput[], links: readonly FollowsFromLink[], options: { trace?: string } = {}): { report: CriticalPathReport; result: SpanCriticalPaths } {
  const result = spanCriticalPaths(spans, links);
  if (result.paths.length === 0) throw new CriticalPathInputError("the run holds no spans with a critical path", {});
  const byTrace = new Map<string, RootCriticalPath[]>();
  for (const path of result.paths) {
    const key = String(path.trace_id);
    byTrace.set(key, [...(byTrace.get(key) ?? []), path]);
  }
  let chosen: string;
  if (options.trace !== undefined) {
    if (!byTrace.has(options.trace)) throw new CriticalPathInputError(`the run has no trace ${options.trace.slice(0, 64)}`, {});
    chosen = options.trace;
  } else {
    chosen = String(result.paths[0].trace_id);
    for (const [trace, paths] of byTrace) if (longest(paths).critical_path_ns > longest(byTrace.get(chosen)!).critical_path_ns) chosen = trace;
  }
  const main = longest(byTrace.get(chosen)!);
  const path: PathEntry[] = main.spans
    .filter((on) => on.critical_ns > 0 || spans[on.span_index].dur_ns === 0)
    .map((on) => {
      const span = spans[on.span_index];
      return { id: String(span.span_id), name: span.name, service: span.service, start_ns: span.start_ns, end_ns: span.start_ns + span.dur_ns, critical_ns: on.critical_ns };
    });
  const report: CriticalPathReport = {
    kind: "spans",
    sequential_ns: exclusiveWork(spans, byTrace.get(chosen)!),
    critical_path_ns: main.critical_path_ns,
    speedup_bound: 1,
    path,
    operations: operationCriticalTimes(spans, result).map((op) => ({ ...op })),
    traces: result.paths.map((p) => ({ trace_id: String(p.trace_id), root_span_id: String(p.root_span_id), name: spans[p.root_index].name, critical_path_ns: p.critical_path_ns })),
    trace: chosen,
  };
  report.speedup_bound = main.critical_path_ns > 0 ? report.sequential_ns / main.critical_path_ns : 1;
  return { report, result };
}

function longest(paths: RootCriticalPath[]): RootCriticalPath {
  return paths.reduce((best, p) => (p.critical_path_ns > best.critical_path_ns ? p : best), paths[0]);
}

/**
 * The work of the walked spans done one at a time: per span, its clipped duration less the union
 * of its walked children's clipped intervals. Spans the walk left out (loops, outside their
 * parent) count nothing.
 */
function exclusiveWork(spans: readonly SpanInput[], roots: readonly RootCriticalPath[]): number {
  // Every walked span is under exactly one root; spans on a path are a subset, so recompute the
  // trees from parent links among spans that share a root's trace.
  const index = new Map<string, number>();
  spans.forEach((s, i) => {
    const key = `${String(s.trace_id)}\u0000${String(s.span_id)}`;
    if (!index.has(key)) index.set(key, i);
  });
  const parentOf = spans.map((s, i) => {
    if (s.parent_span_id === null) return -1;
    const p = index.get(`${String(s.trace_id)}\u0000${String(s.parent_span_id)}`);
    return p === undefined || p === i ? -1 : p;
  });
  const children: number[][] = spans.map(() => []);
  parentOf.forEach((p, i) => p >= 0 && children[p].push(i));
  let total = 0;
  const stack: { span: number; start: number; end: number }[] = roots.map((p) => ({ span: p.root_index, start: p.start_ns, end: p.end_ns }));
  while (stack.length > 0) {
    const { span, start, end } = stack.pop()!;
    const intervals: [number, number][] = [];
    for (const c of children[span]) {
      const s = Math.max(spans[c].start_ns, start);
      const t = Math.min(spans[c].start_ns + spans[c].dur_ns, end);
      if (s < t || (s === t && spans[c].dur_ns === 0 && s >= start && t <= end)) {
        intervals.push([s, t]);
        stack.push({ span: c, start: s, end: t });
      }
    }
    total += Math.max(0, end - start - unionLength(intervals));
  }
  return total;
}

function sortOperations(ops: OperationEntry[]): OperationEntry[] {
  return ops.sort((a, b) => b.critical_ns - a.critical_ns || (a.service < b.service ? -1 : a.service > b.service ? 1 : 0) || (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : 0));
}

/** The rows a run's report needs, and which report it gets: tool calls compile, other spans walk. */
export function runHoldsToolCalls(rows: readonly Pick<SpanRow, "category">[]): boolean {
  return rows.some((r) => r.category === "tool");
}
