"use client";

import { useEffect, useId, useRef, useState } from "react";
import type { z } from "zod";
import type { CELL_KINDS, CellKindDef } from "../../analysis/notebook/cells";
import type { ErrorDocument } from "../../server/domain/errors";
import type { Investigation } from "../../server/domain/notebook";
import type { addCell } from "../../server/services/cells";
import type { createInvestigation, listInvestigations } from "../../server/services/investigations";
import { ErrorPanel } from "../ErrorPanel";
import { callMutation, callQuery, errorDocumentOf } from "../home/trpc-client";

type DraftOf<D> = D extends CellKindDef<infer K, infer C> ? { kind: K; content: z.input<C> } : never;

/** The cell a view would add: its kind, its content (the view's state) and the concrete commit it reads. */
export type CellDraft = DraftOf<(typeof CELL_KINDS)[number]> & { commit_id: string };

/** Open investigations offered at most (newest first); older ones are on /investigations. */
const PICK_LIMIT = 20;

type Choice = { investigation_id: string; title: string; cells: number };
type Added = { investigation_id: string; title: string; cell_id: string };

/**
 * "Add to investigation": a popover to pick an open investigation or name a new one, then
 * `cells.add` with the view's state as the cell. `cell` is read at click time, so whatever the
 * view shows at that moment (zoom, search, SQL text) is what the cell keeps.
 */
export function AddToInvestigation(props: { cell: () => CellDraft; label?: string }) {
  const [open, setOpen] = useState(false);
  const [choices, setChoices] = useState<Choice[] | null>(null);
  const [more, setMore] = useState(false);
  const [title, setTitle] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorDocument | null>(null);
  const [added, setAdded] = useState<Added | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const titleInput = useRef<HTMLInputElement>(null);
  const dialogId = useId();

  const close = () => {
    setOpen(false);
    trigger.current?.focus();
  };

  useEffect(() => {
    if (!open) return;
    let live = true;
    setChoices(null);
    setError(null);
    callQuery<typeof listInvestigations>("investigations.list", { status: "open", limit: PICK_LIMIT })
      .then((page) => {
        if (!live) return;
        setChoices(page.items.map((i) => ({ investigation_id: i.investigation_id, title: i.title, cells: i.counts.cells })));
        setMore(page.next_cursor !== null);
      })
      .catch((e) => live && setError(errorDocumentOf(e)));
    // A click outside closes it, as menus do.
    const outside = (e: PointerEvent) => !root.current?.contains(e.target as Node) && setOpen(false);
    document.addEventListener("pointerdown", outside);
    return () => {
      live = false;
      document.removeEventListener("pointerdown", outside);
    };
  }, [open]);

  useEffect(() => {
    if (open && choices && choices.length === 0) titleInput.current?.focus();
  }, [open, choices]);

  const addTo = async (target: { investigation_id: string; title: string } | { newTitle: string }) => {
    setBusy(true);
    setError(null);
    try {
      const draft = props.cell();
      const inv: Pick<Investigation, "investigation_id" | "title"> =
        "newTitle" in target ? await callMutation<typeof createInvestigation>("investigations.create", { title: target.newTitle }) : target;
      const cell = await callMutation<typeof addCell>("cells.add", { investigation_id: inv.investigation_id, kind: draft.kind, content: draft.content, commit_id: draft.commit_id });
      setAdded({ investigation_id: inv.investigation_id, title: inv.title, cell_id: cell.cell_id });
      setTitle("");
      close();
    } catch (e) {
      setError(errorDocumentOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div
      className="add-to-inv"
      ref={root}
      onKeyDown={(e) => {
        if (e.key === "Escape" && open) {
          // Esc closes the popover only: the view's own Esc (reset zoom) must not fire too.
          e.stopPropagation();
          e.preventDefault();
          close();
        }
      }}
    >
      <button
        type="button"
        ref={trigger}
        className="add-to-inv-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls={open ? dialogId : undefined}
        onClick={() => {
          if (open) return close();
          setAdded(null);
          setOpen(true);
        }}
        data-testid="add-to-investigation"
      >
        {props.label ?? "Add to investigation"}
      </button>
      <span className="add-to-inv-status" role="status" data-testid="add-to-investigation-status">
        {added ? (
          <>
            Added to <strong>{added.title}</strong> —{" "}
            <a href={`/investigations/${encodeURIComponent(added.investigation_id)}#cell-${added.cell_id}`} data-testid="add-to-investigation-open">
              open
            </a>
          </>
        ) : null}
      </span>
      {open ? (
        <div className="add-to-inv-popover" role="dialog" id={dialogId} aria-label="Add to investigation" data-testid="add-to-investigation-popover">
          <div className="add-to-inv-heading">Add this view to an open investigation</div>
          {choices === null && !error ? <p className="add-to-inv-note">Loading open investigations…</p> : null}
          {choices && choices.length === 0 ? <p className="add-to-inv-note">No open investigations yet: name a new one below.</p> : null}
          {choices && choices.length > 0 ? (
            <ul className="add-to-inv-list" data-testid="add-to-investigation-choices">
              {choices.map((c, i) => (
                <li key={c.investigation_id}>
                  <button
                    type="button"
                    autoFocus={i === 0}
                    disabled={busy}
                    onClick={() => void addTo(c)}
                    data-testid="add-to-investigation-choice"
                    data-investigation-id={c.investigation_id}
                  >
                    <span className="add-to-inv-title">{c.title}</span>
                    <span className="add-to-inv-count num">
                      {c.cells} cell{c.cells === 1 ? "" : "s"}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
          {more ? (
            <p className="add-to-inv-note">
              The {PICK_LIMIT} newest are shown; <a href="/investigations">all investigations</a>.
            </p>
          ) : null}
          <form
            className="add-to-inv-new"
            onSubmit={(e) => {
              e.preventDefault();
              void addTo({ newTitle: title });
            }}
          >
            <label htmlFor={`${dialogId}-title`}>New investigation</label>
            <div className="add-to-inv-row">
              <input
                id={`${dialogId}-title`}
                ref={titleInput}
                value={title}
                maxLength={200}
                placeholder="Title, e.g. Why did parse get slower?"
                onChange={(e) => setTitle(e.target.value)}
                data-testid="add-to-investigation-title"
              />
              <button type="submit" disabled={busy} data-testid="add-to-investigation-create">
                {busy ? "Adding…" : "Create and add"}
              </button>
            </div>
          </form>
          {error ? <ErrorPanel error={error} /> : null}
        </div>
      ) : null}
    </div>
  );
}
