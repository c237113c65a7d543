"use client";

import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { Run } from "../../server/domain/models";
import { ErrorPanel } from "../ErrorPanel";
import { renamedFrom, runLabel, runTime } from "../RunsTable";
import { useRunsPage, useSettledValue } from "./use-runs-page";

/** Runs a picker lists per page. */
const PICKER_PAGE = 8;

/** The popover's width, and the margin it keeps from the window's edges. */
const POPOVER_WIDTH = 440;
const EDGE = 16;

/**
 * A form field that picks one run out of every run in the workspace: a button showing the
 * choice, and a popover that searches runs.list (title, file name, source or id) and pages
 * through the answer by cursor. The choice is submitted as the hidden input `name`.
 * `none` labels an empty choice when the form allows one.
 */
export function RunPicker(props: { name: string; label: string; initial: Run | null; none?: string; testId: string }) {
  const [chosen, setChosen] = useState<Run | null>(props.initial);
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  // A page's cursor belongs to the search it was issued for: a new search starts at its first page.
  const [paged, setPaged] = useState<{ text: string; cursor: string } | null>(null);
  const [active, setActive] = useState(0);
  const settled = useSettledValue(text.trim(), 250);
  const cursor = paged?.text === settled ? paged.cursor : null;
  const { page, error, loading } = useRunsPage(open ? { limit: PICKER_PAGE, ...(settled ? { text: settled } : {}), ...(cursor ? { cursor } : {}) } : null);
  const box = useRef<HTMLDivElement>(null);
  // Where the popover sits: under the button, moved left as far as it must to stay in the window.
  const [place, setPlace] = useState({ left: 0, width: POPOVER_WIDTH });
  const toggle = () => {
    const rect = box.current?.getBoundingClientRect();
    if (rect && !open) {
      const width = Math.min(POPOVER_WIDTH, window.innerWidth - 2 * EDGE);
      setPlace({ width, left: Math.min(0, window.innerWidth - EDGE - rect.left - width) });
    }
    setOpen((o) => !o);
  };
  const turn = (to: string | null | undefined) => {
    if (!to) return;
    setPaged({ text: settled, cursor: to });
    setActive(0);
  };
  // A click outside closes it.
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => box.current && !box.current.contains(e.target as Node) && setOpen(false);
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [open]);

  const items = page?.items ?? [];
  const choose = (run: Run | null) => {
    setChosen(run);
    setOpen(false);
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      setOpen(false);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      setActive((a) => Math.max(0, Math.min(items.length - 1, a + (e.key === "ArrowDown" ? 1 : -1))));
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (items[active]) choose(items[active]);
    }
  };

  return (
    <div className="run-picker" ref={box}>
      <span>{props.label}</span>
      <input type="hidden" name={props.name} value={chosen?.run_id ?? ""} />
      <button
        type="button"
        className="run-picker-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        title={chosen ? `${chosen.title} · ${chosen.run_id}` : undefined}
        onClick={toggle}
        data-testid={props.testId}
        data-run-id={chosen?.run_id ?? ""}
      >
        {chosen ? runLabel(chosen) : (props.none ?? "choose a run")}
      </button>
      {open ? (
        <div className="run-picker-popover" style={place} role="dialog" aria-label={`${props.label}: pick a run`} onKeyDown={onKey} data-testid={`${props.testId}-popover`}>
          <input type="search" value={text} onChange={(e) => {
              setText(e.target.value);
              setActive(0);
            }}
            placeholder="Search title, file name, source or run id" aria-label="Search runs" autoFocus maxLength={200} />
          {error ? <ErrorPanel error={error} /> : null}
          <ul className="run-picker-list" role="listbox" aria-busy={loading}>
            {props.none ? (
              <li role="option" aria-selected={chosen === null}>
                <button type="button" onClick={() => choose(null)}>
                  <span className="run-picker-title">{props.none}</span>
                </button>
              </li>
            ) : null}
            {items.map((run, i) => (
              <li key={run.run_id} role="option" aria-selected={i === active} data-testid="run-picker-option">
                <button type="button" onClick={() => choose(run)} onMouseEnter={() => setActive(i)}>
                  <span className="run-picker-title">{run.title}</span>
                  <span className="run-picker-meta">
                    {run.kind} · {run.source}
                    {renamedFrom(run) ? ` · ${renamedFrom(run)}` : ""} · {run.status} · {runTime(run.created_at)} · {run.run_id}
                  </span>
                </button>
              </li>
            ))}
            {page && items.length === 0 ? <li className="run-picker-meta">No run matches.</li> : null}
          </ul>
          <div className="run-picker-pager">
            <span className="num">{page ? `${page.matching.toLocaleString("en-US")} ${page.matching === 1 ? "run" : "runs"}` : "Loading…"}</span>
            <span className="spacer" />
            <button type="button" disabled={!page?.previous_cursor || loading} onClick={() => turn(page?.previous_cursor)}>
              ← Previous
            </button>
            <button type="button" disabled={!page?.next_cursor || loading} onClick={() => turn(page?.next_cursor)} data-testid={`${props.testId}-next`}>
              Next →
            </button>
          </div>
        </div>
      ) : null}
    </div>
  );
}
