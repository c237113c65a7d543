"use client";

import { linkVertical, select, zoom, zoomIdentity, zoomTransform, type ZoomBehavior } from "d3";
import { useCallback, useEffect, useMemo, useRef } from "react";
import type { NodeTiming } from "../../analysis/critical-path/report";
import type { WorkflowEdgeKind, WorkflowNode } from "../../analysis/workflow/compile";
import { formatValue } from "../../analysis/flame/format";
import { prefersDark } from "../canvas";
import { colourFor } from "../trace/time-format";
import { NODE_H, NODE_W, type DagLayout, type LayoutElement } from "./dag-layout";


const PAD = 48;
/** The smallest scale a drawing opens at. */
const READABLE = 0.75;
const MIN_HEIGHT = 240;
const MAX_HEIGHT = 640;
/** Below the last row: the hidden-edges note. */
const NOTE_ROOM = 24;
const KIND_RANK: Record<WorkflowEdgeKind, number> = { data_ref: 0, follows_from: 1, child: 2 };
const link = linkVertical<[[number, number], [number, number]], [number, number]>()
  .source((d) => d[0])
  .target((d) => d[1]);

/**
 * An edge from the bottom of one box to the top of another. One that skips rows between boxes
 * nearly above each other (the straight path, a call and what it read long before) bows out to
 * the right, past the boxes in between, instead of running through them.
 */
