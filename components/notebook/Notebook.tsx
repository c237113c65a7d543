"use client";

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { CellBody, CellKindName } from "../../analysis/notebook/cells";
import type { ErrorDocument } from "../../server/domain/errors";
import type { Cell, Finding, Hypothesis, Investigation } from "../../server/domain/notebook";
import type { AuditEvent } from "../../server/services/agent-access";
import type { listCommits } from "../../server/services/commits";
import type { addCell, changeCell, deleteCell, moveCell, restoreCell, showCell } from "../../server/services/cells";
import type { changeInvestigation, investigationActivity, NotebookView, showInvestigation } from "../../server/services/investigations";
import { ErrorPanel } from "../ErrorPanel";
import { callMutation, callQuery, errorDocumentOf } from "../home/trpc-client";
import { AgentTimeline } from "./AgentTimeline";
import { CellFrame, type CellActions } from "./CellFrame";
import { CELL_VIEWS } from "./cells";
import { ExportDialog } from "./ExportDialog";
import { contentOf, NotebookContext, type CellViewProps, type NotebookEnv, type PageCell } from "./context";
import { NotebookKeys } from "./NotebookKeys";
import { ExperimentForm } from "./ExperimentForm";
import { FindingForm, HypothesisForm } from "./RecordForms";
import { useNotebookSql, type SqlCellSpec } from "./sql-runtime";
import "./notebook.css";

/** How long typing rests before the cell is saved (compare-and-set on its revision). */
const SAVE_AFTER_MS = 400;
/** How often the page asks for what others (another tab, an agent) changed. */
const REFRESH_MS = 5_000;

const fresh = (server: Cell): PageCell => ({ server, draft: null, saving: false, conflict: null, error: null });
const inOrder = (cells: PageCell[]) => [...cells].sort((a, b) => (a.server.position < b.server.position ? -1 : a.server.position > b.server.position ? 1 : a.server.cell_id < b.server.cell_id ? -1 : 1));
const byId = <T,>(items: readonly T[], id: (t: T) => string) => new Map(items.map((t) => [id(t), t]));

/** Cell kinds whose content is text typed in the cell (Enter edits them). */
const TEXT_KINDS = new Set<CellKindName>(["note", "sql"]);

/**
 * An investigation as a notebook: cells in order, each evidence cell reading its pinned commit;
 * keyboard-first like Jupyter (command mode and edit mode); every edit autosaved by
 * compare-and-set, and a conflict with another writer shown with both versions kept.
 */
