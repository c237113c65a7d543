"use client";

import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { preload } from "react-dom";
import "./sql.css";
import { ENGINE, engineLabel, openCommitSession, type CommitSession, type QueryResult } from "./duckdb-session";
import { engineUrls } from "./engine";
import { buildPresets, presetContext, STARTER_SQL, type Preset } from "./presets";
import { ResultChart } from "./ResultChart";
import { ResultTable } from "./ResultTable";
import { SERVER_SQL_MAX_CHARS, serverQuery } from "./server-engine";
import type { FirstSqlAnswer } from "./first-answer";
import { TABLE_NAMES } from "../../analysis/evidence/schema";

type WasmState = { phase: "starting" } | { phase: "ready"; session: CommitSession } | { phase: "failed"; message: string };

type Engine = "server" | "duckdb-wasm";

/** A shown answer: the rows, which engine gave them, and whether they match a preset's row schema. */
type Answer = QueryResult & { validated: string | null; truncated: boolean };

/** The preset a first answer was filled from (its rows are checked against that query's row schema). */
function presets0(first: FirstSqlAnswer): Preset | null {
  return first.preset ? (buildPresets(first.context).find((p) => p.name === first.preset && p.sql === first.sql) ?? null) : null;
}

function firstResult(first: FirstSqlAnswer, preset: Preset | null): Answer | null {
  if ("error" in first.answer) return null;
  const rows = preset ? first.answer.rows.map((r) => preset.query.row.parse(r) as Record<string, unknown>) : first.answer.rows;
  return { ...first.answer, rows, commit_id: first.commit_id, validated: preset?.name ?? null };
}

/** When the page first painted (the first answer came with its HTML), else now. */
function firstPaintMs(): number {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return Math.round(paint ? paint.startTime : performance.now());
}

/**
 * SQL over one pinned commit. The first answers come from the server's DuckDB (tRPC sql.query:
 * the same tables, the same commit and run scope) while DuckDB-WASM starts in the page; once it
 * is up, the shown query runs again there and every later query runs in the page. Each result
 * says which engine and which commit answered. The commit's Parquet files are the evidence views,
 * `runs` lists the commit's runs with their titles, the server's named evidence queries are the
 * presets, results show as a table and a chart. Props in, no page globals (a notebook cell).
 * `onSqlChange` hears the editor's text as it changes, `onRun` each query the person runs (for
 * the page's URL); `actions` go beside the Run button.
 */
