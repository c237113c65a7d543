"use client";

import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { firstVisible, nodeAt, panViewport, zoomViewport, type FlameLayout, type Viewport } from "../../analysis/flame/layout";
import type { FlameTree } from "../../analysis/flame/tree";

import { ROW_HEIGHT } from "./constants";
import { hiDpiContext } from "../canvas";

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
  /** Which layout is drawn (for tests and assistive text). */
  mode?: string;
  /** Called when a time-order tree is first drawn (each tree once). */
  onTimeOrderPaint?: () => void;
  testId?: string;
}

/**
 * Draws a flame graph on one <canvas>: rows are culled by binary search on the viewport, rects
 * are batched by palette colour (one fill per colour), and labels only go where they fit.
 *
 * Zoom and pan draw straight from the input handler (Chrome aligns wheel and mouse moves with
 * frames) and only then tell the parent, whose re-render finds the frame already drawn: input
 * to pixels never waits for React.
 */
export function FlameCanvas(props: FlameCanvasProps) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const boxRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const [dark, setDark] = useState(false);
  const drag = useRef<{ x: number; v: Viewport; moved: boolean } | null>(null);
  const painted = useRef(false);
  const paintedTimeOrder = useRef(false);
  const paintedTree = useRef<unknown>(null);
  const latest = useRef(props);
  latest.current = props;
  // The viewport on screen: ahead of props.viewport while the parent catches up with an input.
  const view = useRef(props.viewport);
  const propViewport = useRef(props.viewport);
  if (propViewport.current !== props.viewport) {
    propViewport.current = props.viewport;
    view.current = props.viewport;
  }
  const drawn = useRef<unknown[]>([]);
  const theme = useRef<{ bg: string; focus: string } | null>(null);
  const rows = props.tree.maxDepth + 1;
  const height = rows * ROW_HEIGHT;
  const size = useRef({ width, height, dark });
  size.current = { width, height, dark };

  /** Draws now if anything drawn changed (the inputs are compared by identity). */
  const paint = () => {
    const canvas = canvasRef.current;
    const p = latest.current;
    const { width: w, height: h, dark: d } = size.current;
    if (!canvas || w === 0) return;
    const inputs = [w, h, d, boxRef.current?.scrollTop ?? 0, boxRef.current?.clientHeight ?? 0, p.tree, p.layout, p.colours, p.matched, p.orientation, view.current.x0, view.current.x1, p.zoomIndex, p.focusIndex, p.palettes];
    if (inputs.length === drawn.current.length && inputs.every((v, k) => v === drawn.current[k])) return;
    drawn.current = inputs;
    if (!theme.current) {
      const style = getComputedStyle(canvas);
      theme.current = { bg: style.getPropertyValue("--bg").trim() || (d ? "#15181c" : "#ffffff"), focus: style.getPropertyValue("--focus").trim() || "#2563eb" };
    }
    const start = performance.now();
    draw(canvas, p, view.current, w, h, d, theme.current);
    const end = performance.now();
    performance.measure("emberscope:flame-frame", { start, end });
    if (!painted.current) {
      painted.current = true;
      performance.mark("emberscope:flame-paint");
    } else if (paintedTree.current !== p.tree) {
      // Another tree in the same canvas (a transform, a metric): the benchmark times its repaint.
      performance.mark("emberscope:flame-repaint");
    }
    if (p.mode === "time-order" && paintedTree.current !== p.tree) p.onTimeOrderPaint?.();
    paintedTree.current = p.tree;
    // The first time-order frame (the benchmark reads it): time order arrives after its own fetch.
    if (p.mode === "time-order" && !paintedTimeOrder.current) {
      paintedTimeOrder.current = true;
      performance.mark("emberscope:time-order-paint");
    }
  };
  const paintRef = useRef(paint);
  paintRef.current = paint;

  /** An input moved the view: draw it at once, then let the parent know. */
  const moveTo = (v: Viewport) => {
    if (v.x0 === view.current.x0 && v.x1 === view.current.x1) return;
    view.current = v;
    paintRef.current();
    latest.current.onViewportChange(v);
  };
  const moveRef = useRef(moveTo);
  moveRef.current = moveTo;

  useLayoutEffect(() => {
    const box = boxRef.current!;
    const observer = new ResizeObserver(() => setWidth(box.clientWidth));
    observer.observe(box);
    setWidth(box.clientWidth);
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    setDark(media.matches);
    const onTheme = () => {
      theme.current = null;
      setDark(media.matches);
    };
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
      const v = view.current;
      const w = size.current.width;
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        const left = canvasRef.current!.getBoundingClientRect().left;
        const at = v.x0 + ((e.clientX - left) / Math.max(1, w)) * (v.x1 - v.x0);
        moveRef.current(zoomViewport(v, Math.exp(e.deltaY * 0.002), at));
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        const dx = e.shiftKey ? e.deltaY : e.deltaX;
        moveRef.current(panViewport(v, dx / Math.max(1, w)));
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

  // Props changed (data, search, focus, a zoom from the keyboard or breadcrumb): draw before paint.
  useLayoutEffect(() => paintRef.current());

  // Where the pointer rests over the canvas: a zoom from the keyboard moves the frames under it, and the tooltip follows.
  const pointer = useRef<{ x: number; y: number } | null>(null);
  const onHoverRef = useRef(props.onHover);
  onHoverRef.current = props.onHover;
  const hitRef = useRef<(x: number, y: number) => number>(() => -1);
  useEffect(() => {
    const at = pointer.current;
    if (at && canvasRef.current) onHoverRef.current(hitRef.current(at.x, at.y), at.x, at.y);
  }, [props.viewport, props.layout, props.orientation]);

  const hit = (clientX: number, clientY: number): number => {
    const canvas = canvasRef.current!;
    const rect = canvas.getBoundingClientRect();
    const px = clientX - rect.left;
    const py = clientY - rect.top;
    const row = Math.floor(py / ROW_HEIGHT);
    const depth = props.orientation === "icicle" ? row : rows - 1 - row;
    const fx = view.current.x0 + (px / rect.width) * (view.current.x1 - view.current.x0);
    return nodeAt(props.layout, depth, fx);
  };
  hitRef.current = hit;

  return (
    <div
      ref={boxRef}
      className="flame-canvas-box"
      style={{ maxHeight: props.maxHeight ?? 560 }}
      data-testid={props.testId ?? "flame-canvas-box"}
      onScroll={() => paint()}
    >
      <canvas
        ref={canvasRef}
        role="img"
        aria-label={props.label}
        data-testid="flame-canvas"
        data-rows={rows}
        data-orientation={props.orientation}
        data-mode={props.mode}
        style={{ width: "100%", height, display: "block", cursor: drag.current?.moved ? "grabbing" : "pointer" }}
        onMouseMove={(e) => {
          if (drag.current) {
            const dx = e.clientX - drag.current.x;
            if (Math.abs(dx) > 3) drag.current.moved = true;
            if (drag.current.moved) moveTo(panViewport(drag.current.v, -dx / Math.max(1, width)));
            return;
          }
          pointer.current = { x: e.clientX, y: e.clientY };
          props.onHover(hit(e.clientX, e.clientY), e.clientX, e.clientY);
        }}
        onMouseLeave={() => {
          pointer.current = null;
          drag.current = null;
          props.onHover(-1, 0, 0);
        }}
        onMouseDown={(e) => {
          if (e.button === 0) drag.current = { x: e.clientX, v: view.current, moved: false };
        }}
        onMouseUp={(e) => {
          const moved = drag.current?.moved;
          drag.current = null;
          // Only the main button zooms: a right-click opens the frame's menu and leaves the zoom alone.
          if (!moved && e.button === 0) {
            const i = hit(e.clientX, e.clientY);
            if (i >= 0) props.onActivate(i);
          }
        }}
      />
    </div>
  );
}

function draw(canvas: HTMLCanvasElement, p: FlameCanvasProps, viewport: Viewport, width: number, height: number, dark: boolean, theme: { bg: string; focus: string }) {
  const ctx = hiDpiContext(canvas, width, height, { alpha: false });
  ctx.fillStyle = theme.bg;
  ctx.fillRect(0, 0, width, height);
  const palette = dark ? p.palettes.dark : p.palettes.light;
  const dim = palette.length - 1;
  const { tree, layout, colours, matched } = p;
  const pxPerUnit = width / (viewport.x1 - viewport.x0);
  const xOf = (fx: number) => (fx - viewport.x0) * pxPerUnit;
  const rows = tree.maxDepth + 1;
  const buckets: number[][] = palette.map(() => []);
  const labels: number[] = [];
  const yOf = (depth: number) => (p.orientation === "icicle" ? depth : rows - 1 - depth) * ROW_HEIGHT;
  // Only rows inside the scrolled box are visible.
  const box = canvas.parentElement;
  const top = box ? box.scrollTop - ROW_HEIGHT : 0;
  const bottom = box ? box.scrollTop + box.clientHeight + ROW_HEIGHT : height;
  // Under 0.4 px a rect is not drawn; its width in layout units, to skip it without arithmetic.
  const minW = 0.4 / pxPerUnit;
  for (let d = 0; d < rows; d++) {
    const y = yOf(d);
    if (y < top || y > bottom) continue;
    const row = layout.byDepth[d];
    const lx = layout.x;
    const lw = layout.w;
    for (let j = firstVisible(layout, row, viewport.x0); j < row.length; j++) {
      const i = row[j];
      if (lx[i] >= viewport.x1) break;
      if (lw[i] < minW) continue;
      const w = lw[i] * pxPerUnit;
      const left0 = xOf(lx[i]);
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
  let fill = "";
  for (let k = 0; k < labels.length; k += 4) {
    const i = labels[k];
    const left = Math.max(0, labels[k + 1]);
    const room = labels[k + 2] - left - 8;
    const chars = Math.floor(room / CHAR_PX);
    if (chars < 2) continue;
    const name = tree.names[i];
    const colour = matched && !matched[i] ? muted : fg;
    if (colour !== fill) ctx.fillStyle = fill = colour;
    ctx.fillText(name.length > chars ? `${name.slice(0, chars - 1)}…` : name, left + 4, labels[k + 3] + ROW_HEIGHT / 2);
  }
  const i = p.focusIndex;
  if (i >= 0 && i < tree.count) {
    const left = Math.max(0, xOf(layout.x[i]));
    const right = Math.min(width, xOf(layout.x[i] + layout.w[i]));
    if (right > left) {
      ctx.strokeStyle = theme.focus;
      ctx.lineWidth = 2;
      ctx.strokeRect(left + 1, yOf(tree.depth[i]) + 1, Math.max(1, right - left - 2), ROW_HEIGHT - 3);
    }
  }
}
