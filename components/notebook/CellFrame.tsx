"use client";

import type { DragEvent, ReactNode } from "react";
import { cellKind } from "../../analysis/notebook/cells";
import { contentOf, type PageCell } from "./context";
import { AuthorBadge } from "./cells/author";
import { workbenchUrlOf } from "./links";

export interface CellActions {
  select: () => void;
  repin: () => void;
  moveUp: () => void;
  moveDown: () => void;
  remove: () => void;
  keepMine: () => void;
  takeTheirs: () => void;
  keepBoth: () => void;
  drop: (draggedId: string, before: boolean) => void;
}

const DRAG_TYPE = "application/x-emberscope-cell";

function saveState(cell: PageCell): string {
  if (cell.conflict) return "conflict";
  if (cell.error) return "not saved";
  if (cell.saving) return "saving…";
  if (cell.draft) return "unsaved";
  return `saved · rev ${cell.server.revision}`;
}

/**
 * A cell's chrome: its kind, name, author, pinned commit (with "re-pin to HEAD"), where it opens
 * in the workbench, its save state, and — after someone else saved first — both versions to take.
 */
export function CellFrame(props: { cell: PageCell; index: number; selected: boolean; editing: boolean; headCommitId: string | null; actions: CellActions; children: ReactNode }) {
  const { cell, actions } = props;
  const server = cell.server;
  const def = cellKind(server.kind);
  const shown = { ...server, content: contentOf(cell) } as typeof server;
  const workbench = workbenchUrlOf(shown);
  const onDrop = (e: DragEvent) => {
    const dragged = e.dataTransfer.getData(DRAG_TYPE);
    if (!dragged || dragged === server.cell_id) return;
    e.preventDefault();
    const box = e.currentTarget.getBoundingClientRect();
    actions.drop(dragged, e.clientY < box.top + box.height / 2);
  };
  return (
    <article
      id={`cell-${server.cell_id}`}
      className={`nb-cell${props.selected ? " selected" : ""}${props.editing ? " editing" : ""}${server.created_by.actor === "agent" ? " by-agent" : ""}`}
      tabIndex={-1}
      data-testid="notebook-cell"
      data-cell-id={server.cell_id}
      data-kind={server.kind}
      data-commit={server.commit_id ?? ""}
      data-save={cell.conflict ? "conflict" : cell.error ? "error" : cell.saving || cell.draft ? "pending" : "saved"}
      aria-label={`${def?.title ?? server.kind} cell ${props.index + 1}`}
      onMouseDown={() => !props.selected && actions.select()}
      onDragOver={(e) => e.dataTransfer.types.includes(DRAG_TYPE) && e.preventDefault()}
      onDrop={onDrop}
    >
      <header className="nb-cell-head">
        <span
          className="nb-drag"
          draggable
          title="Drag to move this cell"
          aria-hidden="true"
          onDragStart={(e) => {
            e.dataTransfer.setData(DRAG_TYPE, server.cell_id);
            e.dataTransfer.effectAllowed = "move";
          }}
        >
          ⋮⋮
        </span>
        <span className="nb-index num">[{props.index + 1}]</span>
        <strong>{def?.title ?? server.kind}</strong>
        {server.name ? <code data-testid="cell-name">{server.name}</code> : null}
        <AuthorBadge author={server.created_by} />
        {server.commit_id ? (
          <span className="nb-commit" data-testid="cell-commit">
            @ <code title="The commit this cell reads: its numbers never change under it">{server.commit_id}</code>
            {props.headCommitId && server.commit_id !== props.headCommitId ? (
              <>
                {" "}
                <span className="nb-not-head">not HEAD</span>{" "}
                <button type="button" className="link-button" onClick={actions.repin} data-testid="repin">
                  re-pin to HEAD
                </button>
              </>
            ) : null}
          </span>
        ) : null}
        <span className="spacer" />
        {workbench ? (
          <a href={workbench} className="nb-open" data-testid="cell-open">
            open ↗
          </a>
        ) : null}
        <span className="nb-save tip-muted" data-testid="cell-save">
          {saveState(cell)}
        </span>
        <button type="button" className="icon-button" onClick={actions.moveUp} title="Move up (Alt+↑)" aria-label="Move up">
          ↑
        </button>
        <button type="button" className="icon-button" onClick={actions.moveDown} title="Move down (Alt+↓)" aria-label="Move down">
          ↓
        </button>
        <button type="button" className="icon-button" onClick={actions.remove} title="Delete (D D; Z undoes)" aria-label="Delete" data-testid="cell-delete">
          ✕
        </button>
      </header>
      {cell.conflict ? (
        <div className="nb-conflict" role="alert" data-testid="cell-conflict">
          <strong>Someone else saved this cell first</strong> (their revision {cell.conflict.revision}, yours was based on {server.revision}). Both versions are kept until you choose:
          <div className="nb-conflict-versions">
            <div>
              <div className="tip-muted">Theirs</div>
              <pre className="mono" data-testid="conflict-theirs">{JSON.stringify(cell.conflict.content, null, 1)}</pre>
            </div>
            <div>
              <div className="tip-muted">Yours</div>
              <pre className="mono" data-testid="conflict-mine">{JSON.stringify(contentOf(cell), null, 1)}</pre>
            </div>
          </div>
          <button type="button" className="button" onClick={actions.keepMine} data-testid="conflict-keep-mine">
            Keep mine
          </button>{" "}
          <button type="button" className="plain-button" onClick={actions.takeTheirs} data-testid="conflict-take-theirs">
            Take theirs
          </button>{" "}
          <button type="button" className="plain-button" onClick={actions.keepBoth} data-testid="conflict-keep-both">
            Keep both (mine as a new cell below)
          </button>
        </div>
      ) : null}
      {cell.error && !cell.conflict ? (
        <p className="error-inline nb-save-error" role="alert" data-testid="cell-save-error">
          {cell.error.code}: {cell.error.message}
        </p>
      ) : null}
      <div className="nb-cell-body">{props.children}</div>
    </article>
  );
}
