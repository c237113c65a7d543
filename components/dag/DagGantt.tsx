"use client";

import { scaleLinear } from "d3";
import { useEffect, useMemo, useRef, useState } from "react";
import type { WorkflowNode } from "../../analysis/workflow/compile";
import { hiDpiContext, prefersDark } from "../canvas";
import { useElementWidth } from "../use-element-width";
import { colourFor, formatNs } from "../trace/time-format";

const GUTTER = 130;
const AXIS = 20;
const ROW = 16;
const AGENT_GAP = 6;
const MAX_HEIGHT = 420;

interface Bar {
  node: number;
  start: number;
  end: number;
  lane: number;
}

interface Lanes {
  bars: Bar[];
  /** Per agent: its name, first lane and lane count. */
  agents: { agent: string; first: number; lanes: number }[];
  laneY: number[];
  height: number;
  first: number;
  last: number;
}

/** Each agent's calls at their recorded start and duration, overlapping calls on lanes of their own. */
function packLanes(nodes: readonly WorkflowNode[]): Lanes {
  const byAgent = new Map<string, number[]>();
  nodes.forEach((n, i) => {
    const list = byAgent.get(n.agent) ?? [];
    list.push(i);
    byAgent.set(n.agent, list);
  });
  const bars: Bar[] = [];
  const agents: Lanes["agents"] = [];
  const laneY: number[] = [];
  let y = AXIS + 4;
  let first = Infinity;
  let last = -Infinity;
  for (const [agent, list] of byAgent) {
    list.sort((a, b) => nodes[a].recorded.start_ns - nodes[b].recorded.start_ns || a - b);
    const ends: number[] = [];
    const base = laneY.length;
    for (const i of list) {
      const start = nodes[i].recorded.start_ns;
      const end = start + nodes[i].recorded.duration_ns;
      let lane = ends.findIndex((e) => e <= start);
      if (lane < 0) lane = ends.push(end) - 1;
      else ends[lane] = end;
      bars.push({ node: i, start, end, lane: base + lane });
      first = Math.min(first, start);
      last = Math.max(last, end);
    }
    agents.push({ agent, first: base, lanes: ends.length });
    for (let l = 0; l < ends.length; l++) laneY.push(y + l * ROW);
    y += ends.length * ROW + AGENT_GAP;
  }
  return { bars, agents, laneY, height: y, first: Number.isFinite(first) ? first : 0, last: Number.isFinite(last) ? last : 1 };
}

/**
 * The recorded timeline: one row group per agent, each call a bar at its recorded start and
 * duration (concurrent calls stacked), the critical path's calls outlined and underlined. Click a
 * bar to select its node.
 */
