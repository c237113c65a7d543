"use client";

import { TraceWindow } from "../trace/TraceWindow";

/** The trace window as a notebook-ready cell: props in (run and pinned commit), no page globals. */
export function TraceWindowCell(props: { runId: string; commitId: string; initialView?: { start: number; end: number }; onViewChange?: (view: { start: number; end: number }, selection: { start: number; end: number } | null) => void }) {
  return <TraceWindow runId={props.runId} commitId={props.commitId} initialView={props.initialView} onViewChange={props.onViewChange} />;
}

export default TraceWindowCell;
