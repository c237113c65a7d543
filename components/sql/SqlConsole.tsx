"use client";

import { useCallback, useEffect, useMemo, useState, type ReactNode } from "react";
import { preload } from "react-dom";
import "./sql.css";
import { ENGINE, openCommitSession, type CommitSession, type QueryResult } from "./duckdb-session";
import { engineUrls } from "./engine";
import { buildPresets, presetContext, STARTER_SQL, type Preset } from "./presets";
import { ResultChart } from "./ResultChart";
import { ResultTable } from "./ResultTable";

type State =
  | { phase: "loading"; step: string }
  | { phase: "ready" }
  | { phase: "failed"; message: string };

/**
 * SQL over one pinned commit with DuckDB-WASM in the browser: the commit's Parquet files as the
 * evidence views, the server's named evidence queries as presets, results as a table and a chart,
 * each saying which engine and which commit answered. Props in, no page globals (a notebook cell).
 * `onSqlChange` hears the editor's text as it changes; `actions` go beside the Run button.
 */
export function SqlConsole(props: {
  commitId: string;
  runId?: string | null;
  initialSql?: string;
  initialPreset?: string;
  compact?: boolean;
  onSqlChange?: (sql: string) => void;
  actions?: ReactNode;
}) {
  const runId = props.runId ?? null;
  // The engine's wasm is the long pole of a cold start: a <link rel=preload> in the page's head starts
  // downloading it while the page's scripts load and hydrate; the worker's fetch then reads it from the
  // HTTP cache (immutable, versioned URL). eh is the bundle every current browser picks.
  preload(engineUrls().eh.mainModule, { as: "fetch", crossOrigin: "anonymous", fetchPriority: "high" });
  const [state, setState] = useState<State>({ phase: "loading", step: "starting DuckDB-WASM" });
  const [session, setSession] = useState<CommitSession | null>(null);
  const [presets, setPresets] = useState<Preset[]>([]);
  const [presetName, setPresetName] = useState<string>("");
  const [sql, setSql] = useState(props.initialSql ?? STARTER_SQL);
  const [result, setResult] = useState<(QueryResult & { validated: string | null }) | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const [firstResultMs, setFirstResultMs] = useState<number | null>(null);

  useEffect(() => {
    let cancelled = false;
    setState({ phase: "loading", step: "starting DuckDB-WASM and registering the commit's Parquet files" });
    (async () => {
      const s = await openCommitSession(props.commitId, runId);
      if (cancelled) return;
      setSession(s);
      setState({ phase: "loading", step: "reading the commit's metrics for the presets" });
      const ctx = await presetContext(s.generations, async (q) => {
        const answer = await s.query(q);
        // Time from navigation start to the first answered query (the cold-start figure of the benchmark).
        setFirstResultMs((ms) => ms ?? Math.round(performance.now()));
        return answer.rows;
      });
      if (cancelled) return;
      const built = buildPresets(ctx);
      setPresets(built);
      const initial = props.initialPreset ? built.find((p) => p.name === props.initialPreset && p.sql) : undefined;
      if (initial?.sql) {
        setPresetName(initial.name);
        setSql(initial.sql);
      }
      setState({ phase: "ready" });
    })().catch((e: unknown) => !cancelled && setState({ phase: "failed", message: e instanceof Error ? e.message : String(e) }));
    return () => {
      cancelled = true;
    };
  }, [props.commitId, runId, props.initialPreset]);

  const { onSqlChange } = props;
  useEffect(() => onSqlChange?.(sql), [onSqlChange, sql]);

  const preset = useMemo(() => presets.find((p) => p.name === presetName) ?? null, [presets, presetName]);

  const run = useCallback(async () => {
    if (!session) return;
    setRunning(true);
    setError(null);
    try {
      const answer = await session.query(sql);
      // When the text is a preset's, the rows are checked against that query's own row schema, as on the server.
      const samePreset = preset && preset.sql === sql ? preset : null;
      const rows = samePreset ? answer.rows.map((r) => samePreset.query.row.parse(r) as Record<string, unknown>) : answer.rows;
      setResult({ ...answer, rows, validated: samePreset?.name ?? null });
    } catch (e) {
      setResult(null);
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setRunning(false);
    }
  }, [session, sql, preset]);

  const choosePreset = (name: string) => {
    setPresetName(name);
    const chosen = presets.find((p) => p.name === name);
    if (chosen?.sql) setSql(chosen.sql);
  };

  return (
    <section className={`sql-console${props.compact ? " compact" : ""}`} data-testid="sql-console" data-state={state.phase} data-first-result-ms={firstResultMs ?? undefined}>
      <div className="sql-toolbar">
        <span className="engine-badge" data-testid="sql-engine">
          {ENGINE}
          {session ? ` ${session.engineVersion}` : ""}
        </span>
        <span className="muted">
          commit{" "}
          <code data-testid="sql-commit" title={session?.commitId}>
            {session ? `${session.commitId} · #${session.seq}` : props.commitId}
          </code>
          {runId ? (
            <>
              {" "}
              · run <code>{runId}</code> ({session?.generations.length ?? "…"} generation{session?.generations.length === 1 ? "" : "s"})
            </>
          ) : null}
          {session ? ` · ${session.fileCount} Parquet file${session.fileCount === 1 ? "" : "s"}` : ""}
        </span>
        <span className="spacer" />
        <label>
          Preset{" "}
          <select value={presetName} onChange={(e) => choosePreset(e.target.value)} data-testid="sql-preset" disabled={state.phase !== "ready"}>
            <option value="">(your own SQL)</option>
            {presets.map((p) => (
              <option key={p.name} value={p.name} disabled={!p.sql} title={p.problem ?? p.description}>
                {p.name}
                {p.problem ? ` — ${p.problem}` : ""}
              </option>
            ))}
          </select>
        </label>
      </div>
      {preset ? (
        <p className="muted preset-note">
          {preset.description} The server runs the same SQL (<code>analysis/queries</code>) with these parameters:{" "}
          <code data-testid="sql-preset-params">{JSON.stringify(preset.params)}</code>
        </p>
      ) : null}
      <textarea
        className="sql-editor mono"
        data-testid="sql-editor"
        value={sql}
        spellCheck={false}
        rows={props.compact ? 6 : 12}
        onChange={(e) => setSql(e.target.value)}
        onKeyDown={(e) => {
          if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
            e.preventDefault();
            void run();
          }
        }}
        aria-label="SQL"
      />
      <div className="sql-actions">
        <button type="button" className="button" onClick={() => void run()} disabled={state.phase !== "ready" || running} data-testid="sql-run">
          {running ? "Running…" : "Run"}
        </button>
        <span className="muted">Ctrl+Enter runs. Views: frames, stacks, metrics, samples, tracks, spans, edges, measurements, stack_totals, frame_totals.</span>
        {props.actions ? <span className="sql-actions-end">{props.actions}</span> : null}
      </div>
      {state.phase === "loading" ? (
        <p className="muted" data-testid="sql-loading">
          Loading: {state.step}…
        </p>
      ) : null}
      {state.phase === "failed" ? (
        <div className="error-panel" role="alert" data-testid="sql-error">
          <div className="code">SQL engine unavailable</div>
          <p>{state.message}</p>
          <p>
            Check that the app was built with <span className="command mono">npm run build</span> (it copies DuckDB-WASM into <code>public/duckdb/</code>) and that the
            commit exists (<span className="command mono">npx emberscope commits show {props.commitId}</span>); then reload.
          </p>
        </div>
      ) : null}
      {error ? (
        <div className="error-panel" role="alert" data-testid="sql-error">
          <div className="code">Query failed</div>
          <p className="mono">{error}</p>
          <p>Fix the SQL and run it again; the views are listed above and a preset shows a working query.</p>
        </div>
      ) : null}
      {result ? (
        <div className="sql-result">
          <p className="sql-meta" data-testid="sql-result-meta">
            {result.rows.length.toLocaleString("en-US")} row{result.rows.length === 1 ? "" : "s"} in {result.ms.toFixed(0)} ms · answered by{" "}
            <strong>
              {result.engine} {result.engine_version}
            </strong>{" "}
            over commit <code>{result.commit_id}</code>
            {result.validated ? ` · rows match the ${result.validated} row schema` : ""}
          </p>
          {result.rows.length === 0 ? (
            <p className="empty" data-testid="sql-empty">
              The query returned no rows. Check the filters (a run&apos;s rows carry its <code>generation_id</code>), or try a preset.
            </p>
          ) : (
            <>
              <ResultChart result={result} />
              <ResultTable result={result} />
            </>
          )}
        </div>
      ) : null}
    </section>
  );
}
