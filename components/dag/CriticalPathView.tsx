"use client";

import { useMemo } from "react";
import "./dag.css";
import "../trace/trace.css";
import { ErrorPanel } from "../ErrorPanel";
import { isError, useCriticalPathRows } from "../evidence/use-evidence";
import { analysisErrorDocument, prepareRunCriticalPath, type ReviewedTool, type RunCriticalPath } from "./run-critical-path";
import { SpanCriticalPathView } from "./SpanCriticalPathView";
import type { WhatIfValue } from "../url-state";
import { WorkflowDagView } from "./WorkflowDagView";

/**
 * The run page's DAG view (`?view=dag`), a cell: props in. It reads the run's spans, causal edges
 * and tracks from the pinned commit's Parquet with DuckDB-WASM and computes everything in the page
 * with analysis/: a run holding tool calls compiles into a workflow (with the reviewed tool
 * contracts) whose DAG, critical path, slack and what-if are shown; any other run with spans gets
 * the span critical path (figures, per-operation table, flame graph).
 */
export function CriticalPathView(props: {
  runId: string;
  commitId: string;
  contracts: readonly ReviewedTool[];
  /** The importer's metadata of the run (trace_id, trace_inputs). */
  metadata: Readonly<Record<string, string>>;
  selected: string | null;
  onSelect: (node: string | null) => void;
  whatIf: WhatIfValue | null;
  onWhatIf: (whatIf: WhatIfValue | null) => void;
  trace: string | null;
  onTrace: (trace: string | null) => void;
}) {
  const rows = useCriticalPathRows({ runId: props.runId, commitId: props.commitId });
  const prepared = useMemo((): RunCriticalPath | { error: ReturnType<typeof analysisErrorDocument> } | null => {
    if (rows === null || isError(rows)) return null;
    try {
      const out = prepareRunCriticalPath(rows, { runId: props.runId, contracts: props.contracts, metadata: props.metadata });
      performance.mark("emberscope:dag-compiled");
      return out;
    } catch (error) {
      return { error: analysisErrorDocument(error) };
    }
  }, [rows, props.runId, props.contracts, props.metadata]);

  if (rows === null) {
    return (
      <p className="tip-muted" data-testid="dag-view" data-state="loading">
        Reading the run&apos;s spans and edges at {props.commitId} in the page (DuckDB-WASM)…
      </p>
    );
  }
  if (isError(rows)) {
    return (
      <div data-testid="dag-view" data-state="error">
        <ErrorPanel error={rows} command={`npx emberscope critical-path ${props.runId} --commit ${props.commitId}`} />
      </div>
    );
  }
  if (prepared === null) return null;
  if ("error" in prepared) {
    const cycle = prepared.error.code === "CYCLE_DETECTED" && Array.isArray(prepared.error.details.cycle) ? (prepared.error.details.cycle as { call_id?: string; tool?: string }[]) : null;
    return (
      <div data-testid="dag-view" data-state="error">
        <ErrorPanel error={prepared.error} />
        {cycle ? (
          <p className="cp-cycle">
            The trace&apos;s links put each of these calls after the one before it and the first after the last, so they have no order and no critical path. Its calls and
            links are in the Trace view and in SQL (<span className="mono">FROM edges</span>).
          </p>
        ) : null}
        {cycle ? (
          <ol className="cp-cycle" data-testid="cycle-calls">
            {cycle.map((c, i) => (
              <li key={i}>
                <span className="mono">{String(c.call_id ?? c)}</span> {c.tool ?? ""}
              </li>
            ))}
          </ol>
        ) : null}
      </div>
    );
  }
  if (prepared.kind === "empty") {
    return (
      <div className="empty" data-testid="dag-view" data-state="empty">
        <strong>This run has no spans in commit {rows.commitId}.</strong> A critical path needs timed calls or spans: import an agent session (Claude Code, Codex, trace v1, …) or a trace
        (Jaeger, OTLP/JSON, Chrome): <span className="command mono">npx emberscope import FILE</span>
      </div>
    );
  }
  if (prepared.kind === "spans") return <SpanCriticalPathView runId={props.runId} spans={prepared.spans} links={prepared.links} trace={props.trace} onTrace={props.onTrace} />;
  return <WorkflowDagView workflow={prepared.workflow} compile={prepared.compile} selected={props.selected} onSelect={props.onSelect} whatIf={props.whatIf} onWhatIf={props.onWhatIf} />;
}

export default CriticalPathView;
