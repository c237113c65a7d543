import { spanTotalsQuery } from "../../analysis/queries/summary";
import { traceFlowsQuery } from "../../analysis/queries/trace-flows";
import { spanExtentQuery, traceWindowQuery } from "../../analysis/queries/trace-window";
import { tracksQuery } from "../../analysis/queries/trace-window";
import type { Flow, Span, TraceSource, TraceSummary, Track } from "../trace/trace-data";
import type { Manifest } from "./bundle";
import { ask, flameTree, runGenerations } from "./evidence";

/**
 * The trace window's evidence read from the export itself: the server's trace_window, span_totals,
 * tracks and trace_flows queries run by DuckDB-WASM over the file's Parquet, with the same keyset
 * paging (the cursor is the last row's (track, start, span, generation), not signed: nothing here
 * is a server to protect).
 */
export function offlineTraceSource(manifest: Manifest): TraceSource {
  const extents = new Map<string, Promise<number>>();
  const longDur = (commitId: string, generations: string[]) => {
    const key = `${commitId}\u0000${generations.join(",")}`;
    let extent = extents.get(key);
    if (!extent) {
      extent = ask<{ long_dur_ns: number | null }>(manifest, commitId, spanExtentQuery, { generations }).then((r) => r[0]?.long_dur_ns ?? Number.MAX_SAFE_INTEGER);
      extents.set(key, extent);
    }
    return extent;
  };
  return {
    async summary(runId, commitId): Promise<TraceSummary> {
      const generations = runGenerations(manifest, commitId, runId);
      if (!generations.length) return { spans: null, tracks: [], commit_id: commitId };
      const [spans] = await ask<NonNullable<TraceSummary["spans"]>>(manifest, commitId, spanTotalsQuery, { generations });
      const tracks = await ask<Track>(manifest, commitId, tracksQuery, { generations });
      return { spans: spans ?? null, tracks, commit_id: commitId };
    },
    async windowPage(a) {
      const generations = runGenerations(manifest, a.commitId, a.runId);
      if (!generations.length) return { spans: [], next_cursor: null, commit_id: a.commitId };
      const after = a.cursor ? (JSON.parse(a.cursor) as [number, number, number, string]) : null;
      const rows = await ask<Span>(manifest, a.commitId, traceWindowQuery, {
        generations,
        start_ns: a.start_ns,
        end_ns: a.end_ns,
        long_dur_ns: await longDur(a.commitId, generations),
        tracks: [a.track],
        after_track: after?.[0] ?? null,
        after_start: after?.[1] ?? null,
        after_span: after?.[2] ?? null,
        after_generation: after?.[3] ?? null,
        limit: a.limit + 1,
      });
      const spans = rows.slice(0, a.limit);
      const last = spans[spans.length - 1];
      return { spans, next_cursor: rows.length > a.limit ? JSON.stringify([last.track_id, last.start_ns, last.span_id, last.generation_id]) : null, commit_id: a.commitId };
    },
    async flows(a) {
      const generations = runGenerations(manifest, a.commitId, a.runId);
      if (!generations.length) return { flows: [], truncated: false };
      const rows = await ask<Flow>(manifest, a.commitId, traceFlowsQuery, { generations, start_ns: a.start_ns, end_ns: a.end_ns, limit: a.limit + 1 });
      return { flows: rows.slice(0, a.limit), truncated: rows.length > a.limit };
    },
    async rangeFlame(a) {
      const tree = await flameTree(manifest, a.commitId, a.runId, { budget: a.budget, start_ns: a.start_ns, end_ns: a.end_ns });
      const status = { state: tree && tree.nodes.length ? ("available" as const) : ("empty" as const), reason: tree ? null : "The export carries no samples of this run.", fill_with: null };
      return { nodes: tree?.nodes ?? [], metric: tree?.metric.name ?? null, unit: tree?.metric.unit ?? null, commit_id: a.commitId, status };
    },
  };
}
