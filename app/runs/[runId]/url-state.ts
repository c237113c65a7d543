import type { UrlState } from "../../../components/url-state";

/**
 * What the run page's URL carries (/runs/[runId]?…), with defaults. `commit` is read by the page
 * itself (CommitPicker changes it with a reload). Trace window: `window` is the visible time range and
 * `range` the selected one, both `START..END` in nanoseconds. DAG view: `node` is the selected node,
 * `whatif` a what-if as `NODE:MS`, `trace` the span trace shown; `cp=off` hides the trace window's
 * critical-path marks. SQL view: `sql` is the query last run.
 */
export const RUN_URL_STATE = {
  view: "flame",
  metric: null,
  zoom: null,
  q: null,
  sel: null,
  orient: "icicle",
  /** Flame graph mode: left-heavy (aggregated) or time-order. */
  mode: "left-heavy",
  budget: null,
  /** Call-tree transforms in order (analysis/queries/transforms.ts formatTransforms) and `inv=1`, the inverted tree. */
  tf: null,
  inv: null,
  window: null,
  range: null,
  node: null,
  whatif: null,
  trace: null,
  cp: null,
  /** Flame graph, sandwich, call tree, trace window: the tracks shown — absent: the busiest (the trace window: every track); `all`; `busiest`; or track keys joined by commas. */
  tracks: null,
  /** SQL view: the query last run. */
  sql: null,
} as const satisfies Record<string, string | null>;

export type RunUrlState = UrlState<typeof RUN_URL_STATE>;

const DEFAULT_BUDGET = 20_000;

/** The flame tree's node budget the URL asks for (`budget=`), bounded. */
export function budgetOf(value: string | null): number {
  return Math.min(200_000, Math.max(10, Number(value) || DEFAULT_BUDGET));
}
