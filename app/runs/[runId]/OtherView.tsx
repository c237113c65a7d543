"use client";

import { CriticalPathView } from "../../../components/dag/CriticalPathView";
import { SqlCell } from "../../../components/run-views/SqlCell";
import { TraceWindowCell } from "../../../components/run-views/TraceWindowCell";
import type { TimeRange } from "../../../components/url-state";
import type { FirstSqlAnswer } from "../../../components/sql/first-answer";
import type { ComponentProps } from "react";
import type { TrackSelection } from "../../../components/flame/TrackSelector";

/** The DAG view's state (from the URL) and what it compiles with; `marks`: the trace window marks the critical-path spans. */
export type CriticalPathState = Omit<ComponentProps<typeof CriticalPathView>, "runId" | "commitId"> & {
  /** The run has spans: the trace window offers the critical-path marks. */
  available: boolean;
  marks: boolean;
  onMarks: (on: boolean) => void;
};

/**
 * The trace window, the critical-path (DAG) view and the SQL console, mounted with the same run and
 * commit as the other views. The trace window's visible range and selection come from the URL and
 * go back to it (each settled change a history entry, so Back restores the previous zoom), as do its tracks, and the DAG view's selection, what-if and trace; the SQL console reports its
 * text (for "Add to investigation").
 */
export function OtherView(props: {
  view: string;
  runId: string;
  commitId: string;
  traceView?: TimeRange | null;
  traceSelection?: TimeRange | null;
  onTraceViewChange?: (visible: TimeRange | null, selection: TimeRange | null) => void;
  /** The trace window's tracks (the URL's `tracks`; absent: every track) and where a choice goes. */
  traceTracks?: TrackSelection;
  onTraceTracksChange?: (tracks: TrackSelection) => void;
  onSqlChange?: (sql: string) => void;
  /** The query the URL carries (run first), and where each query run goes. */
  sql?: string | null;
  onSqlRun?: (sql: string) => void;
  sqlFirst?: FirstSqlAnswer | null;
  criticalPath: CriticalPathState;
}) {
  const { available, marks, onMarks, ...dag } = props.criticalPath;
  if (props.view === "sql") return <SqlCell runId={props.runId} commitId={props.commitId} initialSql={props.sql} onSqlChange={props.onSqlChange} onRun={props.onSqlRun} first={props.sqlFirst} />;
  if (props.view === "dag") return <CriticalPathView runId={props.runId} commitId={props.commitId} {...dag} />;
  return (
    <TraceWindowCell
      runId={props.runId}
      commitId={props.commitId}
      initialView={props.traceView ?? undefined}
      initialSelection={props.traceSelection ?? undefined}
      onViewChange={props.onTraceViewChange}
      tracks={props.traceTracks}
      onTracksChange={props.onTraceTracksChange}
      criticalPath={available ? { contracts: dag.contracts, metadata: dag.metadata, on: marks, onToggle: onMarks } : undefined}
    />
  );
}
