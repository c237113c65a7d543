"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { AddToInvestigation } from "../../components/notebook/AddToInvestigation";
import { SqlConsole } from "../../components/sql/SqlConsole";
import type { FirstSqlAnswer } from "../../components/sql/first-answer";

/**
 * The query a person runs goes into the address (`sql=`) as a history entry: a copied link runs it
 * again, and Back returns to the query before. A preset's name gives way to the text it filled.
 */
function keepInUrl(sql: string) {
  const url = new URL(window.location.href);
  if (url.searchParams.get("sql") === sql) return;
  url.searchParams.set("sql", sql);
  url.searchParams.delete("preset");
  window.history.pushState(null, "", url.href);
}

/** The /sql page's console, whose current SQL can be added to an investigation as a SQL cell pinned to the page's commit. */
export function SqlWorkbench(props: { commitId: string; runId: string | null; initialPreset?: string; initialSql: string | null; first: FirstSqlAnswer | null }) {
  const sqlText = useRef("");
  const onSqlChange = useCallback((sql: string) => {
    sqlText.current = sql;
  }, []);
  // Back and Forward bring the address's query back into a fresh console (the engines' sessions are kept).
  const [shown, setShown] = useState({ sql: props.initialSql, visit: 0 });
  useEffect(() => {
    const onPop = () => setShown((s) => ({ sql: new URL(window.location.href).searchParams.get("sql"), visit: s.visit + 1 }));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  return (
    <SqlConsole
      key={shown.visit}
      commitId={props.commitId}
      runId={props.runId}
      initialPreset={props.initialPreset}
      initialSql={shown.sql}
      first={shown.visit === 0 ? props.first : null}
      onSqlChange={onSqlChange}
      onRun={keepInUrl}
      actions={<AddToInvestigation cell={() => ({ kind: "sql", content: { sql: sqlText.current }, commit_id: props.commitId })} />}
    />
  );
}
