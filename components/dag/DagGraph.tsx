"use client";

import { linkVertical, select, zoom, zoomIdentity, type ZoomBehavior } from "d3";
import { useCallback, useEffect, useMemo, useRef } from "react";
import type { NodeTiming } from "../../analysis/critical-path/report";
import type { WorkflowEdgeKind, WorkflowNode } from "../../analysis/workflow/compile";
import { formatValue } from "../../analysis/flame/format";
import { colourFor } from "../trace/time-format";
import { NODE_H, NODE_W, type DagLayout, type LayoutElement } from "./dag-layout";


const PAD = 48;
const MIN_HEIGHT = 240;
const MAX_HEIGHT = 640;
const KIND_RANK: Record<WorkflowEdgeKind, number> = { data_ref: 0, follows_from: 1, child: 2 };
const link = linkVertical<[[number, number], [number, number]], [number, number]>()
  .source((d) => d[0])
  .target((d) => d[1]);

function isDark(): boolean {
  return typeof window !== "undefined" && window.matchMedia?.("(prefers-color-scheme: dark)").matches;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * The workflow DAG as SVG: one box per node (tool, own duration, slack; side effect as a badge,
 * unknown ones dashed; the critical path outlined and its edges drawn thick), "+N" boxes for folds,
 * edges by kind (data solid, order dashed, subagent dotted). Drag to pan, wheel to scroll
 * (shift: sideways), ctrl+wheel or +/− to zoom, 0 to fit; Esc clears the selection.
 */
export function DagGraph(props: {
  layout: DagLayout;
  nodes: readonly WorkflowNode[];
  timing: readonly NodeTiming[];
  edgeKinds: readonly WorkflowEdgeKind[];
  selected: number | null;
  /** Bumped when the selection came from elsewhere (a reference, the Gantt): the graph pans to it. */
  reveal: number;
  onSelect: (node: number | null) => void;
  onOpenFold: (fold: string) => void;
}) {
  const { layout, nodes, timing } = props;
  const svgRef = useRef<SVGSVGElement>(null);
  const sceneRef = useRef<SVGGElement>(null);
  const zoomRef = useRef<ZoomBehavior<SVGSVGElement, unknown> | null>(null);
  const dark = isDark();

  useEffect(() => {
    const svg = select(svgRef.current!);
    const zoomer = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.05, 2.5])
      .filter((e: Event) => (e.type === "wheel" ? (e as WheelEvent).ctrlKey || (e as WheelEvent).metaKey : !(e as MouseEvent).button))
      .on("zoom", (e: { transform: { toString(): string } }) => sceneRef.current?.setAttribute("transform", e.transform.toString()));
    svg.call(zoomer).on("dblclick.zoom", null);
    svg.on(
      "wheel.scroll",
      (e: WheelEvent) => {
        if (e.ctrlKey || e.metaKey) return;
        e.preventDefault();
        const k = (svgRef.current as unknown as { __zoom?: { k: number } }).__zoom?.k ?? 1;
        const dx = e.shiftKey ? e.deltaY : e.deltaX;
        const dy = e.shiftKey ? 0 : e.deltaY;
        zoomer.translateBy(svg, -dx / k, -dy / k);
      },
      { passive: false },
    );
    zoomRef.current = zoomer;
    return () => {
      svg.on(".zoom", null).on("wheel.scroll", null);
    };
  }, []);

  const fit = useCallback(() => {
    const svg = svgRef.current;
    const zoomer = zoomRef.current;
    if (!svg || !zoomer) return;
    const width = svg.clientWidth || 900;
    const drawing = layout.maxX - layout.minX + NODE_W + PAD;
    const k = Math.max(0.3, Math.min(1, width / drawing));
    const centre = (layout.minX + layout.maxX) / 2;
    select(svg).call(zoomer.transform, zoomIdentity.translate(width / 2 - k * centre, PAD).scale(k));
  }, [layout]);

  // A new drawing opens fitted to the width, its first row at the top.
  useEffect(() => fit(), [fit]);

  // The first paint of a drawing: what the benchmark times.
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      performance.mark("emberscope:dag-paint");
      svgRef.current?.setAttribute("data-painted", String(layout.elements.length));
    });
    return () => cancelAnimationFrame(frame);
  }, [layout]);

  useEffect(() => {
    if (props.selected === null || props.reveal === 0) return;
    const element = layout.elements[layout.elementOf[props.selected]];
    const svg = svgRef.current;
    if (!element || !svg || !zoomRef.current) return;
    select(svg).transition().duration(250).call(zoomRef.current.translateTo, element.x, element.y + NODE_H / 2);
  }, [props.reveal]);

  const edges = useMemo(
    () =>
      layout.edges
        .map((edge, i) => {
          const a = layout.elements[edge.from];
          const b = layout.elements[edge.to];
          const kind = edge.edges.reduce<WorkflowEdgeKind>((best, k) => (KIND_RANK[props.edgeKinds[k]] < KIND_RANK[best] ? props.edgeKinds[k] : best), "child");
          return { key: i, d: link([[a.x, a.y + NODE_H], [b.x, b.y]]) ?? "", kind, onPath: edge.onPath };
        })
        // The path's edges last, drawn over the rest.
        .sort((a, b) => Number(a.onPath) - Number(b.onPath)),
    [layout, props.edgeKinds],
  );

  const onKeyDown = (e: React.KeyboardEvent) => {
    const svg = svgRef.current;
    const zoomer = zoomRef.current;
    if (!svg || !zoomer) return;
    if (e.key === "Escape") props.onSelect(null);
    else if (e.key === "+" || e.key === "=") select(svg).call(zoomer.scaleBy, 1.25);
    else if (e.key === "-") select(svg).call(zoomer.scaleBy, 0.8);
    else if (e.key === "0") fit();
    else return;
    e.preventDefault();
  };

  const box = (element: LayoutElement, i: number) => {
    const x = element.x - NODE_W / 2;
    if (element.kind === "fold") {
      return (
        <g key={element.id} className="dag-node fold" transform={`translate(${x},${element.y})`} onClick={() => props.onOpenFold(element.id)} data-testid="dag-fold" data-fold={element.id} data-members={element.members.length}>
          <title>{`${element.members.length} calls folded here (${element.onPath} on the critical path): click to show them`}</title>
          <rect className="box" width={NODE_W} height={NODE_H} rx={6} />
          <text className="tool" x={10} y={18}>
            +{element.members.length.toLocaleString("en-US")} calls
          </text>
          <text className="facts" x={10} y={35}>
            {element.onPath ? `${element.onPath} on the path · ` : ""}click to open
          </text>
        </g>
      );
    }
    const node = nodes[element.node];
    const t = timing[element.node];
    const classes = ["dag-node", t.on_path ? "on-path" : "", node.side_effect === "unknown" ? "unknown" : "", props.selected === element.node ? "selected" : ""].filter(Boolean).join(" ");
    const badge = node.side_effect === "unknown" ? "?" : node.side_effect === "write" ? "W" : "R";
    return (
      <g
        key={element.id}
        className={classes}
        transform={`translate(${x},${element.y})`}
        onClick={() => props.onSelect(element.node)}
        data-testid="dag-node"
        data-node={node.id}
        data-on-path={t.on_path ? "true" : "false"}
        data-index={i}
      >
        <title>{`${node.id} ${node.tool} (${node.agent})\n${formatValue(t.duration_ns, "ns")} own time · earliest start ${formatValue(t.earliest_start_ns, "ns")} · slack ${formatValue(t.slack_ns, "ns")}\nside effect ${node.side_effect}${node.side_effect_reviewed ? " (reviewed)" : node.side_effect === "unknown" ? " — unreviewed: blocks the workflow" : ""}`}</title>
        {props.selected === element.node ? <rect className="halo" x={-5} y={-5} width={NODE_W + 10} height={NODE_H + 10} rx={9} /> : null}
        <rect className="box" width={NODE_W} height={NODE_H} rx={6} />
        <rect x={0} y={0} width={5} height={NODE_H} rx={2} fill={colourFor(node.tool, dark)} />
        <text className="tool" x={12} y={18}>
          {clip(node.tool, 19)}
        </text>
        <text className="id" x={NODE_W - 30} y={17} textAnchor="end">
          {node.id}
        </text>
        <text className={`badge ${node.side_effect}`} x={NODE_W - 9} y={17} textAnchor="end">
          {badge}
          {node.side_effect_reviewed ? "✓" : ""}
        </text>
        <text className="facts" x={12} y={35}>
          {formatValue(t.duration_ns, "ns")} · {t.on_path ? "on the path" : `slack ${formatValue(t.slack_ns, "ns")}`}
        </text>
      </g>
    );
  };

  return (
    <svg
      ref={svgRef}
      data-testid="dag-svg"
      tabIndex={0}
      role="img"
      aria-label={`Workflow DAG: ${nodes.length} nodes in ${layout.rows} rows${layout.folded ? `, ${layout.folded} folded` : ""}; the critical path is outlined. Drag to pan, wheel to scroll, ctrl+wheel or +/− to zoom, 0 fits.`}
      onKeyDown={onKeyDown}
      style={{ height: Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, layout.height + 2 * PAD)) }}
    >
      <defs>
        <marker id="dag-arrow" viewBox="0 0 8 8" refX={7} refY={4} markerWidth={7} markerHeight={7} orient="auto">
          <path d="M0,0 L8,4 L0,8 z" className="dag-arrow" />
        </marker>
        <marker id="dag-arrow-path" viewBox="0 0 8 8" refX={7} refY={4} markerWidth={5} markerHeight={5} orient="auto">
          <path d="M0,0 L8,4 L0,8 z" className="dag-arrow on-path" />
        </marker>
      </defs>
      <g ref={sceneRef}>
        {edges.map((e) => (
          <path key={e.key} d={e.d} className={`dag-edge ${e.kind}${e.onPath ? " on-path" : ""}`} markerEnd={e.onPath ? "url(#dag-arrow-path)" : "url(#dag-arrow)"} />
        ))}
        {layout.elements.map(box)}
      </g>
    </svg>
  );
}
