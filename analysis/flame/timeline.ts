import type { FlameLayout } from "./layout";
import { buildFlameTree, type FlameInputNode, type FlameTree } from "./tree";

/** One merged cell as `evidence.flame_timeline` returns it (the fields this module reads). */
export interface TimelineInputCell extends Omit<FlameInputNode, "node_id"> {
  cell_id: string;
  start_ns: number;
  end_ns: number;
}

export interface FlameTimeline {
  tree: FlameTree;
  layout: FlameLayout;
  /** Time of each node (index 0, the synthetic root, spans all cells). */
  start: Float64Array;
  end: Float64Array;
}

/**
 * A time-order flame graph in the same columnar form as the left-heavy one, so the one renderer,
 * search, zoom and tooltips serve both: x is time, `byDepth` rows sorted by start time.
 */
export function buildTimeline(cells: readonly TimelineInputCell[], rootName = "all"): FlameTimeline {
  const tree = buildFlameTree(
    cells.map((c) => ({ ...c, node_id: c.cell_id })),
    rootName,
  );
  const start = new Float64Array(tree.count);
  const end = new Float64Array(tree.count);
  cells.forEach((c, k) => {
    start[k + 1] = c.start_ns;
    end[k + 1] = c.end_ns;
  });
  return { tree, layout: timelineLayout(tree, start, end), start, end };
}

/** x = time as a fraction of the whole span (index 0, the root, gets that span), rows by start. */
export function timelineLayout(tree: Pick<FlameTree, "count" | "depth" | "maxDepth">, start: Float64Array, end: Float64Array): FlameLayout {
  let t0 = Infinity;
  let t1 = -Infinity;
  for (let i = 1; i < tree.count; i++) {
    if (start[i] < t0) t0 = start[i];
    if (end[i] > t1) t1 = end[i];
  }
  if (!(t1 > t0)) {
    t0 = tree.count > 1 ? t0 : 0;
    t1 = t0 + 1;
  }
  start[0] = t0;
  end[0] = t1;
  const span = t1 - t0;
  const x = new Float64Array(tree.count);
  const w = new Float64Array(tree.count);
  const rows: number[][] = Array.from({ length: tree.maxDepth + 1 }, () => []);
  for (let i = 0; i < tree.count; i++) {
    x[i] = (start[i] - t0) / span;
    w[i] = (end[i] - start[i]) / span;
    rows[tree.depth[i]].push(i);
  }
  const byDepth = rows.map((r) => Int32Array.from(r.sort((a, b) => x[a] - x[b] || a - b)));
  return { x, w, byDepth };
}
