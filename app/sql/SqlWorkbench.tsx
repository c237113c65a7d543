"use client";

import { useCallback, useRef } from "react";
import { AddToInvestigation } from "../../components/notebook/AddToInvestigation";
import { SqlConsole } from "../../components/sql/SqlConsole";

/** The /sql page's console, whose current SQL can be added to an investigation as a SQL cell pinned to the page's commit. */
export function SqlWorkbench(props: { commitId: string; runId: string | null; initialPreset?: string }) {
  const sqlText = useRef("");
  const onSqlChange = useCallback((sql: string) => {
    sqlText.current = sql;
  }, []);
  return (
    <SqlConsole
      commitId={props.commitId}
      runId={props.runId}
      initialPreset={props.initialPreset}
      onSqlChange={onSqlChange}
      actions={<AddToInvestigation cell={() => ({ kind: "sql", content: { sql: sqlText.current }, commit_id: props.commitId })} />}
    />
  );
}
