import { useEffect, useMemo, useState, type ReactNode } from "react";
import { runHoldsToolCalls, spanCriticalPathReport, spanInputsFromRows, type CriticalPathReport } from "../../analysis/critical-path/report";
import { formatValue } from "../../analysis/flame/format";
import { criticalPathEdgesQuery, criticalPathSpansQuery } from "../../analysis/queries/critical-path";
import { tracksQuery } from "../../analysis/queries/trace-window";
import type { EdgeRow, SpanRow } from "../../analysis/workflow/from-spans";
import { CallTreeCell } from "../calltree/CallTreeCell";
import { CompareCell } from "../compare/CompareCell";
import { SandwichCell, type NeighbourRow } from "../sandwich/SandwichCell";
import { TraceWindow } from "../trace/TraceWindow";
import { TraceSourceContext } from "../trace/trace-data";
import type { Manifest } from "./bundle";
import { describeTransform } from "../transforms/actions";
import { ask, chooseMetric, compareRows, flameTree, hotspots, neighbours, runGenerations, sampleViewOf, type OfflineTree, type SampleView } from "./evidence";
import { offlineTraceSource } from "./trace-source";

/**
 * The evidence cells of an export, live: each asks DuckDB-WASM over the file's own Parquet the
 * server's own queries and draws the app's own component. A cell whose data the export cannot
 * carry (an experiment's trials, a workflow's tool contracts) is shown as recorded, labelled so.
 */

export interface DocCell {
  cell_id: string;
  name: string | null;
  kind: string;
  commit_id: string | null;
  content: Record<string, unknown>;
}

type State<T> = { state: "running" } | { state: "done"; value: T } | { state: "failed"; message: string };

