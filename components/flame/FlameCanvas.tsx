"use client";

import { scaleLinear } from "d3";
import { useEffect, useRef, useState } from "react";
import { firstVisible, nodeAt, panViewport, zoomViewport, type FlameLayout, type Viewport } from "../../analysis/flame/layout";
import type { FlameTree } from "../../analysis/flame/tree";

import { ROW_HEIGHT } from "./constants";

export { ROW_HEIGHT };
const LABEL_MIN_PX = 28;
const CHAR_PX = 6.6;

export interface FlameCanvasProps {
  tree: FlameTree;
  layout: FlameLayout;
  /** Palette index per node. */
  colours: Uint8Array;
  /** Palettes for light and dark backgrounds, same length; the last entry is the dimmed colour. */
  palettes: { light: string[]; dark: string[] };
  /** When set, nodes with 0 are drawn dimmed (search). */
  matched?: Uint8Array | null;
  orientation: "flame" | "icicle";
  viewport: Viewport;
  onViewportChange: (v: Viewport) => void;
  /** The zoomed node: its ancestors are drawn as context. */
  zoomIndex: number;
  focusIndex: number;
  onHover: (index: number, clientX: number, clientY: number) => void;
  onActivate: (index: number) => void;
  /** Largest height before the graph scrolls. */
  maxHeight?: number;
  label: string;
  testId?: string;
}

/**
 * Draws a flame graph on one <canvas>: rows are culled by binary search on the viewport, rects
 * are batched by palette colour (one fill per colour), and labels only go where they fit.
 */
export function FlameCanvas(props: FlameCanvasProps) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const boxRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const [dark, setDark] = useState(false);
  const drag = useRef<{ x: number; v: Viewport; moved: boolean } | null>(null);
  const painted = useRef(false);
  const latest = useRef(props);
  latest.current = props;
  const rows = props.tree.maxDepth + 1;
  const height = rows * ROW_HEIGHT;

  useEffect(() => {
    const box = boxRef.current!;
    const observer = new ResizeObserver(() => setWidth(box.clientWidth));
    observer.observe(box);
    setWidth(box.clientWidth);
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    setDark(media.matches);
    const onTheme = () => setDark(media.matches);
    media.addEventListener("change", onTheme);
    return () => {
      observer.disconnect();
      media.removeEventListener("change", onTheme);
    };
  }, []);

  // Ctrl + wheel zooms, Shift + wheel or a horizontal wheel pans. React's wheel listeners are
  // passive, so this one is native to be able to stop the page from zooming instead.
  useEffect(() => {
    const box = boxRef.current!;
    const onWheel = (e: WheelEvent) => {
      const p = latest.current;
      const rect = canvasRef.current!.getBoundingClientRect();
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        const at = p.viewport.x0 + ((e.clientX - rect.left) / rect.width) * (p.viewport.x1 - p.viewport.x0);
        p.onViewportChange(zoomViewport(p.viewport, Math.exp(e.deltaY * 0.002), at));
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        const dx = e.shiftKey ? e.deltaY : e.deltaX;
        p.onViewportChange(panViewport(p.viewport, dx / Math.max(1, rect.width)));
      }
    };
    box.addEventListener("wheel", onWheel, { passive: false });
    return () => box.removeEventListener("wheel", onWheel);
  }, []);

  // Flame orientation starts scrolled to the bottom, where the roots are.
  useEffect(() => {
    const box = boxRef.current;
    if (box && props.orientation === "flame") box.scrollTop = box.scrollHeight;
  }, [props.orientation, props.tree]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || width === 0) return;
    const frame = requestAnimationFrame(() => {
      const start = performance.now();
      draw(canvas, latest.current, width, height, dark);
      const end = performance.now();
      performance.measure("emberscope:flame-frame", { start, end });
      if (!painted.current) {
        painted.current = true;
        performance.mark("emberscope:flame-paint");
      }
    });
    return () => cancelAnimationFrame(frame);
  }, [width, height, dark, props.tree, props.layout, props.colours, props.matched, props.orientation, props.viewport, props.zoomIndex, props.focusIndex, props.palettes]);

  const hit = (clientX: number, clientY: number): number => {
    const canvas = canvasRef.current!;
    const rect = canvas.getBoundingClientRect();
    const px = clientX - rect.left;
    const py = clientY - rect.top;
    const row = Math.floor(py / ROW_HEIGHT);
    const depth = props.orientation === "icicle" ? row : rows - 1 - row;
    const fx = props.viewport.x0 + (px / rect.width) * (props.viewport.x1 - props.viewport.x0);
    return nodeAt(props.layout, depth, fx);
  };

  return (
    <div
      ref={boxRef}
      className="flame-canvas-box"
      style={{ maxHeight: props.maxHeight ?? 560 }}
      data-testid={props.testId ?? "flame-canvas-box"}
    >
      <canvas
        ref={canvasRef}
        role="img"
        aria-label={props.label}
        data-testid="flame-canvas"
        data-rows={rows}
        data-orientation={props.orientation}
        style={{ width: "100%", height, display: "block", cursor: drag.current?.moved ? "grabbing" : "pointer" }}
        onMouseMove={(e) => {
          if (drag.current) {
            const dx = e.clientX - drag.current.x;
            if (Math.abs(dx) > 3) drag.current.moved = true;
            if (drag.current.moved) props.onViewportChange(panViewport(drag.current.v, -dx / Math.max(1, width)));
            return;
          }
          props.onHover(hit(e.clientX, e.clientY), e.clientX, e.clientY);
        }}
        onMouseLeave={() => {
          drag.current = null;
          props.onHover(-1, 0, 0);
        }}
        onMouseDown={(e) => {
          if (e.button === 0) drag.current = { x: e.clientX, v: props.viewport, moved: false };
        }}
        onMouseUp={(e) => {
          const moved = drag.current?.moved;
          drag.current = null;
          if (!moved) {
            const i = hit(e.clientX, e.clientY);
            if (i >= 0) props.onActivate(i);
          }
        }}
      />
    </div>
  );
}

