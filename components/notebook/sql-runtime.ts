"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { downstreamOf, planSqlCells, tableReferences, type SqlPlan } from "../../analysis/notebook/sql-deps";
import { NOTEBOOK_SCHEMA, openCommitSession, type QueryResult } from "../sql/duckdb-session";
import { engineStarted } from "../sql/engine";
import { SERVER_SQL_MAX_CHARS, serverQuery } from "../sql/server-engine";

/** A SQL cell as the runtime needs it: what it reads from (its commit) and what it is called. */
export interface SqlCellSpec {
  cell_id: string;
  name: string | null;
  sql: string;
  commit_id: string;
}

export type SqlRunState =
  | { state: "idle" }
  | { state: "waiting" }
  | { state: "running" }
  /**
   * An answer: DuckDB-WASM's in the page, or (`first`) the server engine's, shown while DuckDB-WASM
   * starts and replaced by the page's own answer when it comes (`wasmFailed`: it never will).
   */
  | { state: "done"; result: QueryResult; ranAt: number; first?: boolean; wasmFailed?: string }
  | { state: "failed"; message: string; cause: "query" | "plan" };

/** Rows a named cell's table keeps for the page to show (the table itself keeps every row). */
const SHOWN_ROWS = 5_000;

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
const body = (sql: string) => sql.trim().replace(/;+\s*$/, "");

function planFailure(plan: SqlPlan, cellId: string, label: (id: string) => string): string | null {
  const error = plan.errors.get(cellId);
  if (!error) return null;
  switch (error.kind) {
    case "cycle":
      return `These cells read each other in a cycle: ${error.cycle.join(" → ")}. Break the cycle by changing one of their FROM clauses.`;
    case "dangling":
      return `No cell is named ${error.names.join(", ")}, and no evidence table is either. Name the cell that should be read, or fix the FROM clause.`;
    case "duplicate_name":
      return "Another cell has the same name; rename one of them.";
    case "blocked":
      return `Waits for cell ${label(error.by)}, which cannot run: fix that cell first.`;
  }
}

/**
 * The notebook's reactive SQL: one DuckDB-WASM engine for the page (its sessions are per commit),
 * a named cell's result kept as a table in the notebook schema so that later cells read it by
 * name, and a run of one cell re-running every cell that depends on it, in dependency order.
 * While DuckDB-WASM starts, the cells that read only evidence tables are answered at once by the
 * server engine (tRPC `sql.query`, the SQL console's `serverQuery`: the same tables and commit),
 * then by the page's engine; each answer names its engine. Cells that read other cells wait for
 * the page's engine, which alone holds their tables.
 * Plan errors (cycles, names no cell has) are states of the cells, never thrown.
 */
