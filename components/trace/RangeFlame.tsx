"use client";

import { useContext, useEffect, useState } from "react";
import { formatValue } from "../../analysis/flame/format";
import { FlameGraphCell } from "../flame/FlameGraphCell";
import { errorDocumentOf } from "../home/trpc-client";
import { TraceSourceContext, type RangeFlameResult } from "./trace-data";

/** The flame graph of the samples in a trace's selected time range (evidence.flame_tree with start_ns/end_ns), drawn by the one flame renderer. */
export function RangeFlame(props: { runId: string; commitId: string; start: number; end: number }) {
  const source = useContext(TraceSourceContext);
  const [result, setResult] = useState<RangeFlameResult | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    setResult(null);
    setError(null);
    const start_ns = Math.floor(props.start);
    const end_ns = Math.max(start_ns + 1, Math.ceil(props.end));
    // Dragging a selection changes the range on every move: ask once it rests.
    const timer = setTimeout(() => {
      source
        .rangeFlame({ runId: props.runId, commitId: props.commitId, start_ns, end_ns, budget: 2000 })
        .then((r) => !cancelled && setResult(r))
        .catch((e: unknown) => !cancelled && setError(errorDocumentOf(e).message));
    }, 150);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [props.runId, props.commitId, props.start, props.end]);

  if (error) return <p className="error-inline">The range&apos;s flame graph could not load: {error}</p>;
  if (!result) return <p className="muted">Loading the samples of the range…</p>;
  if (result.nodes.length === 0) {
    return (
      <p className="muted" data-testid="range-flame-empty">
        No samples fall in this range{result.status.reason ? ` (${result.status.reason})` : ""}. Spans alone carry no samples; a capture with a CPU profiler (or a trace with
        embedded profile chunks) adds them.
      </p>
    );
  }
  const total = result.nodes.filter((n) => n.parent_id === null).reduce((s, n) => s + n.total, 0);
  return (
    <div className="range-flame" data-testid="range-flame" data-nodes={result.nodes.length}>
      <p className="muted">
        {result.metric}: {formatValue(total, result.unit, result.metric)} in the range · commit <code>{result.commit_id}</code>
      </p>
      <FlameGraphCell
        nodes={result.nodes}
        unit={result.unit}
        metric={result.metric}
        rootName="range"
        orientation="icicle"
        compact
        maxHeight={260}
        testId="range-flame-cell"
        label={`Flame graph of the ${result.nodes.length} call paths sampled in the selected range`}
      />
    </div>
  );
}
