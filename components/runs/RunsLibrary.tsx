"use client";

import { useCallback, useMemo, useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { Run } from "../../server/domain/models";
import { ErrorPanel } from "../ErrorPanel";
import { RunsTable, type RunSelection } from "../RunsTable";
import { useUrlState } from "../use-url-state";
import { useWorkspaceChanges } from "../home/LiveRefresh";
import { hasFilters, listInputOf, RUNS_PAGE_SIZE, RUNS_URL_STATE, type RunPage, type RunsUrlState } from "./library-query";
import { RunFilterBar, type RunFilterChoices } from "./RunFilterBar";
import { RunTitleEditor } from "./RunTitleEditor";
import { useRunsPage } from "./use-runs-page";

/** The compare page's address for two runs: the older is the base, the newer the candidate. */
function compareHref(runs: Run[]): string {
  const [base, candidate] = [...runs].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.run_id < b.run_id ? -1 : 1));
  return `/compare?base=${encodeURIComponent(base.run_id)}&candidate=${encodeURIComponent(candidate.run_id)}`;
}

/** What the selection can do: compare exactly two, open one in the SQL console. */
function SelectionActions({ selected, onClear }: { selected: Run[]; onClear: () => void }) {
  const two = selected.length === 2;
  const one = selected.length === 1;
  return (
    <div className="runs-actions" data-testid="runs-actions">
      <span className="num" data-testid="runs-selected">
        {selected.length === 0 ? "Select runs to compare or query them" : `${selected.length} selected`}
      </span>
      {two ? (
        <a className="button" href={compareHref(selected)} data-testid="compare-selected">
          Compare
        </a>
      ) : (
        <button type="button" className="button" disabled title="Select exactly two runs: the older is the base, the newer the candidate" data-testid="compare-selected">
          Compare
        </button>
      )}
      {one ? (
        <a className="runs-secondary" href={`/sql?run=${encodeURIComponent(selected[0].run_id)}`} data-testid="sql-selected">
          Open in SQL
        </a>
      ) : (
        <button type="button" className="runs-secondary" disabled title="The SQL console reads one run (or the whole commit): select one run" data-testid="sql-selected">
          Open in SQL
        </button>
      )}
      {selected.length ? (
        <button type="button" className="runs-secondary" onClick={onClear} data-testid="clear-selection">
          Clear selection
        </button>
      ) : null}
    </div>
  );
}

/** Previous and next page by the page's cursors; `suffix` tells the copy under the table from the one above. */
function Pager({ page, loading, go, suffix = "" }: { page: RunPage; loading: boolean; go: (cursor: string | null) => void; suffix?: string }) {
  return (
    <span className="runs-pager">
      <button type="button" disabled={!page.previous_cursor || loading} onClick={() => go(page.previous_cursor)} data-testid={`runs-previous${suffix}`}>
        ← Previous page
      </button>
      <button type="button" disabled={!page.next_cursor || loading} onClick={() => go(page.next_cursor)} data-testid={`runs-next${suffix}`}>
        Next page →
      </button>
    </span>
  );
}

/**
 * Every run of the workspace, a keyset page at a time: filters, order and page in the URL,
 * several runs selected across pages and filters, titles renamed in place; live (new runs and
 * changed states appear without a reload).
 */
export function RunsLibrary(props: { initialState: RunsUrlState; initialPage: RunPage | null; initialError: ErrorDocument | null; choices: RunFilterChoices; signature: string }) {
  const [state, patch] = useUrlState(RUNS_URL_STATE, props.initialState);
  const input = useMemo(() => listInputOf(state, RUNS_PAGE_SIZE), [state]);
  // Live: a new run, or a capture or import ending (the workspace's status changes), asks for the page shown again, as the home page's active-operations count is kept current.
  const [revision, setRevision] = useState(0);
  useWorkspaceChanges(props.signature, () => setRevision((r) => r + 1));
  const { page, error, loading, replaceRun } = useRunsPage(input, { input: listInputOf(props.initialState, RUNS_PAGE_SIZE), page: props.initialPage, error: props.initialError }, revision);
  const [selected, setSelected] = useState<Map<string, Run>>(() => new Map());

  const toggle = useCallback(
    (run: Run) =>
      setSelected((s) => {
        const next = new Map(s);
        if (!next.delete(run.run_id)) next.set(run.run_id, run);
        return next;
      }),
    [],
  );
  const selection: RunSelection = {
    selected: new Set(selected.keys()),
    toggle,
    toggleAll: (runs, on) =>
      setSelected((s) => {
        const next = new Map(s);
        for (const run of runs) {
          if (on) next.set(run.run_id, run);
          else next.delete(run.run_id);
        }
        return next;
      }),
  };
  const renamed = (run: Run) => {
    replaceRun(run);
    setSelected((s) => (s.has(run.run_id) ? new Map(s).set(run.run_id, run) : s));
  };

  return (
    <>
      <RunFilterBar state={state} choices={props.choices} onChange={patch} />
      <div className="runs-toolbar">
        <SelectionActions selected={[...selected.values()]} onClear={() => setSelected(new Map())} />
        <span className="spacer" />
        {page ? (
          <span className="num runs-matching" data-testid="runs-matching">
            {page.matching.toLocaleString("en-US")} {page.matching === 1 ? "run" : "runs"}
            {hasFilters(state) ? " match" : ""} · {RUNS_PAGE_SIZE} per page
          </span>
        ) : null}
        <label className="runs-order">
          <span>Order</span>
          <select value={state.order ?? "newest"} onChange={(e) => patch({ order: e.target.value, cursor: null })} data-testid="runs-order">
            <option value="newest">newest first</option>
            <option value="oldest">oldest first</option>
            <option value="title">title, A to Z</option>
          </select>
        </label>
        {page ? <Pager page={page} loading={loading} go={(cursor) => patch({ cursor })} /> : null}
      </div>
      {error ? (
        <div className="runs-error">
          <ErrorPanel error={error} />
          <p>
            {state.cursor ? (
              <button type="button" className="runs-secondary" onClick={() => patch({ cursor: null })} data-testid="runs-first-page">
                Go to the first page
              </button>
            ) : null}{" "}
            <a className="runs-secondary" href="/runs">
              Show every run
            </a>
          </p>
        </div>
      ) : page ? (
        <div className={loading ? "runs-body runs-loading" : "runs-body"} aria-busy={loading} data-testid="runs-body" data-revision={revision}>
          {page.items.length ? (
            <RunsTable runs={page.items} selection={selection} title={(run) => <RunTitleEditor run={run} onRenamed={renamed} />} />
          ) : (
            <div className="empty" data-testid="runs-no-match">
              <strong>{hasFilters(state) ? "No runs match these filters." : "No runs on this page."}</strong> Loosen a filter, or{" "}
              <a href="/runs">show every run</a>.
            </div>
          )}
          {page.items.length > 10 ? (
            <div className="runs-footer">
              <Pager page={page} loading={loading} go={(cursor) => patch({ cursor })} suffix="-bottom" />
            </div>
          ) : null}
        </div>
      ) : (
        <p className="tip-muted">Loading runs…</p>
      )}
    </>
  );
}