export function SqlConsole(props: {
  commitId: string;
  runId?: string | null;
  initialSql?: string | null;
  initialPreset?: string;
  compact?: boolean;
  onSqlChange?: (sql: string) => void;
  onRun?: (sql: string) => void;
  actions?: ReactNode;
  /** The server engine's answer to the first query, rendered with the page (firstSqlAnswer in app/sql). */
  first?: FirstSqlAnswer | null;
}) {
  const first = props.first ?? null;
  const runId = props.runId ?? null;
  // The engine's wasm is the long pole of a cold start: a <link rel=preload> in the page's head starts
  // downloading it while the page's scripts load and hydrate; the worker's fetch then reads it from the
  // HTTP cache (immutable, versioned URL). eh is the bundle every current browser picks.
  preload(engineUrls().eh.mainModule, { as: "fetch", crossOrigin: "anonymous", fetchPriority: "high" });
  const [wasm, setWasm] = useState<WasmState>({ phase: "starting" });
  const [scope, setScope] = useState<{ commitId: string; seq: number; generations: string[] } | null>(first ? { commitId: first.commit_id, seq: first.seq, generations: first.generations } : null);
  const [presetsReady, setPresetsReady] = useState(first !== null);
  const [presets, setPresets] = useState<Preset[]>(() => (first ? buildPresets(first.context) : []));
  const [presetName, setPresetName] = useState<string>(first?.preset ?? "");
  const [sql, setSql] = useState(first?.sql ?? (props.initialSql || STARTER_SQL));
  const [result, setResult] = useState<Answer | null>(() => (first ? firstResult(first, presets0(first)) : null));
  const [error, setError] = useState<{ message: string; engine: Engine } | null>(first && "error" in first.answer ? { message: first.answer.error, engine: "server" } : null);
  const [running, setRunning] = useState<Engine | "waiting" | null>(null);
  const [firstResultMs, setFirstResultMs] = useState<number | null>(null);
  const [wasmResultMs, setWasmResultMs] = useState<number | null>(null);
  // The last query shown and who answered it: rerun in the page once DuckDB-WASM is up.
  const shown = useRef<{ sql: string; engine: Engine; preset: Preset | null } | null>(first ? { sql: first.sql, engine: "server", preset: presets0(first) } : null);
  const runSeq = useRef(0);
  const session = wasm.phase === "ready" ? wasm.session : null;

  /** Runs `text` on DuckDB-WASM when it is up, else on the server engine (or waits for WASM when the server cannot take it). */
  const execute = useCallback(
    async (text: string, chosen: Preset | null, via: CommitSession | null, serverOk: boolean) => {
      const seq = ++runSeq.current;
      const engine: Engine = via || !serverOk || text.length > SERVER_SQL_MAX_CHARS ? ENGINE : "server";
      setRunning(engine === ENGINE && !via ? "waiting" : engine);
      setError(null);
      try {
        const answer = engine === "server" ? await serverQuery(props.commitId, runId, text) : { ...(await (via ?? (await openCommitSession(props.commitId, runId))).query(text)), truncated: false };
        if (seq !== runSeq.current) return;
        // When the text is a preset's, the rows are checked against that query's own row schema, as on the server.
        const samePreset = chosen && chosen.sql === text ? chosen : null;
        const rows = samePreset ? answer.rows.map((r) => samePreset.query.row.parse(r) as Record<string, unknown>) : answer.rows;
        setResult({ ...answer, rows, validated: samePreset?.name ?? null });
        // Time from navigation start to the first answer shown, and to the first DuckDB-WASM answer (the benchmark's figures).
        setFirstResultMs((ms) => ms ?? Math.round(performance.now()));
        if (engine === ENGINE) setWasmResultMs((ms) => ms ?? Math.round(performance.now()));
      } catch (e) {
        if (seq !== runSeq.current) return;
        setResult(null);
        setError({ message: e instanceof Error ? e.message : String(e), engine });
      } finally {
        if (seq === runSeq.current) setRunning(null);
      }
      shown.current = { sql: text, engine, preset: chosen };
    },
    [props.commitId, runId],
  );

  // The server engine answers first: the scope, the presets (filled by the named queries themselves) and the first query.
  useEffect(() => {
    let cancelled = false;
    const started = { wasm: false };
    const startWasm = () => {
      if (started.wasm || cancelled) return;
      started.wasm = true;
      openCommitSession(props.commitId, runId).then(
        (s) => !cancelled && setWasm({ phase: "ready", session: s }),
        (e: unknown) => !cancelled && setWasm({ phase: "failed", message: e instanceof Error ? e.message : String(e) }),
      );
    };
    if (first) {
      // The page brought the server engine's first answer (rows already painted): the page's own engine starts now.
      setFirstResultMs((ms) => ms ?? firstPaintMs());
      startWasm();
      return () => {
        cancelled = true;
      };
    }
    (async () => {
      let serverOk = true;
      let runner: (q: string) => Promise<Record<string, unknown>[]>;
      let generations: string[];
      try {
        const probe = await serverQuery(props.commitId, runId, "SELECT 1 AS ok");
        if (cancelled) return;
        setScope({ commitId: probe.commit_id, seq: probe.seq, generations: probe.generations });
        generations = probe.generations;
        runner = async (q) => (await serverQuery(props.commitId, runId, q)).rows;
      } catch {
        // No server engine (an older server, or the query route refused): DuckDB-WASM does it all.
        serverOk = false;
        startWasm();
        const s = await openCommitSession(props.commitId, runId);
        if (cancelled) return;
        generations = s.generations;
        runner = async (q) => (await s.query(q)).rows;
      }
      const built = buildPresets(await presetContext(generations, runner));
      if (cancelled) return;
      setPresets(built);
      setPresetsReady(true);
      const initial = !props.initialSql && props.initialPreset ? built.find((p) => p.name === props.initialPreset && p.sql) : undefined;
      let text = props.initialSql || STARTER_SQL;
      if (initial?.sql) {
        setPresetName(initial.name);
        setSql(initial.sql);
        text = initial.sql;
      }
      await execute(text, initial ?? null, null, serverOk);
      startWasm();
    })().catch((e: unknown) => {
      if (cancelled) return;
      setPresetsReady(true);
      setError({ message: e instanceof Error ? e.message : String(e), engine: "server" });
      startWasm();
    });
    return () => {
      cancelled = true;
    };
    // The initial text is read once per commit and run: later edits are the editor's.
  }, [props.commitId, runId, props.initialPreset]);

  // DuckDB-WASM is up: what the server answered is asked again in the page, so the rows shown are the page's own.
  useEffect(() => {
    if (!session) return;
    const last = shown.current;
    if (last && last.engine === "server") void execute(last.sql, last.preset, session, false);
  }, [session, execute]);

  const { onSqlChange, onRun } = props;
  useEffect(() => onSqlChange?.(sql), [onSqlChange, sql]);

  const preset = useMemo(() => presets.find((p) => p.name === presetName) ?? null, [presets, presetName]);
  const serverAnswers = scope !== null;

  const run = useCallback(async () => {
    onRun?.(sql);
    await execute(sql, preset, session, serverAnswers);
  }, [execute, sql, preset, session, serverAnswers, onRun]);

  const choosePreset = (name: string) => {
    setPresetName(name);
    const chosen = presets.find((p) => p.name === name);
    if (chosen?.sql) setSql(chosen.sql);
  };

  const canRun = presetsReady && (session !== null || serverAnswers || wasm.phase === "starting") && running === null;
  const fileCount = session?.fileCount;
  const generationCount = session?.generations.length ?? scope?.generations.length;
  const commitShown = session ? `${session.commitId} · #${session.seq}` : scope ? `${scope.commitId} · #${scope.seq}` : props.commitId;

  return (
    <section
      className={`sql-console${props.compact ? " compact" : ""}`}
      data-testid="sql-console"
      data-state={wasm.phase === "ready" ? "ready" : wasm.phase === "failed" ? "failed" : "loading"}
      data-first-result-ms={firstResultMs ?? undefined}
      data-wasm-result-ms={wasmResultMs ?? undefined}
    >
      <div className="sql-toolbar">
        <span className="engine-badge" data-testid="sql-engine" data-engine={session ? ENGINE : serverAnswers ? "server" : "none"} title="Which engine answers the next query">
          {session ? `DuckDB-WASM ${session.engineVersion}` : wasm.phase === "failed" ? "server" : serverAnswers ? "server · DuckDB-WASM starting…" : "starting…"}
        </span>
        <span className="muted sql-scope-note">
          commit{" "}
          <code data-testid="sql-commit" title={session?.commitId ?? scope?.commitId}>
            {commitShown}
          </code>
          {runId ? (
            <>
              {" "}
              · run <code>{runId}</code> ({generationCount ?? "…"} generation{generationCount === 1 ? "" : "s"})
            </>
          ) : null}
          {fileCount !== undefined ? ` · ${fileCount} Parquet file${fileCount === 1 ? "" : "s"}` : ""}
        </span>
        <span className="spacer" />
        <label>
          Preset{" "}
          <select value={presetName} onChange={(e) => choosePreset(e.target.value)} data-testid="sql-preset" disabled={!presetsReady}>
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
            if (canRun) void run();
          }
        }}
        aria-label="SQL"
      />
      <div className="sql-actions">
        <button type="button" className="button" onClick={() => void run()} disabled={!canRun} data-testid="sql-run">
          {running === "waiting" ? "Waiting for DuckDB-WASM…" : running ? "Running…" : "Run"}
        </button>
        <span className="muted">Ctrl+Enter runs. Tables: {TABLE_NAMES.join(", ")}, and runs (titles; join USING (generation_id)).</span>
        {props.actions ? <span className="sql-actions-end">{props.actions}</span> : null}
      </div>
      {!presetsReady ? (
        <p className="muted" data-testid="sql-loading">
          Loading: asking the server engine for the commit&apos;s metrics (for the presets)…
        </p>
      ) : null}
      {wasm.phase === "failed" ? (
        <div className="error-panel" role="alert" data-testid="sql-engine-error">
          <div className="code">DuckDB-WASM unavailable{serverAnswers ? ": the server engine answers instead" : ""}</div>
          <p>{wasm.message}</p>
          <p>
            Check that the app was built with <span className="command mono">npm run build</span> (it copies DuckDB-WASM into <code>public/duckdb/</code>) and that the
            commit exists (<span className="command mono">npx emberscope commits show {props.commitId}</span>); then reload.
          </p>
        </div>
      ) : null}
      {error ? (
        <div className="error-panel" role="alert" data-testid="sql-error" data-engine={error.engine}>
          <div className="code">Query failed in {engineLabel(error.engine)}</div>
          <pre className="sql-error-text" data-testid="sql-error-text">{error.message}</pre>
          <p>Fix the SQL and run it again; the tables are listed above and a preset shows a working query.</p>
        </div>
      ) : null}
      {result ? (
        <div className="sql-result">
          <p className="sql-meta" data-testid="sql-result-meta" data-engine={result.engine}>
            {result.rows.length.toLocaleString("en-US")} row{result.rows.length === 1 ? "" : "s"}
            {result.truncated ? " (the first; more matched — add a LIMIT or aggregate)" : ""} in {result.ms.toFixed(0)} ms · answered by{" "}
            <strong data-testid="sql-answered-by">
              {engineLabel(result.engine)} {result.engine_version}
            </strong>{" "}
            {result.engine === ENGINE ? "in this page" : session ? "" : "while DuckDB-WASM starts"} over commit <code>{result.commit_id}</code>
            {result.validated ? ` · rows match the ${result.validated} row schema` : ""}
          </p>
          {result.rows.length === 0 ? (
            <p className="empty" data-testid="sql-empty">
              The query returned no rows. Check the filters (a run&apos;s rows carry its <code>generation_id</code>), or try a preset.
            </p>
          ) : (
            <>
              <ResultChart result={result} metric={typeof preset?.params?.metric === "string" && preset.sql === sql ? preset.params.metric : null} />
              <ResultTable result={result} />
            </>
          )}
        </div>
      ) : null}
    </section>
  );
}