function edgePath(a: LayoutElement, b: LayoutElement): string {
  const rows = b.row - a.row;
  if (rows < 2 || Math.abs(b.x - a.x) >= NODE_W) return link([[a.x, a.y + NODE_H], [b.x, b.y]]) ?? "";
  const bow = NODE_W / 2 + 14 + 4 * Math.min(rows, 12);
  const x0 = a.x + NODE_W / 4;
  const x1 = b.x + NODE_W / 4;
  return `M${x0},${a.y + NODE_H} C${x0 + bow},${a.y + NODE_H + 30} ${x1 + bow},${b.y - 30} ${x1},${b.y}`;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * The workflow DAG as SVG: one box per node (tool, own duration, slack; side effect as a badge,
 * unknown ones dashed; the critical path outlined and its edges drawn thick), "+N" boxes for folds,
 * edges by kind (data solid, order dashed, subagent dotted). Drag to pan, wheel to scroll
 * (shift: sideways), ctrl+wheel or +/− to zoom, 0 shows it whole; Esc clears the selection.
 */
export function DagGraph(props: {
  layout: DagLayout;
  nodes: readonly WorkflowNode[];
  timing: readonly NodeTiming[];
  edgeKinds: readonly WorkflowEdgeKind[];
  selected: number | null;
  /** A node to pan to (a selection from elsewhere, an opened fold); a new object each time. */
  reveal: { node: number } | null;
  /** The path's first node: where a drawing too wide to read whole opens. */
  start: number | null;
  onSelect: (node: number | null) => void;
  onOpenFold: (fold: string) => void;
}) {
  const { layout, nodes, timing } = props;
  const svgRef = useRef<SVGSVGElement>(null);
  const sceneRef = useRef<SVGGElement>(null);
  const zoomRef = useRef<ZoomBehavior<SVGSVGElement, unknown> | null>(null);
  const dark = prefersDark();

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

  /**
   * Fits the drawing's width; `readable`: never below READABLE (the boxes' text stays legible),
   * centred on the path's first step when the drawing is wider than that.
   */
  const fit = useCallback(
    (readable: boolean) => {
      const svg = svgRef.current;
      const zoomer = zoomRef.current;
      if (!svg || !zoomer) return;
      const width = svg.clientWidth || 900;
      const fitted = Math.min(1, width / (layout.maxX - layout.minX + NODE_W + PAD));
      const k = readable ? Math.max(READABLE, fitted) : Math.max(0.05, fitted);
      const start = props.start === null ? undefined : layout.elements[layout.elementOf[props.start]];
      const centre = k > fitted && start ? start.x : (layout.minX + layout.maxX) / 2;
      select(svg).call(zoomer.transform, zoomIdentity.translate(width / 2 - k * centre, PAD).scale(k));
    },
    [layout, props.start],
  );

  // A new workflow opens at a readable scale, its first row at the top (opening a fold or a
  // what-if keeps the view where it is).
  useEffect(() => fit(true), [props.nodes]);

  // The first paint of a drawing: what the benchmark times.
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      performance.mark("emberscope:dag-paint");
      svgRef.current?.setAttribute("data-painted", String(layout.elements.length));
    });
    return () => cancelAnimationFrame(frame);
  }, [layout]);

  useEffect(() => {
    if (props.reveal === null) return;
    const element = layout.elements[layout.elementOf[props.reveal.node]];
    const svg = svgRef.current;
    if (!element || !svg || !zoomRef.current) return;
    const width = svg.clientWidth || 900;
    const height = svg.clientHeight || 600;
    // A node already in full view stays where it is; another comes a third of the way down, so the rows after it show.
    const t = zoomTransform(svg);
    const [left, top] = t.apply([element.x - NODE_W / 2, element.y]);
    const [right, bottom] = t.apply([element.x + NODE_W / 2, element.y + NODE_H]);
    if (left >= 0 && right <= width && top >= PAD && bottom <= height - PAD / 2) return;
    const at: [number, number] = [width / 2, Math.min(PAD * 3, height / 3)];
    select(svg).transition().duration(250).call(zoomRef.current.translateTo, element.x, element.y + NODE_H / 2, at);
  }, [props.reveal]);

  // Order edges another route already implies are left out (a transitive reduction, as
  // Graphviz's tred draws), except on the path and around the selected node; data references stay.
  const selectedElement = props.selected === null ? -1 : layout.elementOf[props.selected];
  const { edges, hidden } = useMemo(() => {
    const drawn: { key: number; d: string; kind: WorkflowEdgeKind; onPath: boolean; selected: boolean }[] = [];
    let hidden = 0;
    layout.edges.forEach((edge, i) => {
      const kind = edge.edges.reduce<WorkflowEdgeKind>((best, k) => (KIND_RANK[props.edgeKinds[k]] < KIND_RANK[best] ? props.edgeKinds[k] : best), "child");
      const selected = edge.from === selectedElement || edge.to === selectedElement;
      if (edge.implied && !edge.onPath && !selected && kind !== "data_ref") {
        hidden++;
        return;
      }
      drawn.push({ key: i, d: edgePath(layout.elements[edge.from], layout.elements[edge.to]), kind, onPath: edge.onPath, selected });
    });
    // The selected node's and the path's edges last, drawn over the rest.
    drawn.sort((a, b) => Number(a.onPath || a.selected) - Number(b.onPath || b.selected));
    return { edges: drawn, hidden };
  }, [layout, props.edgeKinds, selectedElement]);

  const onKeyDown = (e: React.KeyboardEvent) => {
    const svg = svgRef.current;
    const zoomer = zoomRef.current;
    if (!svg || !zoomer) return;
    if (e.key === "Escape") props.onSelect(null);
    else if (e.key === "+" || e.key === "=") select(svg).call(zoomer.scaleBy, 1.25);
    else if (e.key === "-") select(svg).call(zoomer.scaleBy, 0.8);
    else if (e.key === "0") fit(false);
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
    <>
      <svg
        ref={svgRef}
        data-testid="dag-svg"
        tabIndex={0}
        role="img"
        aria-label={`Workflow DAG: ${nodes.length} nodes in ${layout.rows} rows${layout.folded ? `, ${layout.folded} folded` : ""}; the critical path is outlined. Drag to pan, wheel to scroll, ctrl+wheel or +/− to zoom, 0 shows it whole.`}
        data-hidden-edges={hidden}
        onKeyDown={onKeyDown}
        style={{ height: Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, layout.height + 2 * PAD + NOTE_ROOM)) }}
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
            <path key={e.key} d={e.d} className={`dag-edge ${e.kind}${e.onPath ? " on-path" : ""}${e.selected ? " selected" : ""}`} markerEnd={e.onPath ? "url(#dag-arrow-path)" : "url(#dag-arrow)"} />
          ))}
          {layout.elements.map(box)}
        </g>
      </svg>
      {hidden ? (
        <p className="cp-graph-note tip-muted" data-testid="dag-hidden-edges">
          {hidden.toLocaleString("en-US")} order edges another route already implies are not drawn; a selected call shows all of its own.
        </p>
      ) : null}
    </>
  );
}
