"use client";

import { ENGINE, engineLabel } from "../../sql/duckdb-session";
import { ResultChart } from "../../sql/ResultChart";
import { ResultTable } from "../../sql/ResultTable";
import { useNotebook, type CellViewProps } from "../context";

/**
 * A SQL cell: DuckDB-WASM in the page over the cell's pinned commit — while it starts, the server
 * engine's answer to the same query and commit, labelled so (notebook/sql-runtime.ts). A named
 * cell is read by other cells as a table (`FROM hot`); running it re-runs every cell that reads it.
 */
export function SqlCellView({ cell, content, editing, onContent, onName }: CellViewProps<"sql">) {
  const nb = useNotebook();
  const id = cell.server.cell_id;
  const run = nb.sql.states.get(id) ?? { state: "idle" as const };
  const name = cell.draft?.name !== undefined ? cell.draft.name : cell.server.name;
  return (
    <div className="nb-sql" data-testid="sql-cell" data-run-state={run.state}>
      <div className="nb-sql-head">
        <label className="field">
          <span>Name</span>
          <input
            className="mono"
            data-testid="sql-cell-name"
            value={name ?? ""}
            placeholder="(unnamed)"
            size={16}
            onChange={(e) => onName(e.target.value.trim() === "" ? null : e.target.value.trim().toLowerCase())}
          />
        </label>
        <button type="button" className="plain-button" data-testid="sql-cell-run" onClick={() => void nb.sql.run(id)} disabled={run.state === "running" || run.state === "waiting"}>
          {run.state === "running" ? "Running…" : "Run ▸"}
        </button>
        <span className="tip-muted">Shift+Enter runs and moves on; cells that read this one re-run after it.</span>
      </div>
      {editing ? (
        <textarea
          className="nb-editor mono"
          data-testid="sql-cell-editor"
          aria-label="SQL"
          autoFocus
          spellCheck={false}
          value={content.sql}
          rows={Math.min(16, Math.max(3, content.sql.split("\n").length + 1))}
          onChange={(e) => onContent({ ...content, sql: e.target.value })}
        />
      ) : (
        <pre className="nb-sql-text mono" data-testid="sql-cell-text">
          {content.sql || "-- empty: press Enter to write SQL"}
        </pre>
      )}
      {run.state === "waiting" || run.state === "running" ? <p className="tip-muted">{run.state === "waiting" ? "Waiting for the cells it reads (and DuckDB-WASM)…" : "Running in DuckDB-WASM…"}</p> : null}
      {run.state === "failed" ? (
        <div className="error-panel nb-cell-error" role="alert" data-testid="sql-cell-error" data-cause={run.cause}>
          <div className="code">{run.cause === "plan" ? "Cannot run" : "Query failed"}</div>
          <p className="mono pre-wrap">{run.message}</p>
        </div>
      ) : null}
      {run.state === "done" ? (
        <div className="sql-result" data-testid="sql-cell-result">
          <p className="sql-meta" data-testid="sql-cell-meta" data-engine={run.result.engine}>
            {run.result.rows.length.toLocaleString("en-US")} row{run.result.rows.length === 1 ? "" : "s"} in {run.result.ms.toFixed(0)} ms · answered by{" "}
            <strong data-testid="sql-cell-engine">
              {engineLabel(run.result.engine)} {run.result.engine_version}
            </strong>{" "}
            {run.result.engine === ENGINE ? "in this page" : run.wasmFailed ? "(DuckDB-WASM could not start)" : "while DuckDB-WASM starts"} over commit <code>{run.result.commit_id}</code>
            {name ? (
              <>
                {" "}
                · kept as table <code>{name}</code>
              </>
            ) : null}
          </p>
          {run.wasmFailed ? (
            <p className="tip-muted" data-testid="sql-cell-engine-error">
              DuckDB-WASM is unavailable ({run.wasmFailed}); cells that read this one cannot run until it is.
            </p>
          ) : null}
          {run.result.rows.length === 0 ? (
            <p className="tip-muted">No rows.</p>
          ) : (
            <>
              {content.view.chart ? <ResultChart result={run.result} /> : null}
              <ResultTable result={run.result} />
            </>
          )}
        </div>
      ) : null}
    </div>
  );
}
