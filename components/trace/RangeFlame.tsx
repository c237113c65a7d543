"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import type { z } from "zod";
import type { flameTree } from "../../server/services/evidence";
import { callQuery, errorDocumentOf } from "../home/trpc-client";
import { colourFor } from "./time-format";

type FlameResult = z.output<(typeof flameTree)["output"]>;
type Node = FlameResult["nodes"][number];

const ROW = 16;
const WIDTH = 560;

interface Box {
  node: Node;
  x: number;
  w: number;
  depth: number;
}

/** Icicle layout: each node's width is its share of the range's total, children left to right by weight. */
function layoutIcicle(nodes: Node[]): { boxes: Box[]; total: number; depth: number } {
  const children = new Map<string | null, Node[]>();
  for (const n of nodes) {
    const list = children.get(n.parent_id) ?? [];
    list.push(n);
    children.set(n.parent_id, list);
  }
  const roots = children.get(null) ?? [];
  const total = roots.reduce((s, n) => s + n.total, 0);
  const boxes: Box[] = [];
  let depth = 0;
  const place = (list: Node[], x: number, d: number) => {
    let at = x;
    for (const n of [...list].sort((a, b) => b.total - a.total)) {
      const w = total > 0 ? n.total / total : 0;
      boxes.push({ node: n, x: at, w, depth: d });
      depth = Math.max(depth, d + 1);
      place(children.get(n.node_id) ?? [], at, d + 1);
      at += w;
    }
  };
  place(roots, 0, 0);
  return { boxes, total, depth };
}

/** The flame graph (icicle) of the samples in a time range, from evidence.flame_tree with start_ns/end_ns. */
export function RangeFlame(props: { runId: string; commitId: string; start: number; end: number }) {
  const [result, setResult] = useState<FlameResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [hover, setHover] = useState<{ box: Box; x: number; y: number } | null>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);

  useEffect(() => {
    let cancelled = false;
    setResult(null);
    setError(null);
    const start_ns = Math.floor(props.start);
    const end_ns = Math.max(start_ns + 1, Math.ceil(props.end));
    const timer = setTimeout(() => {
      callQuery<typeof flameTree>("evidence.flame_tree", { run_id: props.runId, commit_id: props.commitId, start_ns, end_ns, budget: 2000 })
        .then((r) => !cancelled && setResult(r))
        .catch((e: unknown) => !cancelled && setError(errorDocumentOf(e).message));
    }, 150);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [props.runId, props.commitId, props.start, props.end]);

  const icicle = useMemo(() => (result ? layoutIcicle(result.nodes) : null), [result]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !icicle) return;
    const dpr = window.devicePixelRatio || 1;
    const height = Math.max(ROW, icicle.depth * ROW);
    canvas.width = WIDTH * dpr;
    canvas.height = height * dpr;
    canvas.style.width = `${WIDTH}px`;
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext("2d")!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, WIDTH, height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const dark = window.matchMedia?.("(prefers-color-scheme: dark)").matches;
    for (const b of icicle.boxes) {
      const x = b.x * WIDTH;
      const w = b.w * WIDTH;
      if (w < 0.5) continue;
      ctx.fillStyle = b.node.name === "(pruned)" ? (dark ? "#4b5563" : "#d1d5db") : colourFor(b.node.module ?? b.node.name, dark);
      ctx.fillRect(x, b.depth * ROW, Math.max(0.5, w - 1), ROW - 1);
      if (w > 30) {
        ctx.fillStyle = dark ? "#f3f4f6" : "#111827";
        ctx.fillText(b.node.name, x + 3, b.depth * ROW + ROW / 2, w - 6);
      }
    }
  }, [icicle]);

  if (error) return <p className="error-inline">The range&apos;s flame graph could not load: {error}</p>;
  if (!result || !icicle) return <p className="muted">Loading the samples of the range…</p>;
  if (result.nodes.length === 0) {
    return (
      <p className="muted" data-testid="range-flame-empty">
        No samples fall in this range{result.status.reason ? ` (${result.status.reason})` : ""}. Spans alone carry no samples; a capture with a CPU profiler (or a trace with
        embedded profile chunks) adds them.
      </p>
    );
  }
  const unit = result.unit ?? "";
  return (
    <div className="range-flame" data-testid="range-flame" data-nodes={result.nodes.length}>
      <p className="muted">
        {result.metric}: {icicle.total.toLocaleString("en-US")} {unit} in the range · commit <code>{result.commit_id}</code>
      </p>
      <div style={{ position: "relative" }}>
        <canvas
          ref={canvasRef}
          onMouseMove={(e) => {
            const rect = e.currentTarget.getBoundingClientRect();
            const px = (e.clientX - rect.left) / WIDTH;
            const depth = Math.floor((e.clientY - rect.top) / ROW);
            const box = icicle.boxes.find((b) => b.depth === depth && px >= b.x && px < b.x + b.w);
            setHover(box ? { box, x: e.clientX - rect.left, y: e.clientY - rect.top } : null);
          }}
          onMouseLeave={() => setHover(null)}
        />
        {hover ? (
          <div className="trace-tooltip" style={{ left: Math.min(hover.x + 12, WIDTH - 260), top: hover.y + 14 }}>
            <div className="tt-name">{hover.box.node.name}</div>
            {hover.box.node.file ? (
              <div className="muted mono">
                {hover.box.node.file}
                {hover.box.node.line ? `:${hover.box.node.line}` : ""}
              </div>
            ) : null}
            <div className="num">
              self {hover.box.node.self.toLocaleString("en-US")} {unit} · total {hover.box.node.total.toLocaleString("en-US")} {unit} ({((100 * hover.box.node.total) / (icicle.total || 1)).toFixed(1)}%)
            </div>
          </div>
        ) : null}
      </div>
    </div>
  );
}
