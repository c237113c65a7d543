"use client";

import { startTransition, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { formatLocation, formatPercent, formatValue } from "../../analysis/flame/format";
import { panViewport, viewportFor, zoomViewport, type Viewport } from "../../analysis/flame/layout";
import type { FlameLayoutRequest, PreparedFlame } from "../../analysis/flame/prepare";
import { searchFlame } from "../../analysis/flame/search";
import type { TimelineInputCell } from "../../analysis/flame/timeline";
import { childrenOf, pathTo, type FlameInputNode, type FlameTree } from "../../analysis/flame/tree";
import { FlameCanvas } from "./FlameCanvas";
import { KeyboardHelp } from "./KeyboardHelp";
import { STABLE_PALETTES } from "./stable-colours";
import { layoutThread, useFlameLayout } from "./use-flame-layout";
import "./workbench.css";

export type FlameMode = "left-heavy" | "time-order";

/** The time-order mode's data, from `evidence.flame_timeline`. */
export interface TimeOrderInput {
  /** Why time order cannot be shown (e.g. samples without timestamps); null when it can. */
  disabledReason: string | null;
  /** Merged cells; null while loading. */
  cells: readonly TimelineInputCell[] | null;
  /** A note (pruning, a partial result) shown under the toolbar. */
  note?: ReactNode;
  /** Set when the cells could not be fetched: said under the toolbar (with a retry), and the left-heavy graph stays drawn. */
  failed?: ReactNode;
  /** Asks for the cells again (after a failure). */
  retry?: () => void;
  /** Called when these cells are first drawn. */
  onPaint?: () => void;
}

export interface FunctionTotals {
  self: number;
  total: number;
}

export interface FlameGraphCellProps {
  /** Flame nodes as `evidence.flame_tree` returns them (already pruned to a budget). */
  nodes: readonly FlameInputNode[];
  /** Left-heavy (aggregated) or time order; the toggle shows when `timeOrder` is given. */
  mode?: FlameMode;
  onModeChange?: (mode: FlameMode) => void;
  timeOrder?: TimeOrderInput;
  unit: string | null;
  metric: string | null;
  /** Name of the synthetic root. */
  rootName?: string;
  zoom?: string | null;
  onZoomChange?: (nodeId: string | null) => void;
  search?: string;
  onSearchChange?: (query: string) => void;
  orientation?: "flame" | "icicle";
  onOrientationChange?: (o: "flame" | "icicle") => void;
  /** Per frame_key values over all call paths (from evidence.hotspots), shown in the tooltip. */
  functionTotals?: ReadonlyMap<string, FunctionTotals>;
  /** Overrides the stable colours (differential view). */
  colours?: (tree: FlameTree) => Uint8Array;
  palettes?: { light: string[]; dark: string[] };
  /** Extra tooltip rows for a node. */
  describe?: (nodeId: string) => ReactNode;
  /** Controls placed first in the toolbar (e.g. a metric selector). */
  toolbar?: ReactNode;
  /** Shown under the toolbar (e.g. a legend). */
  legend?: ReactNode;
  /** Offered in the tooltip/details line, e.g. "show in sandwich". */
  onOpenFunction?: (frameKey: string) => void;
  /** Right-click on a frame (e.g. the transform menu), with its index in the drawn tree. */
  onFrameContextMenu?: (tree: FlameTree, index: number, x: number, y: number) => void;
  /** A key the cell does not use itself, with the hovered (else selected) frame's index (-1: none); true when handled. */
  onFrameKey?: (key: string, tree: FlameTree, index: number) => boolean;
  /** Listen for keys on the whole page (a page with one graph), not only inside the cell. */
  globalShortcuts?: boolean;
  compact?: boolean;
  maxHeight?: number;
  label?: string;
  testId?: string;
}

function useControlled<T>(value: T | undefined, onChange: ((v: T) => void) | undefined, initial: T): [T, (v: T) => void] {
  const [own, setOwn] = useState<T>(value ?? initial);
  const current = value !== undefined ? value : own;
  const set = useCallback(
    (v: T) => {
      setOwn(v);
      onChange?.(v);
    },
    [onChange],
  );
  return [current, set];
}

/**
 * A flame graph as a reusable cell: props in, no page globals. Left-heavy or time-order layout
 * (computed in a Web Worker), click to zoom with a breadcrumb, search with the matched share,
 * tooltips with units, `?` for keys.
 */
export function FlameGraphCell(props: FlameGraphCellProps) {
  const [mode, setMode] = useControlled<FlameMode>(props.mode, props.onModeChange, "left-heavy");
  const timeCells = props.timeOrder && !props.timeOrder.disabledReason ? props.timeOrder.cells : null;
  const timeOrder = mode === "time-order" && timeCells !== null;
  // Time order on its way: no left-heavy layout is started for it (the one worker would lay out a
  // graph not shown before the cells that arrive next); one already drawn stays until they come.
  const cellsComing = mode === "time-order" && props.timeOrder !== undefined && !props.timeOrder.disabledReason && !props.timeOrder.failed && timeCells === null;
  const leftHeavy = useMemo<FlameLayoutRequest>(() => ({ kind: "left-heavy", nodes: props.nodes, rootName: props.rootName }), [props.nodes, props.rootName]);
  const timeRequest = useMemo<FlameLayoutRequest | null>(() => (timeCells ? { kind: "time-order", cells: timeCells, rootName: props.rootName } : null), [timeCells, props.rootName]);
  const { prepared, pending, error } = useFlameLayout(timeOrder ? timeRequest : cellsComing ? null : leftHeavy);

  if (props.nodes.length === 0) {
    return (
      <div className="empty" data-testid="flame-empty">
        <strong>Nothing to draw.</strong> This run has no samples for {props.metric ? <code>{props.metric}</code> : "any metric"} in the pinned commit. Pick
        another metric, pin a later commit, or import a profile that has samples.
      </div>
    );
  }
  if (!prepared) {
    return (
      <div className="flame-cell" data-testid={props.testId ?? "flame-cell"} data-layout="pending">
        <p className="tip-muted" data-testid="flame-layout-pending">
          {error
            ? `The flame graph could not be laid out: ${error}`
            : cellsComing
              ? "Merging the samples in time order…"
              : `Laying out ${(timeOrder ? timeCells!.length : props.nodes.length).toLocaleString("en-US")} ${timeOrder ? "cells" : "frames"}…`}
        </p>
      </div>
    );
  }
  return <FlameView {...props} prepared={prepared} mode={mode} setMode={setMode} busy={pending || cellsComing} />;
}

function FlameView(props: FlameGraphCellProps & { prepared: PreparedFlame; mode: FlameMode; setMode: (m: FlameMode) => void; busy: boolean }) {
  const { prepared, mode, setMode } = props;
  // Time order that failed is not shown: the left-heavy graph stays, and the toggle says so.
  const timeFailed = mode === "time-order" && Boolean(props.timeOrder?.failed);
  const shownMode: FlameMode = timeFailed ? "left-heavy" : mode;
  const [zoomId, setZoomId] = useControlled<string | null>(props.zoom, props.onZoomChange, null);
  const [query, setQuery] = useControlled<string>(props.search, props.onSearchChange, "");
  const [orientation, setOrientation] = useControlled<"flame" | "icicle">(props.orientation, props.onOrientationChange, "icicle");
  const [hover, setHover] = useState<{ index: number; x: number; y: number }>({ index: -1, x: 0, y: 0 });
  const [focusIndex, setFocusIndex] = useState(-1);
  const [help, setHelp] = useState(false);
  const [freeViewport, setFreeViewport] = useState<Viewport | null>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const stageRef = useRef<HTMLDivElement>(null);

  const { tree, layout, time } = prepared;
  const colourFn = props.colours;
  const colours = useMemo(() => (colourFn ? colourFn(tree) : prepared.colours), [tree, colourFn, prepared.colours]);
  const search = useMemo(() => searchFlame(tree, query), [tree, query]);
  const zoomIndex = zoomId !== null ? (tree.indexById.get(zoomId) ?? 0) : 0;
  const zoomMissing = zoomId !== null && !tree.indexById.has(zoomId);
  const zoomViewportOf = useMemo(() => viewportFor(layout, zoomIndex), [layout, zoomIndex]);
  const viewport = freeViewport ?? zoomViewportOf;
  // Zoom and pan are drawn by the canvas at once; the cell's own re-render can wait.
  const onViewportChange = useCallback((v: Viewport) => startTransition(() => setFreeViewport(v)), []);
  const breadcrumb = pathTo(tree, zoomIndex);
  const rootTotal = tree.total[0];

  useEffect(() => setFreeViewport(null), [zoomId, tree]);

  const zoomTo = useCallback(
    (index: number) => {
      setFreeViewport(null);
      setFocusIndex(index);
      setZoomId(index <= 0 ? null : tree.ids[index]);
    },
    [setZoomId, tree],
  );

  const onKey = useCallback(
    (e: KeyboardEvent | React.KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      const typing = target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA");
      if (typing) {
        if (e.key === "Escape" && target === searchRef.current) {
          if (query) setQuery("");
          searchRef.current?.blur();
          rootRef.current?.focus();
          e.preventDefault();
        }
        return;
      }
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const at = focusIndex >= 0 ? focusIndex : zoomIndex;
      const visualUp = orientation === "icicle" ? "ArrowUp" : "ArrowDown";
      const visualDown = orientation === "icicle" ? "ArrowDown" : "ArrowUp";
      const row = layout.byDepth[tree.depth[at]];
      let handled = true;
      if (e.key === "/") searchRef.current?.focus();
      else if (e.key === "?") setHelp((h) => !h);
      else if (e.key === "Escape") {
        if (help) setHelp(false);
        else if (query) setQuery("");
        else zoomTo(0);
      } else if (e.key === "Enter" && at >= 0) zoomTo(at);
      else if (e.key === visualUp) setFocusIndex(Math.max(0, tree.parent[at]));
      else if (e.key === visualDown) setFocusIndex(childrenOf(tree, at)[0] ?? at);
      else if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && e.shiftKey) setFreeViewport(panViewport(viewport, e.key === "ArrowLeft" ? -0.2 : 0.2));
      else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
        const pos = row.indexOf(at);
        const next = row[pos + (e.key === "ArrowLeft" ? -1 : 1)];
        if (next !== undefined) setFocusIndex(next);
      } else if (e.key === "+" || e.key === "=") setFreeViewport(zoomViewport(viewport, 0.7, (viewport.x0 + viewport.x1) / 2));
      else if (e.key === "-" || e.key === "_") setFreeViewport(zoomViewport(viewport, 1 / 0.7, (viewport.x0 + viewport.x1) / 2));
      else if (e.key === "i") setOrientation(orientation === "icicle" ? "flame" : "icicle");
      else handled = props.onFrameKey?.(e.key, tree, hover.index >= 0 ? hover.index : focusIndex) ?? false;
      if (handled) e.preventDefault();
    },
    [focusIndex, zoomIndex, orientation, layout, tree, help, query, setQuery, zoomTo, viewport, setOrientation, hover.index, props.onFrameKey],
  );

  useEffect(() => {
    if (!props.globalShortcuts) return;
    const listener = (e: KeyboardEvent) => {
      // Keys pressed inside the cell are handled by its own listener.
      if (rootRef.current?.contains(e.target as Node)) return;
      onKey(e);
    };
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, [props.globalShortcuts, onKey]);

  const shown = hover.index >= 0 ? hover.index : focusIndex;
  const valueText = (v: number) => formatValue(v, props.unit, props.metric);
  const details = (i: number, testPrefix: string) => {
    const fn = props.functionTotals?.get(tree.frameKeys[i]);
    const location = formatLocation(tree.files[i], tree.lines[i]);
    return (
      <>
        <div className="tip-name" data-testid={`${testPrefix}-name`}>
          {tree.names[i]}
        </div>
        {location ? <div className="tip-loc mono">{location}</div> : null}
        {tree.modules[i] || i > 0 ? (
          <div className="tip-muted">
            {tree.modules[i] && tree.modules[i] !== tree.files[i] ? `${tree.modules[i]} · ` : ""}
            {tree.kinds[i]}
          </div>
        ) : null}
        <table className="tip-values">
          <tbody>
            {time && i > 0 ? (
              <tr>
                <th>time</th>
                <td className="num" data-testid={`${testPrefix}-duration`}>
                  {formatValue(time.end[i] - time.start[i], "ns")}
                </td>
                <td className="num" data-testid={`${testPrefix}-start`}>
                  at {formatValue(time.start[i] - time.start[0], "ns")}
                </td>
              </tr>
            ) : null}
            <tr>
              <th>total</th>
              <td className="num" data-testid={`${testPrefix}-total`}>
                {valueText(tree.total[i])}
              </td>
              <td className="num">{formatPercent(tree.total[i], rootTotal)}</td>
            </tr>
            <tr>
              <th>self</th>
              <td className="num" data-testid={`${testPrefix}-self`}>
                {valueText(tree.self[i])}
              </td>
              <td className="num">{formatPercent(tree.self[i], rootTotal)}</td>
            </tr>
            {fn && i > 0 ? (
              <>
                <tr>
                  <th colSpan={3} className="tip-sub">
                    function, all call paths
                  </th>
                </tr>
                <tr>
                  <th>total</th>
                  <td className="num" data-testid={`${testPrefix}-fn-total`}>
                    {valueText(fn.total)}
                  </td>
                  <td className="num">{formatPercent(fn.total, rootTotal)}</td>
                </tr>
                <tr>
                  <th>self</th>
                  <td className="num" data-testid={`${testPrefix}-fn-self`}>
                    {valueText(fn.self)}
                  </td>
                  <td className="num">{formatPercent(fn.self, rootTotal)}</td>
                </tr>
              </>
            ) : null}
          </tbody>
        </table>
        {props.describe ? props.describe(tree.ids[i]) : null}
      </>
    );
  };

  const tooltipStyle = (() => {
    const box = stageRef.current?.getBoundingClientRect();
    if (!box) return {};
    const left = hover.x - box.left + 14;
    const flip = left + 340 > box.width;
    return { left: flip ? Math.max(0, hover.x - box.left - 334) : left, top: hover.y - box.top + 14 };
  })();

  return (
    <div
      ref={rootRef}
      className={`flame-cell${props.compact ? " compact" : ""}`}
      data-testid={props.testId ?? "flame-cell"}
      data-layout-thread={layoutThread()}
      tabIndex={-1}
      onKeyDown={(e) => onKey(e)}
    >
      {!props.compact ? (
        <>
        {/* Two rows of fixed content, each on one line from 1024 px up: what is shown (metric, tracks, export), then how (search, layout, orientation). */}
        {props.toolbar ? (
          <div className="flame-toolbar flame-toolbar-scope" data-testid="flame-toolbar-scope">
            {props.toolbar}
          </div>
        ) : null}
        <div className="flame-toolbar flame-toolbar-view" role="toolbar" aria-label="Flame graph controls" data-testid="flame-toolbar-view">
          <label className="field">
            <span>Search</span>
            <input
              ref={searchRef}
              type="search"
              value={query}
              placeholder="function, file or module  ( / )"
              onChange={(e) => setQuery(e.target.value)}
              data-testid="flame-search"
              aria-describedby="flame-search-status"
            />
          </label>
          {/* Always there, of a fixed width: typing a search does not move the controls after it. */}
          <span className="search-status num" id="flame-search-status" data-testid={search ? "flame-search-status" : undefined} aria-live="polite">
            {search ? (
              <>
                {search.count} {search.count === 1 ? "frame" : "frames"} · {valueText(search.matchedTotal)} · <strong data-testid="flame-search-share">{formatPercent(search.matchedTotal, rootTotal)}</strong> of total
              </>
            ) : null}
          </span>
          <span className="spacer" />
          {props.timeOrder ? (
            <div className="segmented" role="group" aria-label="Layout">
              <button type="button" aria-pressed={shownMode === "left-heavy"} onClick={() => setMode("left-heavy")} data-testid="mode-left-heavy" title="Stacks merged, heaviest first">
                Left-heavy
              </button>
              <button
                type="button"
                aria-pressed={shownMode === "time-order"}
                onClick={() => (timeFailed ? props.timeOrder?.retry?.() : setMode("time-order"))}
                disabled={props.timeOrder.disabledReason !== null}
                title={props.timeOrder.disabledReason ?? "x is time: consecutive samples with a common stack prefix merged"}
                data-testid="mode-time-order"
              >
                Time order
              </button>
            </div>
          ) : null}
          <div className="segmented" role="group" aria-label="Orientation">
            <button type="button" aria-pressed={orientation === "icicle"} onClick={() => setOrientation("icicle")} data-testid="orient-icicle">
              Icicle
            </button>
            <button type="button" aria-pressed={orientation === "flame"} onClick={() => setOrientation("flame")} data-testid="orient-flame">
              Flame
            </button>
          </div>
          <button type="button" className="plain-button" onClick={() => setHelp((h) => !h)} aria-expanded={help} data-testid="flame-help-button">
            Keys (?)
          </button>
        </div>
        </>
      ) : null}
      {props.legend}
      {props.timeOrder && (mode === "time-order" || props.timeOrder.disabledReason) ? (
        <p className="tip-muted mode-note" data-testid="mode-note">
          {props.timeOrder.disabledReason && mode === "time-order" ? `Time order is not available: ${props.timeOrder.disabledReason}` : null}
          {props.timeOrder.disabledReason && mode !== "time-order" ? `Time order is off: ${props.timeOrder.disabledReason}` : null}
          {!props.timeOrder.disabledReason && timeFailed ? props.timeOrder.failed : null}
          {!props.timeOrder.disabledReason && !timeFailed && props.busy ? "Merging the samples in time order…" : null}
          {!props.timeOrder.disabledReason && !timeFailed && !props.busy ? props.timeOrder.note : null}
        </p>
      ) : null}
      <nav className="breadcrumb" aria-label="Zoom path" data-testid="flame-breadcrumb">
        {breadcrumb.map((i, k) => (
          <span key={tree.ids[i]}>
            {k > 0 ? <span className="crumb-sep">›</span> : null}
            {k === breadcrumb.length - 1 ? (
              <span aria-current="location" className="crumb-current">
                {tree.names[i]}
              </span>
            ) : (
              <button type="button" className="link-button" onClick={() => zoomTo(i)}>
                {tree.names[i]}
              </button>
            )}
          </span>
        ))}
        {zoomIndex > 0 || freeViewport ? (
          <button type="button" className="plain-button reset" onClick={() => zoomTo(0)} data-testid="flame-reset">
            Reset zoom (Esc)
          </button>
        ) : null}
        {zoomMissing ? <span className="error-inline"> The zoomed frame is not in this graph (another metric, commit or budget); showing everything.</span> : null}
      </nav>
      <div
        className="flame-stage"
        ref={stageRef}
        onContextMenu={(e) => {
          if (!props.onFrameContextMenu || hover.index <= 0) return;
          e.preventDefault();
          props.onFrameContextMenu(tree, hover.index, e.clientX, e.clientY);
        }}
      >
        <FlameCanvas
          tree={tree}
          layout={layout}
          colours={colours}
          palettes={props.palettes ?? STABLE_PALETTES}
          matched={search?.matched ?? null}
          orientation={orientation}
          viewport={viewport}
          onViewportChange={onViewportChange}
          zoomIndex={zoomIndex}
          focusIndex={focusIndex}
          onHover={(index, x, y) => setHover({ index, x, y })}
          onActivate={zoomTo}
          maxHeight={props.maxHeight}
          label={props.label ?? `${time ? "Time-order flame graph" : "Flame graph"} of ${props.metric ?? "the run"}: ${tree.count - 1} ${time ? "cells" : "frames"}. Use the keyboard: arrows walk the stack, Enter zooms, ? lists keys.`}
          mode={prepared.kind}
          onTimeOrderPaint={props.timeOrder?.onPaint}
        />
        {hover.index >= 0 ? (
          <div className="flame-tooltip" style={tooltipStyle} data-testid="flame-tooltip" role="tooltip">
            {details(hover.index, "tooltip")}
          </div>
        ) : null}
        {help ? <KeyboardHelp onClose={() => setHelp(false)} /> : null}
      </div>
      {!props.compact ? (
        <div className="flame-details" aria-live="polite" data-testid="flame-details">
          {shown >= 0 ? (
            <>
              <strong>{tree.names[shown]}</strong> {formatLocation(tree.files[shown], tree.lines[shown]) ?? ""} · total {valueText(tree.total[shown])} ({formatPercent(tree.total[shown], rootTotal)}) · self {valueText(tree.self[shown])}
              {props.onOpenFunction && shown > 0 ? (
                <button type="button" className="link-button" onClick={() => props.onOpenFunction!(tree.frameKeys[shown])}>
                  show in sandwich
                </button>
              ) : null}
            </>
          ) : (
            <span className="tip-muted">
              {tree.count - 1} {time ? "cells" : "frames"} · total {valueText(rootTotal)}
              {time ? ` over ${formatValue(time.end[0] - time.start[0], "ns")}` : ""}. Hover a frame for details, click to zoom, press ? for keys.
            </span>
          )}
        </div>
      ) : null}
    </div>
  );
}