export function useNotebookSql(cells: readonly SqlCellSpec[]) {
  const [states, setStates] = useState<ReadonlyMap<string, SqlRunState>>(new Map());
  const cellsRef = useRef(cells);
  cellsRef.current = cells;
  // Runs go one after another: a re-run of a cell must see the tables the previous run wrote.
  const queue = useRef<Promise<void>>(Promise.resolve());

  // The commit each cell last ran at: a cell re-pinned since then runs again at its new commit.
  const ranAt = useRef(new Map<string, string>());

  const set = (cellId: string, state: SqlRunState) => setStates((prev) => new Map(prev).set(cellId, state));
  // Per cell, its latest run: a server answer that comes after a later run started is not shown.
  const runOf = useRef(new Map<string, number>());
  /** Shows the server engine's answer while the cell still waits for the page's engine; a running cell keeps it shown. */
  const showFirst = (cellId: string, run: number, result: QueryResult) =>
    setStates((prev) => {
      const now = prev.get(cellId);
      if (runOf.current.get(cellId) !== run || (now?.state !== "waiting" && now?.state !== "running")) return prev;
      return new Map(prev).set(cellId, { state: "done", result, ranAt: Date.now(), first: true });
    });
  /** A run state, except that a shown first answer stays shown while the page's engine runs the cell. */
  const setKeepingFirst = (cellId: string, state: SqlRunState) =>
    setStates((prev) => {
      const now = prev.get(cellId);
      if (now?.state === "done" && now.first && (state.state === "running" || state.state === "waiting")) return prev;
      return new Map(prev).set(cellId, state);
    });

  const runCells = useCallback((which: "all" | string) => {
    const job = async () => {
      const current = cellsRef.current;
      const byId = new Map(current.map((c) => [c.cell_id, c]));
      const label = (id: string) => byId.get(id)?.name ?? id;
      const plan = planSqlCells(current, TABLE_NAMES);
      const targets = which === "all" ? current.map((c) => c.cell_id) : byId.has(which) ? [which] : [];
      if (which === "all") {
        // Each commit's session is opened once, told which evidence tables its cells read, so their
        // Parquet is decoded while the engine is still starting.
        const tables = new Map<string, Set<string>>();
        for (const c of current) for (const t of tableReferences(c.sql)) if ((TABLE_NAMES as readonly string[]).includes(t)) tables.set(c.commit_id, (tables.get(c.commit_id) ?? new Set()).add(t));
        for (const [commit, read] of tables) void openCommitSession(commit, null, [...read]).catch(() => undefined);
      }
      const runnable = which === "all" ? plan.order : downstreamOf(plan, which);
      // Cells that cannot run (their own plan error, or one they wait for) say why.
      const failing = which === "all" ? targets : [which, ...current.filter((c) => plan.errors.get(c.cell_id)?.kind === "blocked").map((c) => c.cell_id)];
      for (const id of failing) {
        const reason = planFailure(plan, id, label);
        if (reason) set(id, { state: "failed", message: reason, cause: "plan" });
      }
      for (const id of runnable) {
        runOf.current.set(id, (runOf.current.get(id) ?? 0) + 1);
        set(id, { state: "waiting" });
      }
      if (!engineStarted()) {
        // DuckDB-WASM is still starting: the server engine answers the cells it can at once.
        for (const id of runnable) {
          const cell = byId.get(id)!;
          const text = body(cell.sql);
          if (text === "" || text.length > SERVER_SQL_MAX_CHARS || (plan.reads.get(id)?.length ?? 0) > 0) continue;
          const run = runOf.current.get(id)!;
          serverQuery(cell.commit_id, null, text).then(
            (answer) => showFirst(id, run, answer),
            // The page's engine will answer (or say why it cannot): a server refusal is not shown.
            () => undefined,
          );
        }
      }
      const failed = new Set<string>();
      for (const id of runnable) {
        const cell = byId.get(id)!;
        if (body(cell.sql) === "") {
          set(id, { state: "idle" });
          continue;
        }
        const blocker = plan.reads.get(id)?.find((dep) => failed.has(dep));
        if (blocker) {
          failed.add(id);
          set(id, { state: "failed", message: `Waits for cell ${label(blocker)}, whose query failed: fix that cell first.`, cause: "plan" });
          continue;
        }
        setKeepingFirst(id, { state: "running" });
        ranAt.current.set(id, cell.commit_id);
        let session: Awaited<ReturnType<typeof openCommitSession>>;
        try {
          session = await openCommitSession(cell.commit_id);
        } catch (e) {
          // No page engine: a server answer already shown stays, saying so; else the cell fails.
          failed.add(id);
          const message = e instanceof Error ? e.message : String(e);
          setStates((prev) => {
            const now = prev.get(id);
            return new Map(prev).set(id, now?.state === "done" && now.first ? { ...now, wasmFailed: message } : { state: "failed", message, cause: "query" });
          });
          continue;
        }
        try {
          let result: QueryResult;
          if (cell.name) {
            const table = `${NOTEBOOK_SCHEMA}.${quoted(cell.name)}`;
            const made = await session.query(`CREATE OR REPLACE TABLE ${table} AS ${body(cell.sql)}`);
            const read = await session.query(`SELECT * FROM ${table} LIMIT ${SHOWN_ROWS}`);
            result = { ...read, ms: made.ms + read.ms };
          } else {
            result = await session.query(body(cell.sql));
          }
          set(id, { state: "done", result, ranAt: Date.now() });
          performance.mark("emberscope:sql-cell-done");
        } catch (e) {
          failed.add(id);
          if (cell.name) {
            // A later cell must not read what an earlier run of this one left behind.
            await openCommitSession(cell.commit_id)
              .then((s) => s.query(`DROP TABLE IF EXISTS ${NOTEBOOK_SCHEMA}.${quoted(cell.name!)}`))
              .catch(() => undefined);
          }
          set(id, { state: "failed", message: e instanceof Error ? e.message : String(e), cause: "query" });
        }
      }
    };
    const next = queue.current.then(job, job);
    queue.current = next.catch(() => undefined);
    return next;
  }, []);

  // Every SQL cell runs once when the notebook opens (cells added later run when asked).
  const started = useRef(false);
  useEffect(() => {
    if (started.current || cells.length === 0) return;
    started.current = true;
    void runCells("all");
  }, [cells.length, runCells]);

  useEffect(() => {
    for (const cell of cells) {
      const before = ranAt.current.get(cell.cell_id);
      if (before === undefined || before === cell.commit_id) continue;
      ranAt.current.set(cell.cell_id, cell.commit_id);
      void runCells(cell.cell_id);
    }
  }, [cells, runCells]);

  return { states, run: runCells };
}
