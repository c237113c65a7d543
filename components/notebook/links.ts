import type { Cell, EvidenceTarget } from "../../server/domain/notebook";
import { formatTransforms } from "../../analysis/queries/transforms";

/** Where a cell's view opens in the workbench, at the cell's commit and with its view state; null for kinds with no page of their own. */
export function workbenchUrlOf(cell: Cell): string | null {
  const commit = cell.commit_id;
  const query = (params: Record<string, string | number | boolean | null | undefined>) =>
    new URLSearchParams(Object.entries(params).filter((e): e is [string, string | number | boolean] => e[1] !== null && e[1] !== undefined && e[1] !== "").map(([k, v]) => [k, String(v)])).toString();
  const runPage = (runId: string, params: Record<string, string | number | boolean | null | undefined>) => `/runs/${encodeURIComponent(runId)}?${query({ commit, ...params })}`;
  // The compare page's form: absent is every track merged.
  const tracksParam = (t: "all" | "busiest" | string[] | undefined) => (t === undefined || t === "all" ? null : t === "busiest" ? "busiest" : [...t].sort().join(","));
  // The cell's transforms as the run page's URL keeps them.
  const tf = (c: { transforms?: Parameters<typeof formatTransforms>[0]; inverted?: boolean }) => ({ tf: formatTransforms(c.transforms ?? []), inv: c.inverted ? "1" : null });
  const range = (r: readonly [number, number] | undefined) => (r ? `${r[0]}..${r[1]}` : null);
  switch (cell.kind) {
    case "flame":
      return runPage(cell.content.run_id, { metric: cell.content.metric, zoom: cell.content.zoom, q: cell.content.search, orient: cell.content.orientation, mode: cell.content.mode, ...tf(cell.content) });
    case "sandwich":
      return runPage(cell.content.run_id, { view: "sandwich", metric: cell.content.metric, sel: cell.content.selected, ...tf(cell.content) });
    case "calltree":
      return runPage(cell.content.run_id, { view: "calltree", metric: cell.content.metric, ...tf(cell.content) });
    case "trace":
      return runPage(cell.content.run_id, { view: "trace", window: range(cell.content.window), range: range(cell.content.range) });
    case "compare":
      return `/compare?${query({
        base: cell.content.base_run_id,
        candidate: cell.content.candidate_run_id,
        commit,
        metric: cell.content.metric,
        btracks: tracksParam(cell.content.base_tracks),
        ctracks: tracksParam(cell.content.candidate_tracks),
        from: cell.content.from,
        norm: cell.content.normalize ? "1" : null,
        zoom: cell.content.zoom,
        q: cell.content.search,
      })}`;
    case "critical_path":
      return runPage(cell.content.run_id, { view: "dag", trace: cell.content.trace_id, whatif: cell.content.what_if ? `${cell.content.what_if.node}:${cell.content.what_if.duration_ms}` : null });
    case "sql":
      return commit ? `/sql?${query({ commit })}` : null;
    default:
      return null;
  }
}

/** Where an evidence reference opens: a cell of this notebook by its anchor, a run or a comparison at the cited commit. */
export function referenceUrlOf(target: EvidenceTarget): string | null {
  switch (target.kind) {
    case "cell":
      return `#cell-${target.cell_id}`;
    case "run":
      return `/runs/${encodeURIComponent(target.run_id)}?commit=${encodeURIComponent(target.commit_id)}`;
    case "comparison":
      return `/compare?${new URLSearchParams({ base: target.base_run_id, candidate: target.candidate_run_id, commit: target.commit_id }).toString()}`;
    default:
      return null;
  }
}

/** A reference's target in words, e.g. "cell hot @ cmt_…", "run run_… @ cmt_…". */
export function describeTarget(target: EvidenceTarget, cellLabel: (cellId: string) => string): string {
  switch (target.kind) {
    case "cell":
      return `cell ${cellLabel(target.cell_id)} @ ${target.commit_id}`;
    case "run":
      return `run ${target.run_id} @ ${target.commit_id}`;
    case "commit":
      return `commit ${target.commit_id}`;
    case "comparison":
      return `comparison ${target.base_run_id} → ${target.candidate_run_id} @ ${target.commit_id}`;
    case "query_result":
      return `query result (${target.row_count.toLocaleString("en-US")} rows, ${target.rows_digest.slice(0, 19)}…) @ ${target.commit_id}`;
    case "experiment":
      return `experiment ${target.experiment_id} @ ${target.commit_id}`;
  }
}
