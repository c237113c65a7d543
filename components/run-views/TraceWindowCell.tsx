"use client";

import { useState } from "react";
import { useCriticalSpans } from "../dag/use-critical-spans";
import type { ReviewedTool } from "../dag/run-critical-path";
import { TraceWindow, type TimeWindow } from "../trace/TraceWindow";
import type { TrackSelection } from "../flame/TrackSelector";

/**
 * The trace window as a notebook-ready cell: props in (run, pinned commit, and optionally the visible
 * range and selection to open with), no page globals. onViewChange reports the visible range (null
 * while the whole run is shown) and the selection, e.g. to keep them in the URL. With
 * `criticalPath`, the spans on the run's critical path (computed in the page) are marked, with a
 * toggle; a run whose spans have no causal edges has no critical path to mark, and the toggle says so.
 * `tracks` (the URL's `tracks`) chooses the tracks shown, with the selector in the toolbar.
 */
export function TraceWindowCell(props: {
  runId: string;
  commitId: string;
  initialView?: TimeWindow;
  initialSelection?: TimeWindow;
  onViewChange?: (view: TimeWindow | null, selection: TimeWindow | null) => void;
  criticalPath?: { contracts: readonly ReviewedTool[]; metadata: Readonly<Record<string, string>>; on: boolean; onToggle: (on: boolean) => void };
  tracks?: TrackSelection;
  onTracksChange?: (tracks: TrackSelection) => void;
}) {
  const cp = props.criticalPath;
  // Causal edges in the run (from the trace window's summary): null until it is read.
  const [edges, setEdges] = useState<number | null>(null);
  const noEdges = edges === 0;
  const spans = useCriticalSpans({ runId: props.runId, commitId: props.commitId, contracts: cp?.contracts ?? NO_CONTRACTS, metadata: cp?.metadata ?? NO_METADATA, enabled: (cp?.on ?? false) && edges !== null && !noEdges });
  const state = noEdges ? "no-edges" : cp?.on && edges === null ? "loading" : spans.state;
  const toolbar = cp ? (
    <label className="muted" data-testid="trace-cp-toggle" data-state={state} title={noEdges ? "The run's spans have no causal edges (flows, follows-from links), so there is no critical path to mark." : undefined}>
      <input type="checkbox" checked={cp.on && !noEdges} disabled={noEdges} onChange={(e) => cp.onToggle(e.target.checked)} /> critical path
      {noEdges ? ": no edges" : spans.state === "ready" ? ` (${spans.keys.size.toLocaleString("en-US")} spans)` : state === "loading" ? " (computing…)" : spans.state === "error" ? ` (${spans.error.code})` : ""}
    </label>
  ) : null;
  return (
    <TraceWindow
      runId={props.runId}
      commitId={props.commitId}
      initialView={props.initialView}
      initialSelection={props.initialSelection}
      onViewChange={props.onViewChange}
      marked={spans.state === "ready" && !noEdges ? spans.keys : null}
      toolbar={toolbar}
      onFacts={(facts) => setEdges(facts.edges)}
      tracks={props.tracks}
      onTracksChange={props.onTracksChange}
    />
  );
}

const NO_CONTRACTS: readonly ReviewedTool[] = [];
const NO_METADATA: Readonly<Record<string, string>> = {};

export default TraceWindowCell;