export function useOffline<T>(run: () => Promise<T>, deps: unknown[]): State<T> {
  const [state, setState] = useState<State<T>>({ state: "running" });
  useEffect(() => {
    let live = true;
    setState({ state: "running" });
    run().then(
      (value) => live && setState({ state: "done", value }),
      (e: unknown) => live && setState({ state: "failed", message: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}

/** What a cell shows before its answer, or on failure; null once there is one. */
function pending(state: State<unknown>, what: string): ReactNode | null {
  if (state.state === "running") return <p className="tip-muted" data-testid="export-cell-loading">Computing {what} in DuckDB-WASM…</p>;
  if (state.state === "failed") return <p className="ev-error" data-testid="export-cell-error">{state.message}</p>;
  return null;
}

const noSamples = (runId: unknown) => (
  <p className="tip-muted" data-testid="export-cell-empty">
    The export carries no samples of run {String(runId)} at this commit.
  </p>
);

/** A cell shown as recorded: its kind, why it is not live here, and its content. */
export function StaticCell({ cell, reason }: { cell: DocCell; reason: string }) {
  return (
    <div className="ev-static" data-testid="export-static-cell">
      <p>
        <strong>Shown as recorded, not live:</strong> {reason}
      </p>
      <pre className="ev-sql">{JSON.stringify(cell.content, null, 2)}</pre>
    </div>
  );
}

/** The app's trace window, its spans read from the export (components/export-viewer/trace-source.ts). */
export function TraceCell({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const source = useMemo(() => offlineTraceSource(manifest), [manifest]);
  const window = cell.content.window as [number, number] | undefined;
  const range = cell.content.range as [number, number] | undefined;
  return (
    <TraceSourceContext.Provider value={source}>
      <TraceWindow
        runId={String(cell.content.run_id)}
        commitId={cell.commit_id!}
        initialView={window ? { start: window[0], end: window[1] } : undefined}
        initialSelection={range ? { start: range[0], end: range[1] } : undefined}
      />
    </TraceSourceContext.Provider>
  );
}

/**
 * The cell's view as the workspace keeps it, read-only: the tracks it covers and its transforms in
 * the order they apply (named from the run's untransformed functions, as the workspace's chips are).
 */
export function ViewChips({ manifest, cell, tree, view }: { manifest: Manifest; cell: DocCell; tree: OfflineTree; view: SampleView }) {
  const transforms = view.transforms ?? [];
  const names = useOffline(async () => {
    if (!transforms.length) return new Map<string, string>();
    // Names only: the whole run's ranking (read from the derived totals) names every function the transforms could.
    const plain = await hotspots(manifest, cell.commit_id!, String(cell.content.run_id), tree.metric.name);
    return new Map(plain.rows.map((r) => [r.frame_key, r.name]));
  }, [cell.cell_id, tree.metric.name]);
  if (!transforms.length && !view.inverted && !tree.tracks) return null;
  const nameOf = (key: string) => (names.state === "done" ? names.value.get(key) : undefined);
  return (
    <p className="tip-muted ev-view" data-testid="export-view">
      {tree.tracks ? <span data-testid="export-view-tracks">Tracks: {tree.tracks.join(", ")}. </span> : null}
      {transforms.length || view.inverted ? (
        <span data-testid="export-view-transforms">Transforms: {[...transforms.map((t) => describeTransform(t, nameOf)), ...(view.inverted ? ["Inverted"] : [])].join(" → ")}.</span>
      ) : null}
    </p>
  );
}

/** What a cell's live tree says about itself (for a reader, and a test): its transforms, total and frames. */
export function treeFacts(nodes: readonly { parent_id: string | null; total: number }[], view: { transforms?: readonly unknown[] }) {
  return {
    "data-transforms": view.transforms?.length ?? 0,
    "data-total": nodes.filter((n) => n.parent_id === null).reduce((sum, n) => sum + n.total, 0),
    "data-frames": nodes.length,
  };
}

export function CalltreeCell({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const view = sampleViewOf(cell.content);
  const state = useOffline(() => flameTree(manifest, cell.commit_id!, String(cell.content.run_id), { metric: cell.content.metric as string | undefined, ...view }), [cell.cell_id]);
  const wait = pending(state, "the call tree");
  if (wait || state.state !== "done") return wait;
  if (!state.value) return noSamples(cell.content.run_id);
  return (
    <div data-testid="export-calltree" data-state="done" {...treeFacts(state.value.nodes, view)}>
      <ViewChips manifest={manifest} cell={cell} tree={state.value} view={view} />
      <CallTreeCell nodes={state.value.nodes} unit={state.value.metric.unit} metric={state.value.metric.name} maxRows={400} />
    </div>
  );
}

export function SandwichOffline({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const commitId = cell.commit_id!;
  const runId = String(cell.content.run_id);
  const [selected, setSelected] = useState<string | null>((cell.content.selected as string | undefined) ?? null);
  // A sandwich cell keeps tracks and transforms, never inverted (as in the workspace).
  const view = { ...sampleViewOf(cell.content), inverted: false };
  const state = useOffline(async () => {
    const tree = await flameTree(manifest, commitId, runId, { metric: cell.content.metric as string | undefined, ...view });
    if (!tree) return null;
    return { tree, hot: await hotspots(manifest, commitId, runId, tree.metric.name, view) };
  }, [cell.cell_id]);
  const metric = state.state === "done" ? (state.value?.tree.metric.name ?? null) : null;
  const near = useOffline<{ callers: NeighbourRow[]; callees: NeighbourRow[] } | null>(
    async () => (metric && selected ? neighbours(manifest, commitId, runId, metric, selected, view) : null),
    [cell.cell_id, metric, selected],
  );
  const wait = pending(state, "the functions");
  if (wait || state.state !== "done") return wait;
  if (!state.value) return noSamples(runId);
  const { tree, hot } = state.value;
  return (
    <div data-testid="export-sandwich" data-selected={selected ?? undefined} data-near={near.state} data-callers={near.state === "done" && near.value ? near.value.callers.length : undefined} {...treeFacts(tree.nodes, view)}>
      <ViewChips manifest={manifest} cell={cell} tree={tree} view={view} />
      {near.state === "failed" ? <p className="ev-error" data-testid="export-cell-error">{near.message}</p> : null}
      <SandwichCell
        functions={hot.rows}
        grandTotal={hot.grand_total}
        unit={tree.metric.unit}
        metric={tree.metric.name}
        nodes={tree.nodes}
        selected={selected}
        onSelect={setSelected}
        callers={near.state === "done" && near.value ? near.value.callers : null}
        callees={near.state === "done" && near.value ? near.value.callees : null}
        truncated={hot.truncated}
      />
    </div>
  );
}

export function CompareOffline({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const commitId = cell.commit_id!;
  const base = String(cell.content.base_run_id);
  const candidate = String(cell.content.candidate_run_id);
  const [from, setFrom] = useState<"base" | "candidate">((cell.content.from as "base" | "candidate" | undefined) ?? "candidate");
  const [normalize, setNormalize] = useState<boolean>(Boolean(cell.content.normalize));
  const [zoom, setZoom] = useState<string | null>((cell.content.zoom as string | null | undefined) ?? null);
  const [search, setSearch] = useState<string>((cell.content.search as string | undefined) ?? "");
  const trees = useOffline(async () => {
    const requested = cell.content.metric as string | undefined;
    const metric = (await chooseMetric(manifest, commitId, runGenerations(manifest, commitId, candidate), requested)) ?? (await chooseMetric(manifest, commitId, runGenerations(manifest, commitId, base), requested));
    if (!metric) return null;
    const [b, c] = await Promise.all([flameTree(manifest, commitId, base, { metric: metric.name }), flameTree(manifest, commitId, candidate, { metric: metric.name })]);
    if (!b || !c) return null;
    return { base: b.nodes, candidate: c.nodes, metric };
  }, [cell.cell_id]);
  const metricName = trees.state === "done" ? (trees.value?.metric.name ?? null) : null;
  const rows = useOffline(async () => (metricName ? compareRows(manifest, commitId, base, candidate, metricName, normalize) : []), [cell.cell_id, metricName, normalize]);
  const wait = pending(trees, "both runs");
  if (wait || trees.state !== "done") return wait;
  if (!trees.value) return <p className="tip-muted" data-testid="export-cell-empty">The export carries no samples of one of the runs at this commit.</p>;
  return (
    <div data-testid="export-compare" data-rows={rows.state === "done" ? rows.value.length : undefined}>
      <CompareCell
        baseNodes={trees.value.base}
        candidateNodes={trees.value.candidate}
        rows={rows.state === "done" ? rows.value : []}
        unit={trees.value.metric.unit}
        metric={trees.value.metric.name}
        from={from}
        onFromChange={(f) => {
          setFrom(f);
          setZoom(null);
        }}
        normalized={normalize}
        onNormalizedChange={setNormalize}
        zoom={zoom}
        onZoomChange={setZoom}
        search={search}
        onSearchChange={setSearch}
      />
    </div>
  );
}

const ns = (value: number) => formatValue(value, "ns");

/**
 * A span trace's critical path, computed here by the same pure analysis the server runs. A run of
 * tool calls is a workflow, whose path needs the workspace's reviewed tool contracts: shown as
 * recorded instead.
 */
export function CriticalPathOffline({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const commitId = cell.commit_id!;
  const runId = String(cell.content.run_id);
  const [trace, setTrace] = useState<string | undefined>(cell.content.trace_id as string | undefined);
  const state = useOffline(async (): Promise<{ kind: "workflow" } | { kind: "spans"; report: CriticalPathReport } | null> => {
    const generations = runGenerations(manifest, commitId, runId);
    for (const generation of [...generations].reverse()) {
      const spans = await ask<SpanRow>(manifest, commitId, criticalPathSpansQuery, { generation, limit: 2_000_001 });
      if (!spans.length) continue;
      if (runHoldsToolCalls(spans)) return { kind: "workflow" };
      const edges = await ask<EdgeRow>(manifest, commitId, criticalPathEdgesQuery, { generation, limit: 8_000_001 });
      const tracks = await ask<{ track_id: number; process_name: string | null; thread_name: string | null }>(manifest, commitId, tracksQuery, { generations: [generation] });
      const input = spanInputsFromRows(spans, tracks, edges);
      return { kind: "spans", report: spanCriticalPathReport(input.spans, input.links, { trace }).report };
    }
    return null;
  }, [cell.cell_id, trace]);
  const wait = pending(state, "the critical path");
  if (wait || state.state !== "done") return wait;
  if (!state.value) return <p className="tip-muted" data-testid="export-cell-empty">The export carries no spans of run {runId} at this commit.</p>;
  if (state.value.kind === "workflow") {
    return <StaticCell cell={cell} reason="this run's critical path is over tool calls (a workflow), and computing it needs the workspace's reviewed tool contracts, which an export does not carry." />;
  }
  const report = state.value.report;
  const traces = (report.traces ?? []).filter((t, i, all) => all.findIndex((u) => u.trace_id === t.trace_id) === i);
  return (
    <div className="critical-path-cell" data-testid="export-critical-path" data-length={report.critical_path_ns}>
      <p>
        Trace&apos;s work, one span at a time <strong>{ns(report.sequential_ns)}</strong> · critical path <strong data-testid="cp-length">{ns(report.critical_path_ns)}</strong> · speed-up bound{" "}
        <strong>{report.speedup_bound.toFixed(2)}×</strong>
      </p>
      {traces.length > 1 ? (
        <label>
          Trace{" "}
          <select value={report.trace} onChange={(e) => setTrace(e.target.value)}>
            {traces.map((t) => (
              <option key={t.trace_id} value={t.trace_id}>
                {t.name} — {ns(t.critical_path_ns)}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <table className="data" data-testid="cp-path">
        <thead>
          <tr>
            <th>Span</th>
            <th>Name</th>
            <th>Service</th>
            <th className="num">Start</th>
            <th className="num">On the path</th>
          </tr>
        </thead>
        <tbody>
          {report.path.slice(0, 200).map((p) => (
            <tr key={p.id}>
              <td className="mono">{p.id}</td>
              <td>{p.name}</td>
              <td>{p.service}</td>
              <td className="num">{ns(p.start_ns)}</td>
              <td className="num">{ns(p.critical_ns)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
