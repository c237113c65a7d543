"use client";

import { useCriticalSpans } from "../dag/use-critical-spans";
import type { ReviewedTool } from "../dag/run-critical-path";
import { TraceWindow, type TimeWindow } from "../trace/TraceWindow";

/**
 * The trace window as a notebook-ready cell: props in (run, pinned commit, and optionally the visible
 * range and selection to open with), no page globals. onViewChange reports the visible range (null
 * while the whole run is shown) and the selection, e.g. to keep them in the URL. With
 * `criticalPath`, the spans on the run's critical path (computed in the page) are marked, with a
 * toggle.
 */
export function TraceWindowCell(props: {
  runId: string;
  commitId: string;
  initialView?: TimeWindow;
  initialSelection?: TimeWindow;
  onViewChange?: (view: TimeWindow | null, selection: TimeWindow | null) => void;
  criticalPath?: { contracts: readonly ReviewedTool[]; metadata: Readonly<Record<string, string>>; on: boolean; onToggle: (on: boolean) => void };
}) {
  const cp = props.criticalPath;
  const spans = useCriticalSpans({ runId: props.runId, commitId: props.commitId, contracts: cp?.contracts ?? NO_CONTRACTS, metadata: cp?.metadata ?? NO_METADATA, enabled: cp?.on ?? false });
  const toolbar = cp ? (
    <label className="muted" data-testid="trace-cp-toggle" data-state={spans.state}>
      <input type="checkbox" checked={cp.on} onChange={(e) => cp.onToggle(e.target.checked)} /> critical path
      {spans.state === "ready" ? ` (${spans.keys.size.toLocaleString("en-US")} spans)` : spans.state === "loading" ? " (computing…)" : spans.state === "error" ? ` (${spans.error.code})` : ""}
    </label>
  ) : null;
  return (
    <TraceWindow
      runId={props.runId}
      commitId={props.commitId}
      initialView={props.initialView}
      initialSelection={props.initialSelection}
      onViewChange={props.onViewChange}
      marked={spans.state === "ready" ? spans.keys : null}
      toolbar={toolbar}
    />
  );
}

const NO_CONTRACTS: readonly ReviewedTool[] = [];
const NO_METADATA: Readonly<Record<string, string>> = {};

export default TraceWindowCell;
