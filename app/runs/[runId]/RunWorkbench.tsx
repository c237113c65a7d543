"use client";

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ErrorPanel } from "../../../components/ErrorPanel";
import { CallTreeCell } from "../../../components/calltree/CallTreeCell";
import { FlameGraphCell, type FunctionTotals } from "../../../components/flame/FlameGraphCell";
import { seedTimeOrder, useTimeOrder, type TimelineAnswer } from "../../../components/flame/use-time-order";
import type { PackedAnswer } from "../../../analysis/queries/packed-rows";
import { SandwichCell } from "../../../components/sandwich/SandwichCell";
import { seedFlameTree, useFlameTree, useHotspots, useNeighbours, type FlameData } from "../../../components/evidence/use-evidence";
import { formatValue } from "../../../analysis/flame/format";
import { AddToInvestigation, type CellDraft } from "../../../components/notebook/AddToInvestigation";
import { useUrlState } from "../../../components/use-url-state";
import { formatTimeRange, formatWhatIf, parseTimeRange, parseWhatIf } from "../../../components/url-state";
import type { ReviewedTool } from "../../../components/dag/run-critical-path";
import { RUN_URL_STATE, budgetOf, type RunUrlState } from "./url-state";
import { TransformChips } from "../../../components/transforms/TransformChips";
import { useTransformStack } from "../../../components/transforms/use-transforms";
import { useTransformMenu } from "../../../components/transforms/use-transform-menu";
import { TrackSelector, formatTrackSelection, parseTrackSelection } from "../../../components/flame/TrackSelector";
import { warmLayoutWorker } from "../../../components/flame/use-flame-layout";
import { OtherView } from "./OtherView";
import type { FirstSqlAnswer } from "../../../components/sql/first-answer";
import { FlameExport } from "../../../components/share/FlameExport";

export const VIEWS = [
  { id: "flame", label: "Flame graph" },
  { id: "sandwich", label: "Sandwich" },
  { id: "calltree", label: "Call tree" },
  { id: "trace", label: "Trace" },
  { id: "dag", label: "Critical path" },
  { id: "sql", label: "SQL" },
] as const;

/** Views that only apply to runs with spans. */
const SPAN_VIEWS = new Set<string>(["dag"]);

export interface MetricOption {
  name: string;
  unit: string;
  total: number;
}

export interface RunWorkbenchProps {
  runId: string;
  /** The resolved commit the page reads (never "HEAD"). */
  commitId: string;
  metrics: MetricOption[];
  primaryMetric: string | null;
  /** The view state the URL carried: readUrlState(RUN_URL_STATE, searchParams). */
  initial: RunUrlState;
  /** The run has spans at this commit: the critical-path view applies. */
  hasSpans: boolean;
  /** Tools a person reviewed (tools.list), which the DAG view compiles with. */
  toolContracts: readonly ReviewedTool[];
  /** The importer's metadata of the run (its trace id and runtime inputs). */
  metadata: Readonly<Record<string, string>>;
  /** The SQL view's first answer by the server engine, when the page opened on it. */
  sqlFirst?: FirstSqlAnswer | null;
  /** The run's title (names exported images). */
  title?: string;
  /** The flame tree of the view the URL names, asked by the server while it rendered the page (null when it could not answer). */
  firstFlame?: Promise<PackedAnswer<FlameData, "nodes"> | null>;
  /** The time order, when the URL opens the flame view in time order, asked by the server the same way. */
  firstTimeOrder?: Promise<PackedAnswer<TimelineAnswer, "cells"> | null>;
}


const FRAME_KEY = /^[0-9a-f]{16}$/;

