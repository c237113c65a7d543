"use client";

import { SqlCell } from "../../../components/run-views/SqlCell";
import { TraceWindowCell } from "../../../components/run-views/TraceWindowCell";

/** The trace window and the SQL console, mounted with the same run and commit as the other views. */
export function OtherView(props: { view: string; runId: string; commitId: string }) {
  if (props.view === "sql") return <SqlCell runId={props.runId} commitId={props.commitId} />;
  return <TraceWindowCell runId={props.runId} commitId={props.commitId} />;
}