function draw(canvas: HTMLCanvasElement, p: FlameCanvasProps, width: number, height: number, dark: boolean) {
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
  }
  const ctx = canvas.getContext("2d", { alpha: false })!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const style = getComputedStyle(canvas);
  ctx.fillStyle = style.getPropertyValue("--bg").trim() || (dark ? "#15181c" : "#ffffff");
  ctx.fillRect(0, 0, width, height);
  const palette = dark ? p.palettes.dark : p.palettes.light;
  const dim = palette.length - 1;
  const { tree, layout, colours, matched, viewport } = p;
  const x = scaleLinear().domain([viewport.x0, viewport.x1]).range([0, width]);
  const pxPerUnit = width / (viewport.x1 - viewport.x0);
  const rows = tree.maxDepth + 1;
  const buckets: number[][] = palette.map(() => []);
  const labels: number[] = [];
  const yOf = (depth: number) => (p.orientation === "icicle" ? depth : rows - 1 - depth) * ROW_HEIGHT;
  for (let d = 0; d < rows; d++) {
    const row = layout.byDepth[d];
    const y = yOf(d);
    for (let j = firstVisible(layout, row, viewport.x0); j < row.length; j++) {
      const i = row[j];
      if (layout.x[i] >= viewport.x1) break;
      const w = layout.w[i] * pxPerUnit;
      if (w < 0.4) continue;
      const left0 = x(layout.x[i]);
      const left = Math.max(-1, left0);
      const right = Math.min(width + 1, left0 + w);
      const colour = matched && !matched[i] ? dim : colours[i];
      buckets[colour].push(left, y, Math.max(0.4, right - left - (w > 3 ? 1 : 0)));
      if (right - left >= LABEL_MIN_PX) labels.push(i, left, right, y);
    }
  }
  for (let c = 0; c < buckets.length; c++) {
    const b = buckets[c];
    if (!b.length) continue;
    ctx.fillStyle = palette[c];
    ctx.beginPath();
    for (let k = 0; k < b.length; k += 3) ctx.rect(b[k], b[k + 1], b[k + 2], ROW_HEIGHT - 1);
    ctx.fill();
  }
  ctx.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  ctx.textBaseline = "middle";
  const fg = dark ? "#e6e9ed" : "#1d2228";
  const muted = dark ? "#6b7580" : "#8a939c";
  for (let k = 0; k < labels.length; k += 4) {
    const i = labels[k];
    const left = Math.max(0, labels[k + 1]);
    const room = labels[k + 2] - left - 8;
    const chars = Math.floor(room / CHAR_PX);
    if (chars < 2) continue;
    const name = tree.names[i];
    ctx.fillStyle = matched && !matched[i] ? muted : fg;
    ctx.fillText(name.length > chars ? `${name.slice(0, chars - 1)}…` : name, left + 4, labels[k + 3] + ROW_HEIGHT / 2);
  }
  const outline = (i: number, colour: string, lineWidth: number) => {
    if (i < 0 || i >= tree.count) return;
    const left = Math.max(0, x(layout.x[i]));
    const right = Math.min(width, x(layout.x[i] + layout.w[i]));
    if (right <= left) return;
    ctx.strokeStyle = colour;
    ctx.lineWidth = lineWidth;
    ctx.strokeRect(left + 1, yOf(tree.depth[i]) + 1, Math.max(1, right - left - 2), ROW_HEIGHT - 3);
  };
  const focus = getComputedStyle(canvas).getPropertyValue("--focus").trim() || "#2563eb";
  outline(p.focusIndex, focus, 2);
}
