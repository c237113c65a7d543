"use client";

import { SqlCell } from "../../../components/run-views/SqlCell";
import { TraceWindowCell } from "../../../components/run-views/TraceWindowCell";
import type { TimeRange } from "../../../components/url-state";

/**
 * The trace window and the SQL console, mounted with the same run and commit as the other views.
 * The trace window's visible range and selection come from the URL and go back to it; the SQL
 * console reports its text (for "Add to investigation").
 */
export function OtherView(props: {
  view: string;
  runId: string;
  commitId: string;
  traceView?: TimeRange | null;
  traceSelection?: TimeRange | null;
  onTraceViewChange?: (visible: TimeRange | null, selection: TimeRange | null) => void;
  onSqlChange?: (sql: string) => void;
}) {
  if (props.view === "sql") return <SqlCell runId={props.runId} commitId={props.commitId} onSqlChange={props.onSqlChange} />;
  return (
    <TraceWindowCell
      runId={props.runId}
      commitId={props.commitId}
      initialView={props.traceView ?? undefined}
      initialSelection={props.traceSelection ?? undefined}
      onViewChange={props.onTraceViewChange}
    />
  );
}