export function DagGantt(props: { nodes: readonly WorkflowNode[]; onPath: ReadonlySet<number>; selected: number | null; onSelect: (node: number) => void; pathLabel: string }) {
  const { nodes } = props;
  const lanes = useMemo(() => packLanes(nodes), [nodes]);
  const [width, wrapRef] = useElementWidth<HTMLDivElement>(400);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<{ bar: Bar; x: number; y: number } | null>(null);
  const x = useMemo(() => scaleLinear().domain([lanes.first, Math.max(lanes.last, lanes.first + 1)]).range([GUTTER, width - 10]), [lanes, width]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const ctx = hiDpiContext(canvas, width, lanes.height, { sizeElement: true });
    const styles = getComputedStyle(canvas);
    const css = (name: string, fallback: string) => styles.getPropertyValue(name).trim() || fallback;
    const dark = prefersDark();
    const [fg, muted, border, accent, focus] = [css("--fg", "#1d2228"), css("--fg-muted", "#5b6570"), css("--border", "#d9dde2"), css("--accent", "#c2410c"), css("--focus", "#2563eb")];
    ctx.clearRect(0, 0, width, lanes.height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // Axis: time since the first call.
    ctx.strokeStyle = border;
    ctx.fillStyle = muted;
    for (const t of x.ticks(Math.max(2, Math.floor((width - GUTTER) / 110)))) {
      const px = Math.round(x(t)) + 0.5;
      ctx.globalAlpha = 0.4;
      ctx.beginPath();
      ctx.moveTo(px, AXIS - 4);
      ctx.lineTo(px, lanes.height);
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.fillText(formatNs(t - lanes.first), px + 3, AXIS / 2);
    }
    for (const a of lanes.agents) {
      ctx.fillStyle = fg;
      ctx.fillText(a.agent, 8, lanes.laneY[a.first] + ROW / 2 - 1, GUTTER - 16);
    }
    let onPath = 0;
    for (const bar of lanes.bars) {
      const node = nodes[bar.node];
      const x0 = x(bar.start);
      const w = Math.max(1.5, x(bar.end) - x0);
      const y = lanes.laneY[bar.lane];
      const critical = props.onPath.has(bar.node);
      ctx.globalAlpha = critical || props.onPath.size === 0 ? 1 : 0.5;
      ctx.fillStyle = colourFor(node.tool, dark);
      ctx.fillRect(x0, y + 1, w, ROW - 5);
      ctx.globalAlpha = 1;
      if (critical) {
        onPath++;
        ctx.strokeStyle = accent;
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x0 + 0.75, y + 1.75, Math.max(0.5, w - 1.5), ROW - 6.5);
        ctx.fillStyle = accent;
        ctx.fillRect(x0, y + ROW - 4, w, 2.5);
      }
      if (props.selected === bar.node) {
        ctx.strokeStyle = focus;
        ctx.lineWidth = 2;
        ctx.strokeRect(x0 - 1, y, w + 2, ROW - 2);
      }
      if (w > 36) {
        ctx.fillStyle = dark ? "#f3f4f6" : "#111827";
        ctx.fillText(node.tool, x0 + 3, y + (ROW - 4) / 2, w - 6);
      }
    }
    ctx.lineWidth = 1;
    canvas.dataset.bars = String(lanes.bars.length);
    canvas.dataset.pathBars = String(onPath);
  }, [lanes, x, width, nodes, props.onPath, props.selected]);

  const barAt = (px: number, py: number): Bar | null => {
    const lane = lanes.laneY.findIndex((y) => py >= y && py < y + ROW);
    if (lane < 0) return null;
    const t = x.invert(px);
    const tolerance = x.invert(px + 3) - t;
    let best: Bar | null = null;
    for (const bar of lanes.bars) if (bar.lane === lane && bar.start - tolerance <= t && bar.end + tolerance >= t) best = bar;
    return best;
  };
  const at = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    return { px: e.clientX - rect.left, py: e.clientY - rect.top };
  };

  return (
    <div className="cp-gantt" ref={wrapRef} data-testid="dag-gantt">
      <div style={{ maxHeight: MAX_HEIGHT, overflowY: "auto" }}>
        <canvas
          ref={canvasRef}
          data-testid="dag-gantt-canvas"
          role="img"
          aria-label={`Recorded timeline of ${nodes.length} calls on ${lanes.agents.length} agents; ${props.pathLabel} outlined.`}
          onMouseMove={(e) => {
            const { px, py } = at(e);
            const bar = barAt(px, py);
            setHover(bar ? { bar, x: px, y: py } : null);
          }}
          onMouseLeave={() => setHover(null)}
          onClick={(e) => {
            const { px, py } = at(e);
            const bar = barAt(px, py);
            if (bar) props.onSelect(bar.node);
          }}
        />
      </div>
      {hover ? (
        <div className="trace-tooltip" style={{ left: Math.min(hover.x + 12, width - 280), top: hover.y + 14 }}>
          <div className="tt-name">
            {nodes[hover.bar.node].id} {nodes[hover.bar.node].tool}
          </div>
          <div className="num">
            {formatNs(hover.bar.end - hover.bar.start)} at {formatNs(hover.bar.start - lanes.first)}
          </div>
        </div>
      ) : null}
    </div>
  );
}
