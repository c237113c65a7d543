"use client";

import { TraceWindow, type TimeWindow } from "../trace/TraceWindow";

/**
 * The trace window as a notebook-ready cell: props in (run, pinned commit, and optionally the visible
 * range and selection to open with), no page globals. onViewChange reports the visible range (null
 * while the whole run is shown) and the selection, e.g. to keep them in the URL.
 */
export function TraceWindowCell(props: {
  runId: string;
  commitId: string;
  initialView?: TimeWindow;
  initialSelection?: TimeWindow;
  onViewChange?: (view: TimeWindow | null, selection: TimeWindow | null) => void;
}) {
  return <TraceWindow runId={props.runId} commitId={props.commitId} initialView={props.initialView} initialSelection={props.initialSelection} onViewChange={props.onViewChange} />;
}

export default TraceWindowCell;