export function Notebook(props: { initial: NotebookView; headCommitId: string | null }) {
  const [investigation, setInvestigation] = useState<Investigation>(props.initial.investigation);
  const [cells, setCells] = useState<PageCell[]>(() => props.initial.cells.map(fresh));
  const [hypotheses, setHypotheses] = useState(() => byId(props.initial.hypotheses, (h) => h.hypothesis_id));
  const [findings, setFindings] = useState(() => byId(props.initial.findings, (f) => f.finding_id));
  const [headCommitId, setHeadCommitId] = useState(props.headCommitId);
  const [selected, setSelectedState] = useState<string | null>(props.initial.cells[0]?.cell_id ?? null);
  // Keys can come faster than renders: the key handler reads the selection from this ref, set at once.
  const selectedRef = useRef(selected);
  const setSelected = useCallback((id: string | null) => {
    selectedRef.current = id;
    setSelectedState(id);
  }, []);
  const [editing, setEditing] = useState<string | null>(null);
  const [undo, setUndo] = useState<Cell[]>([]);
  const [pageError, setPageError] = useState<ErrorDocument | null>(null);
  const [overlay, setOverlay] = useState<null | "keys" | "hypothesis" | "finding" | "experiment" | "export">(null);
  const [activity, setActivity] = useState<AuditEvent[] | null>(null);
  const cellsRef = useRef(cells);
  cellsRef.current = cells;
  const investigationId = investigation.investigation_id;

  const sqlSpecs = useMemo<SqlCellSpec[]>(
    () => cells.filter((c) => c.server.kind === "sql" && c.server.commit_id).map((c) => ({ cell_id: c.server.cell_id, name: c.draft?.name !== undefined ? c.draft.name : c.server.name, sql: (contentOf<"sql">(c)).sql, commit_id: c.server.commit_id! })),
    [cells],
  );
  const sql = useNotebookSql(sqlSpecs);

  const patchCell = useCallback((id: string, change: (c: PageCell) => PageCell) => setCells((prev) => prev.map((c) => (c.server.cell_id === id ? change(c) : c))), []);
  const fail = useCallback((e: unknown) => setPageError(errorDocumentOf(e)), []);

  // ---- autosave: each cell's edits go out after a pause, by compare-and-set on the revision read.
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const save = useCallback(
    (id: string) => {
      const cell = cellsRef.current.find((c) => c.server.cell_id === id);
      if (!cell?.draft || cell.conflict) return;
      if (cell.saving) {
        timers.current.set(id, setTimeout(() => save(id), SAVE_AFTER_MS));
        return;
      }
      const sent = cell.draft;
      patchCell(id, (c) => ({ ...c, saving: true }));
      const started = performance.now();
      callMutation<typeof changeCell>("cells.update", {
        cell_id: id,
        expected_revision: cell.server.revision,
        ...(sent.content !== undefined ? { content: sent.content as Record<string, unknown> } : {}),
        ...(sent.name !== undefined ? { name: sent.name } : {}),
      })
        .then((server) => {
          // The benchmark's autosave figure: one compare-and-set round trip.
          performance.measure("emberscope:autosave", { start: started, end: performance.now() });
          patchCell(id, (c) => ({ ...c, server, saving: false, error: null, draft: c.draft === sent ? null : c.draft }));
          if (cellsRef.current.find((c) => c.server.cell_id === id)?.draft !== sent) timers.current.set(id, setTimeout(() => save(id), SAVE_AFTER_MS));
        })
        .catch(async (e: unknown) => {
          const error = errorDocumentOf(e);
          if (error.code !== "REVISION_CONFLICT") return patchCell(id, (c) => ({ ...c, saving: false, error }));
          const theirs = await callQuery<typeof showCell>("cells.get", { cell_id: id }).catch(() => null);
          patchCell(id, (c) => ({ ...c, saving: false, error: theirs ? null : error, conflict: theirs }));
        });
    },
    [patchCell],
  );
  const edit = useCallback(
    (id: string, change: { content?: CellBody["content"]; name?: string | null }) => {
      patchCell(id, (c) => ({ ...c, error: null, draft: { ...c.draft, ...change } }));
      clearTimeout(timers.current.get(id));
      timers.current.set(id, setTimeout(() => save(id), SAVE_AFTER_MS));
    },
    [patchCell, save],
  );
  useEffect(() => {
    const pending = timers.current;
    return () => pending.forEach((t) => clearTimeout(t));
  }, []);

  // ---- what others changed: another tab, the CLI or an agent over MCP.
  const refresh = useCallback(async () => {
    const [view, events] = await Promise.all([
      callQuery<typeof showInvestigation>("investigations.get", { investigation_id: investigationId }),
      callQuery<typeof investigationActivity>("investigations.activity", { investigation_id: investigationId, limit: 50 }),
    ]);
    setActivity(events.items);
    setInvestigation(view.investigation);
    setHypotheses(byId(view.hypotheses, (h) => h.hypothesis_id));
    setFindings(byId(view.findings, (f) => f.finding_id));
    setCells((prev) => {
      const local = byId(prev, (c) => c.server.cell_id);
      const next: PageCell[] = [];
      for (const server of view.cells) {
        const mine = local.get(server.cell_id);
        // A cell with edits in flight keeps them; a conflict, if any, shows at its next save.
        next.push(mine && (mine.draft || mine.saving || mine.conflict) ? mine : mine && mine.server.revision === server.revision ? mine : fresh(server));
        local.delete(server.cell_id);
      }
      for (const kept of local.values()) if (kept.draft) next.push(kept);
      return inOrder(next);
    });
    const head = (await callQuery<typeof listCommits>("commits.list", { limit: 1 }).catch(() => null))?.items[0]?.commit_id;
    if (head) setHeadCommitId(head);
  }, [investigationId]);
  useEffect(() => {
    void refresh().catch(() => undefined);
    const timer = setInterval(() => document.visibilityState === "visible" && void refresh().catch(() => undefined), REFRESH_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  // ---- cell operations
  const addCellAfter = useCallback(
    async (kind: CellKindName, content: CellBody["content"], after: string | null | undefined, options: { edit?: boolean; name?: string | null } = {}) => {
      try {
        const cell = await callMutation<typeof addCell>("cells.add", { investigation_id: investigationId, kind, content: content as Record<string, unknown>, ...(after !== undefined ? { after_cell_id: after } : {}), ...(options.name ? { name: options.name } : {}) });
        setCells((prev) => inOrder([...prev, fresh(cell)]));
        setSelected(cell.cell_id);
        setEditing(options.edit ? cell.cell_id : null);
        return cell;
      } catch (e) {
        fail(e);
        return null;
      }
    },
    [investigationId, fail],
  );
  const previousOf = (id: string) => {
    const list = cellsRef.current;
    const i = list.findIndex((c) => c.server.cell_id === id);
    return i > 0 ? list[i - 1].server.cell_id : null;
  };
  const newSqlCell = (relative: "above" | "below") => {
    const empty = { sql: "", view: {} } as CellBody["content"];
    if (!selected) return void addCellAfter("sql", empty, undefined, { edit: true });
    return void addCellAfter("sql", empty, relative === "below" ? selected : previousOf(selected), { edit: true });
  };
  const removeCell = useCallback(
    async (id: string) => {
      const cell = cellsRef.current.find((c) => c.server.cell_id === id);
      if (!cell) return;
      clearTimeout(timers.current.get(id));
      try {
        const gone = await callMutation<typeof deleteCell>("cells.delete", { cell_id: id, expected_revision: cell.server.revision });
        const list = cellsRef.current;
        const i = list.findIndex((c) => c.server.cell_id === id);
        setCells((prev) => prev.filter((c) => c.server.cell_id !== id));
        setUndo((prev) => [...prev, gone]);
        // The selection moves on only if it was on this cell (keys may have moved it meanwhile).
        if (selectedRef.current === id) {
          setSelected(list[i + 1]?.server.cell_id ?? list[i - 1]?.server.cell_id ?? null);
          setEditing(null);
        }
      } catch (e) {
        fail(e);
      }
    },
    [fail],
  );
  const undoDelete = async () => {
    const last = undo[undo.length - 1];
    if (!last) return;
    try {
      const back = await callMutation<typeof restoreCell>("cells.restore", { cell_id: last.cell_id, expected_revision: last.revision });
      setUndo((prev) => prev.slice(0, -1));
      setCells((prev) => inOrder([...prev, fresh(back)]));
      setSelected(back.cell_id);
    } catch (e) {
      fail(e);
    }
  };
  const moveAfter = async (id: string, after: string | null) => {
    const cell = cellsRef.current.find((c) => c.server.cell_id === id);
    if (!cell || after === id) return;
    try {
      const moved = await callMutation<typeof moveCell>("cells.move", { cell_id: id, expected_revision: cell.server.revision, after_cell_id: after });
      setCells((prev) => inOrder(prev.map((c) => (c.server.cell_id === id ? { ...c, server: moved } : c))));
    } catch (e) {
      fail(e);
    }
  };
  const moveBy = (id: string, step: -1 | 1) => {
    const list = cellsRef.current;
    const i = list.findIndex((c) => c.server.cell_id === id);
    if (step === -1 && i > 0) void moveAfter(id, i >= 2 ? list[i - 2].server.cell_id : null);
    if (step === 1 && i >= 0 && i < list.length - 1) void moveAfter(id, list[i + 1].server.cell_id);
  };
  const repin = async (id: string) => {
    const cell = cellsRef.current.find((c) => c.server.cell_id === id);
    if (!cell || !headCommitId) return;
    try {
      const server = await callMutation<typeof changeCell>("cells.update", { cell_id: id, expected_revision: cell.server.revision, commit_id: headCommitId });
      // A SQL cell runs again at its new commit once the page holds it (the SQL runtime sees the change).
      patchCell(id, (c) => ({ ...c, server }));
    } catch (e) {
      fail(e);
    }
  };
  /** M and Y: the text moves to a new cell of the other kind, in the same place; the old one is deleted (Z undoes). */
  const convert = async (id: string, kind: "note" | "sql") => {
    const cell = cellsRef.current.find((c) => c.server.cell_id === id);
    if (!cell || cell.server.kind === kind || !TEXT_KINDS.has(cell.server.kind)) return;
    const text = cell.server.kind === "note" ? contentOf<"note">(cell).markdown : contentOf<"sql">(cell).sql;
    const content = (kind === "note" ? { markdown: text } : { sql: text, view: {} }) as CellBody["content"];
    // The new cell is selected when it is added, so deleting the old one leaves the selection alone.
    const made = await addCellAfter(kind, content, id);
    if (made) await removeCell(id);
  };
  const resolve = (id: string, how: "mine" | "theirs" | "both") => {
    const cell = cellsRef.current.find((c) => c.server.cell_id === id);
    if (!cell?.conflict) return;
    const theirs = cell.conflict;
    if (how === "mine") {
      patchCell(id, (c) => ({ ...c, server: theirs, conflict: null, draft: c.draft ?? { content: contentOf(c) } }));
      setTimeout(() => save(id), 0);
      return;
    }
    if (how === "both") void addCellAfter(cell.server.kind, contentOf(cell), id);
    patchCell(id, (c) => ({ ...c, server: theirs, conflict: null, draft: null }));
  };
  const runCell = (id: string) => {
    const cell = cellsRef.current.find((c) => c.server.cell_id === id);
    if (cell?.server.kind === "sql") {
      // The text typed so far is what runs, saved or not.
      clearTimeout(timers.current.get(id));
      save(id);
      void sql.run(id);
    }
  };

  // ---- keyboard: command mode on the notebook, edit mode inside a cell's editor.
  const lastKey = useRef<{ key: string; at: number }>({ key: "", at: 0 });
  const focusCell = (id: string | null) => {
    if (!id) return;
    const el = document.getElementById(`cell-${id}`);
    el?.focus({ preventScroll: true });
    el?.scrollIntoView({ block: "nearest" });
  };
  const step = (delta: -1 | 1) => {
    const list = cellsRef.current;
    const i = list.findIndex((c) => c.server.cell_id === selectedRef.current);
    const next = list[Math.min(list.length - 1, Math.max(0, i + delta))];
    if (next) {
      setSelected(next.server.cell_id);
      focusCell(next.server.cell_id);
    }
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.defaultPrevented) return;
    const target = e.target as HTMLElement;
    const id = selectedRef.current;
    const inEditor = target.closest("textarea, input, select, [contenteditable=true]") !== null;
    if (overlay) {
      if (e.key === "Escape") {
        setOverlay(null);
        e.preventDefault();
      }
      return;
    }
    if (e.key === "Enter" && (e.shiftKey || e.ctrlKey || e.metaKey) && id) {
      e.preventDefault();
      runCell(id);
      setEditing(null);
      if (e.shiftKey) step(1);
      return;
    }
    if (inEditor) {
      if (e.key === "Escape") {
        e.preventDefault();
        setEditing(null);
        focusCell(id);
      }
      return;
    }
    // Keys typed inside a cell's own view (a flame graph's arrows, search) belong to that view.
    if (target.closest(".nb-cell-body")) {
      if (e.key === "Escape") focusCell(id);
      return;
    }
    if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown") && id) {
      e.preventDefault();
      moveBy(id, e.key === "ArrowUp" ? -1 : 1);
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key;
    const doubled = lastKey.current.key === key && performance.now() - lastKey.current.at < 800;
    lastKey.current = { key, at: performance.now() };
    const handled = () => e.preventDefault();
    switch (key) {
      case "Enter":
        if (id && TEXT_KINDS.has(cellsRef.current.find((c) => c.server.cell_id === id)!.server.kind)) setEditing(id);
        return handled();
      case "j":
      case "ArrowDown":
        step(1);
        return handled();
      case "k":
      case "ArrowUp":
        step(-1);
        return handled();
      case "a":
        newSqlCell("above");
        return handled();
      case "b":
        newSqlCell("below");
        return handled();
      case "d":
        if (doubled && id) {
          lastKey.current = { key: "", at: 0 };
          void removeCell(id);
        }
        return handled();
      case "z":
        void undoDelete();
        return handled();
      case "m":
        if (id) void convert(id, "note");
        return handled();
      case "y":
        if (id) void convert(id, "sql");
        return handled();
      case "h":
        setOverlay("hypothesis");
        return handled();
      case "f":
        setOverlay("finding");
        return handled();
      case "?":
        setOverlay("keys");
        return handled();
    }
  };

  const keyHandler = useRef(onKeyDown);
  keyHandler.current = onKeyDown;
  useEffect(() => {
    const listener = (e: KeyboardEvent) => keyHandler.current(e);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);

  const setStatus = async (status: Investigation["status"]) => {
    try {
      setInvestigation(await callMutation<typeof changeInvestigation>("investigations.update", { investigation_id: investigationId, expected_revision: investigation.revision, status }));
    } catch (e) {
      fail(e);
    }
  };

  const cellLabel = useCallback(
    (id: string) => {
      const i = cells.findIndex((c) => c.server.cell_id === id);
      if (i < 0) return id;
      return cells[i].server.name ?? `[${i + 1}]`;
    },
    [cells],
  );
  const env: NotebookEnv = {
    investigationId,
    headCommitId,
    hypotheses,
    findings,
    cells,
    sql,
    cellLabel,
    recordChanged: ({ hypothesis, finding }: { hypothesis?: Hypothesis; finding?: Finding }) => {
      if (hypothesis) setHypotheses((prev) => new Map(prev).set(hypothesis.hypothesis_id, hypothesis));
      if (finding) setFindings((prev) => new Map(prev).set(finding.finding_id, finding));
    },
  };
  /** A hypothesis or finding was recorded (with its cell after the selected one): show it, selected. */
  const recorded = (made: { cellId: string | null } | null) => {
    setOverlay(null);
    if (!made) return;
    void refresh()
      .then(() => made.cellId && setSelected(made.cellId))
      .catch(fail);
  };

  const supported = [...findings.values()].filter((f) => f.assessment === "supported" && f.lifecycle === "active").length;
  return (
    <NotebookContext.Provider value={env}>
      <div className="nb-page" data-testid="notebook" data-cell-count={cells.length}>
        <div className="nb-main">
          <header className="nb-head">
            <div>
              <h1 data-testid="investigation-title">{investigation.title}</h1>
              {investigation.question ? <p className="nb-question">{investigation.question}</p> : null}
              <p className="tip-muted">
                <span className="mono">{investigationId}</span> · {cells.length} cells · {hypotheses.size} hypotheses · {findings.size} findings ({supported} supported)
                {investigation.imported ? " · imported" : ""}
              </p>
            </div>
            <span className="spacer" />
            <button type="button" className="plain-button" onClick={() => setOverlay("export")} data-testid="open-export">
              Export…
            </button>
            <label className="field">
              <span>Status</span>
              <select value={investigation.status} onChange={(e) => void setStatus(e.target.value as Investigation["status"])} data-testid="investigation-status">
                <option value="open">open</option>
                <option value="concluded">concluded</option>
                <option value="abandoned">abandoned</option>
              </select>
            </label>
          </header>
          <div className="nb-toolbar" role="toolbar" aria-label="Add to the notebook">
            <button type="button" className="plain-button" onClick={() => void addCellAfter("note", { markdown: "" }, selected ?? undefined, { edit: true })} data-testid="add-note">
              + Note
            </button>
            <button type="button" className="plain-button" onClick={() => newSqlCell("below")} data-testid="add-sql">
              + SQL
            </button>
            <button type="button" className="plain-button" onClick={() => setOverlay("hypothesis")} data-testid="add-hypothesis">
              + Hypothesis
            </button>
            <button type="button" className="plain-button" onClick={() => setOverlay("finding")} data-testid="add-finding">
              + Finding
            </button>
            <button type="button" className="plain-button" onClick={() => setOverlay("experiment")} data-testid="add-experiment">
              + Experiment
            </button>
            <span className="spacer" />
            {undo.length ? (
              <button type="button" className="link-button" onClick={() => void undoDelete()} data-testid="undo-delete">
                undo delete (Z)
              </button>
            ) : null}
            <button type="button" className="link-button" onClick={() => setOverlay("keys")} data-testid="show-keys">
              keys (?)
            </button>
          </div>
          {pageError ? (
            <div onClick={() => setPageError(null)}>
              <ErrorPanel error={pageError} />
            </div>
          ) : null}
          {cells.length === 0 ? (
            <div className="empty" data-testid="notebook-empty">
              <strong>An empty notebook.</strong> Add a note or a SQL cell above (or press B), or open a run and use “Add to investigation” on its flame graph, sandwich, call tree, trace or SQL view.
            </div>
          ) : null}
          <div className="nb-cells">
            {cells.map((cell, index) => {
              const id = cell.server.cell_id;
              const View = CELL_VIEWS[cell.server.kind] as React.ComponentType<CellViewProps>;
              const actions: CellActions = {
                select: () => setSelected(id),
                repin: () => void repin(id),
                moveUp: () => moveBy(id, -1),
                moveDown: () => moveBy(id, 1),
                remove: () => void removeCell(id),
                keepMine: () => resolve(id, "mine"),
                takeTheirs: () => resolve(id, "theirs"),
                keepBoth: () => resolve(id, "both"),
                drop: (dragged, before) => void moveAfter(dragged, before ? previousOf(id) : id),
              };
              return (
                <CellFrame key={id} cell={cell} index={index} selected={selected === id} editing={editing === id} headCommitId={headCommitId} actions={actions}>
                  <View cell={cell} content={contentOf(cell)} editing={editing === id} onContent={(content) => edit(id, { content })} onName={(name) => edit(id, { name })} />
                </CellFrame>
              );
            })}
          </div>
        </div>
        <aside className="nb-side">
          <AgentTimeline events={activity} />
        </aside>
        {overlay === "keys" ? <NotebookKeys onClose={() => setOverlay(null)} /> : null}
        {overlay === "experiment" ? (
          <div className="nb-overlay" role="dialog" aria-label="Plan an experiment">
            <div className="nb-overlay-card wide">
              <ExperimentForm
                onStarted={async (experimentId) => {
                  // The cell appears as the trials start; it follows their progress and can cancel them.
                  await addCellAfter("experiment", { experiment_id: experimentId }, selected ?? undefined);
                  setOverlay(null);
                }}
                onCancel={() => setOverlay(null)}
              />
            </div>
          </div>
        ) : null}
        {overlay === "export" ? <ExportDialog investigationId={investigationId} onClose={() => setOverlay(null)} /> : null}
        {overlay === "hypothesis" || overlay === "finding" ? (
          <div className="nb-overlay" role="dialog" aria-label={overlay === "hypothesis" ? "Record a hypothesis" : "Record a finding"}>
            <div className="nb-overlay-card wide">{overlay === "hypothesis" ? <HypothesisForm afterCellId={selected} onDone={recorded} /> : <FindingForm afterCellId={selected} onDone={recorded} />}</div>
          </div>
        ) : null}
      </div>
    </NotebookContext.Provider>
  );
}