/** The run page's client side: view tabs, metric selector and the cells, with state in the URL. */
export function RunWorkbench(props: RunWorkbenchProps) {
  const [state, patch] = useUrlState(RUN_URL_STATE, { ...props.initial, metric: props.initial.metric ?? props.primaryMetric });
  const views = VIEWS.filter((v) => props.hasSpans || !SPAN_VIEWS.has(v.id));
  const view = views.some((v) => v.id === state.view) ? state.view! : "flame";
  const metric = state.metric ?? props.primaryMetric;
  const budget = budgetOf(state.budget);
  const needsTree = view === "flame" || view === "sandwich" || view === "calltree";
  const treeRun = needsTree ? props.runId : null;
  // The threads/processes/profiles shown: the busiest unless the URL names others (or "all").
  const tracks = useMemo(() => parseTrackSelection(state.tracks), [state.tracks]);
  const transformStack = useTransformStack(state.tf, state.inv, patch);
  const { transforms, inverted } = transformStack;
  const transformMenu = useTransformMenu(transformStack);
  const treeArgs = { runId: treeRun, commitId: props.commitId, metric, budget, tracks, transforms, inverted };
  // Once, before the first fetch: the tree the server already asked answers the page's first question.
  useState(() => props.firstFlame && seedFlameTree(treeArgs, props.firstFlame));
  // The layout worker's script is fetched as hydration starts, not after it (the first layout waited for it).
  useState(() => needsTree && typeof window !== "undefined" && warmLayoutWorker());
  useState(() => props.firstTimeOrder && seedTimeOrder({ runId: props.runId, commitId: props.commitId, metric, tracks, transforms }, props.firstTimeOrder));
  const answered = useFlameTree(treeArgs);
  // The layout worker starts while the tree is on its way, not when it has come.
  useEffect(() => {
    if (needsTree) warmLayoutWorker();
  }, [needsTree]);
  // While another transform stack's tree is on its way, the last tree stays drawn (not "Loading…").
  const lastTree = useRef<{ base: string; tree: FlameData } | null>(null);
  const treeBase = `${props.runId}\u0000${metric}\u0000${budget}\u0000${state.tracks ?? ""}`;
  if (answered && "nodes" in answered) lastTree.current = { base: treeBase, tree: answered };
  const applying = answered === null && lastTree.current?.base === treeBase;
  const flame = answered ?? (applying ? lastTree.current!.tree : null);
  const timeOrderShown = view === "flame" && state.mode === "time-order";
  const timeOrder = useTimeOrder({ runId: props.runId, commitId: props.commitId, metric, timeRange: flame && "nodes" in flame ? flame.time_range : undefined, enabled: timeOrderShown, tracks, transforms });
  // The function list waits for the tree it goes with unless it is the view (the sandwich), and in
  // time order for the cells' first frame: on a first paint or a transform, the tree's query (and
  // a run's first time order, a merge of every sample) has the server to itself, and the layout
  // and first frame the page's cores. The ranking is a pass over every sample too, and its answer
  // a render of its own.
  const timeOrderWaits = timeOrderShown && timeOrder.disabledReason === null && timeOrder.failed === undefined && !timeOrder.painted;
  const hotRun = view === "sandwich" || (answered !== null && !timeOrderWaits) ? treeRun : null;
  const hot = useHotspots({ runId: hotRun, commitId: props.commitId, metric, tracks, transforms });
  // The untransformed functions name the chips' frames (a merged or dropped function is gone from `hot`).
  const plainHot = useHotspots({ runId: transforms.length ? hotRun : null, commitId: props.commitId, metric, tracks });
  const sel = state.sel;
  // The direct callers and callees under the same transforms as the tree (the server walks them as it walks the tree's).
  const neighbours = useNeighbours({ runId: props.runId, commitId: props.commitId, metric, frameKey: view === "sandwich" ? sel : null, tracks, transforms });
  const flameNodes = flame && "nodes" in flame ? flame.nodes : null;
  const nameOf = useMemo(() => {
    const names = new Map<string, string>();
    for (const answer of [plainHot, hot]) if (answer && "rows" in answer) for (const r of answer.rows) names.set(r.frame_key, r.name);
    for (const n of flameNodes ?? []) if (!names.has(n.frame_key)) names.set(n.frame_key, n.name);
    return (key: string) => names.get(key);
  }, [plainHot, hot, flameNodes]);


  const functionTotals = useMemo(() => {
    const map = new Map<string, FunctionTotals>();
    if (hot && "rows" in hot) for (const r of hot.rows) map.set(r.frame_key, { self: r.self, total: r.total });
    return map;
  }, [hot]);

  const trackSelector =
    flame && "nodes" in flame ? (
      <TrackSelector
        choices={flame.track_choices}
        covered={flame.tracks.covered.map((t) => t.track_key)}
        selection={tracks}
        onChange={(next) => patch({ tracks: formatTrackSelection(next), zoom: null })}
        unit={flame.unit}
        metric={flame.metric}
      />
    ) : null;

  const metricPicker = props.metrics.length ? (
    <label className="field">
      <span>Metric</span>
      <select value={metric ?? ""} onChange={(e) => patch({ metric: e.target.value, zoom: null })} data-testid="metric-picker">
        {props.metrics.map((m) => (
          <option key={m.name} value={m.name}>
            {m.name} ({formatValue(m.total, m.unit, m.name)})
          </option>
        ))}
      </select>
    </label>
  ) : null;

  // The SQL view's current text, read when the view is added to an investigation.
  const sqlText = useRef("");
  const onSqlChange = useCallback((sql: string) => {
    sqlText.current = sql;
  }, []);

  /** The view as a notebook cell: its kind's content (analysis/notebook/cells) from the view state, at the page's commit. */
  const viewAsCell = (): CellDraft => {
    // The page's track selection travels with the cell when the run has tracks to choose from (absent in a cell: every track merged).
    const several = flame !== null && "nodes" in flame && flame.track_choices.length > 1;
    const run = { run_id: props.runId, ...(metric ? { metric } : {}), ...(several ? { tracks } : {}), ...(transforms.length ? { transforms } : {}) };
    // The inversion travels with the views that draw it (the sandwich's lists are never inverted).
    const shape = inverted ? { inverted } : {};
    const commit_id = props.commitId;
    if (view === "sandwich") return { kind: "sandwich", content: { ...run, selected: sel && FRAME_KEY.test(sel) ? sel : null }, commit_id };
    if (view === "calltree") return { kind: "calltree", content: { ...run, ...shape }, commit_id };
    if (view === "dag") {
      const whatIf = parseWhatIf(state.whatif);
      return { kind: "critical_path", content: { run_id: props.runId, ...(state.trace ? { trace_id: state.trace } : {}), ...(whatIf ? { what_if: { node: whatIf.node, duration_ms: whatIf.ms } } : {}) }, commit_id };
    }
    if (view === "sql") return { kind: "sql", content: { sql: sqlText.current }, commit_id };
    if (view === "trace") {
      const visible = parseTimeRange(state.window);
      const range = parseTimeRange(state.range);
      return {
        kind: "trace",
        content: { run_id: props.runId, ...(visible ? { window: [visible.start, visible.end] } : {}), ...(range ? { range: [range.start, range.end] } : {}) },
        commit_id,
      };
    }
    return {
      kind: "flame",
      content: { ...run, ...shape, zoom: state.zoom, ...(state.q ? { search: state.q } : {}), orientation: state.orient === "flame" ? "flame" : "icicle", mode: state.mode === "time-order" ? "time-order" : "left-heavy" },
      commit_id,
    };
  };

  const body = () => {
    if (!needsTree) {
      return (
        <OtherView
          view={view}
          runId={props.runId}
          commitId={props.commitId}
          traceView={parseTimeRange(state.window)}
          traceSelection={parseTimeRange(state.range)}
          onTraceViewChange={(visible, selection) => patch({ window: formatTimeRange(visible), range: formatTimeRange(selection) })}
          traceTracks={state.tracks === null ? "all" : tracks}
          onTraceTracksChange={(next) => patch({ tracks: next === "busiest" ? "busiest" : formatTrackSelection(next) })}
          onSqlChange={onSqlChange}
          sql={state.sql}
          onSqlRun={(sql) => patch({ sql })}
          sqlFirst={props.sqlFirst}
          criticalPath={{
            available: props.hasSpans,
            contracts: props.toolContracts,
            metadata: props.metadata,
            selected: state.node,
            onSelect: (node) => patch({ node }),
            whatIf: parseWhatIf(state.whatif),
            onWhatIf: (whatIf) => patch({ whatif: formatWhatIf(whatIf) }),
            trace: state.trace,
            onTrace: (trace) => patch({ trace }),
            marks: state.cp !== "off",
            onMarks: (on) => patch({ cp: on ? null : "off" }),
          }}
        />
      );
    }
    if (!flame) return <p className="tip-muted" data-testid="loading">Loading the flame tree of {metric ?? "the run"} at {props.commitId}…</p>;
    if ("code" in flame) return <ErrorPanel error={flame} />;
    if (flame.status.state === "unavailable" || flame.status.state === "empty") {
      return (
        <div className="empty" data-testid="evidence-status">
          <strong>{flame.status.state === "empty" ? "No samples." : "No evidence."}</strong> {flame.status.reason}{" "}
          {flame.status.fill_with ? (
            <>
              To fill it: <span className="command mono">{flame.status.fill_with === "imports.import" ? "npx emberscope import PATH" : flame.status.fill_with}</span>
            </>
          ) : null}
        </div>
      );
    }
    const prunedNote =
      flame.pruned_total > 0 ? (
        <p className="tip-muted pruned-note" data-testid="pruned-note">
          Drawn from the {flame.nodes.length.toLocaleString("en-US")} largest call paths (budget {budget.toLocaleString("en-US")}); {formatValue(flame.pruned_total, flame.unit, flame.metric)} in smaller paths is shown as “(pruned)” frames.
        </p>
      ) : null;
    if (view === "flame") {
      return (
        <>
          <FlameGraphCell
            nodes={flame.nodes}
            unit={flame.unit}
            metric={flame.metric}
            zoom={state.zoom}
            onZoomChange={(zoom) => patch({ zoom })}
            search={state.q ?? ""}
            onSearchChange={(q) => patch({ q }, { transient: true })}
            orientation={state.orient === "flame" ? "flame" : "icicle"}
            onOrientationChange={(orient) => patch({ orient })}
            mode={state.mode === "time-order" ? "time-order" : "left-heavy"}
            onModeChange={(mode) => patch({ mode, zoom: null })}
            timeOrder={timeOrder}
            functionTotals={functionTotals}
            toolbar={
              <>
                {metricPicker}
                {trackSelector}
                <FlameExport nodes={flame.nodes} title={props.title ?? props.runId} commitId={props.commitId} unit={flame.unit} metric={flame.metric} zoom={state.zoom} orientation={state.orient === "flame" ? "flame" : "icicle"} />
              </>
            }
            onOpenFunction={(frameKey) => patch({ view: "sandwich", sel: frameKey })}
            onFrameContextMenu={state.mode === "time-order" ? undefined : transformMenu.onTreeContextMenu}
            onFrameKey={state.mode === "time-order" ? undefined : transformMenu.onTreeKey}
            globalShortcuts
          />
          {prunedNote}
        </>
      );
    }
    if (view === "calltree") {
      return (
        <>
          <div className="flame-toolbar">
            {metricPicker}
            {trackSelector}
          </div>
          <CallTreeCell
            key={state.tf ?? ""}
            nodes={flame.nodes}
            unit={flame.unit}
            metric={flame.metric}
            selected={state.zoom}
            onSelect={(zoom) => patch({ zoom })}
            onNodeContextMenu={transformMenu.onTreeContextMenu}
            onNodeKey={transformMenu.onTreeKey}
          />
          {prunedNote}
        </>
      );
    }
    if (!hot) return <p className="tip-muted">Loading functions…</p>;
    if ("code" in hot) return <ErrorPanel error={hot} />;
    return (
      <>
        <div className="flame-toolbar">
          {metricPicker}
          {trackSelector}
        </div>
        <SandwichCell
          functions={hot.rows}
          grandTotal={hot.grand_total}
          unit={flame.unit}
          metric={flame.metric}
          nodes={flame.nodes}
          selected={sel}
          onSelect={(frameKey) => patch({ sel: frameKey })}
          callers={neighbours.callers}
          callees={neighbours.callees}
          onFunctionContextMenu={transformMenu.onFunctionContextMenu}
          onFunctionKey={transformMenu.onFunctionKey}
          truncated={hot.truncated}
        />
      </>
    );
  };

  return (
    <>
      <nav className="view-tabs" aria-label="Views" data-testid="view-tabs">
        {views.map((v) => (
          <a
            key={v.id}
            href={`?${new URLSearchParams({ ...(v.id === "flame" ? {} : { view: v.id }), ...(props.initial.budget ? { budget: props.initial.budget } : {}) }).toString()}`}
            aria-current={v.id === view ? "page" : undefined}
            onClick={(e) => {
              if (e.metaKey || e.ctrlKey || e.shiftKey) return;
              e.preventDefault();
              patch({ view: v.id });
            }}
            data-testid={`tab-${v.id}`}
          >
            {v.label}
          </a>
        ))}
        <AddToInvestigation cell={viewAsCell} />
      </nav>
      {needsTree ? <TransformChips stack={transformStack} nameOf={nameOf} applying={applying} /> : null}
      {needsTree && inverted && state.mode === "time-order" && view === "flame" ? (
        <p className="tip-muted" data-testid="transforms-time-order-note">
          Time order is not inverted (the inversion applies to the left-heavy graph, the call tree and the sandwich); the other transforms apply.
        </p>
      ) : null}
      {body()}
      {needsTree ? transformMenu.menu : null}
    </>
  );
}
