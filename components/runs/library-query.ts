import type { z } from "zod";
import type { listRuns } from "../../server/services/runs";
import type { UrlState } from "../url-state";

export type RunListInput = z.input<typeof listRuns.input>;
export type RunPage = z.output<typeof listRuns.output>;

/**
 * What /runs carries in its URL, with defaults: the filters (`q` text, kind, status, source,
 * workload, `from`/`to` UTC days), the order and the page's cursor. Pure: the server page and
 * the client read the same spec.
 */
export const RUNS_URL_STATE = {
  q: null,
  kind: null,
  status: null,
  source: null,
  workload: null,
  from: null,
  to: null,
  order: "newest",
  cursor: null,
} as const satisfies Record<string, string | null>;

export type RunsUrlState = UrlState<typeof RUNS_URL_STATE>;

/** Rows per page of /runs. */
export const RUNS_PAGE_SIZE = 50;

/** The filter keys (everything but the order and the cursor): changing one starts again at the first page. */
export const RUN_FILTER_KEYS = ["q", "kind", "status", "source", "workload", "from", "to"] as const;

/** runs.list's arguments for a URL state (absent values left out, as the cursor binds what was given). */
export function listInputOf(state: RunsUrlState, limit: number): RunListInput {
  const given: Record<string, unknown> = {
    text: state.q?.trim() || undefined,
    kind: state.kind ?? undefined,
    status: state.status ?? undefined,
    source: state.source ?? undefined,
    workload: state.workload ?? undefined,
    created_from: state.from ?? undefined,
    created_to: state.to ?? undefined,
    order: state.order ?? undefined,
    cursor: state.cursor ?? undefined,
    limit,
  };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as RunListInput;
}

/** Whether any filter is set (the empty state then says "no runs match" rather than "no runs yet"). */
export function hasFilters(state: RunsUrlState): boolean {
  return RUN_FILTER_KEYS.some((key) => Boolean(state[key]));
}
