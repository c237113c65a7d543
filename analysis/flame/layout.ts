import type { FlameTree } from "./tree";

/**
 * Left-heavy (aggregated) layout: each node spans [x, x + w) as a fraction of the root's total,
 * children packed left to right from their parent's start, heaviest first; self time is the gap
 * on the right. `byDepth[d]` holds the nodes of row d sorted by x, for binary-searched culling.
 */
export interface FlameLayout {
  x: Float64Array;
  w: Float64Array;
  byDepth: Int32Array[];
}

export function layoutFlame(tree: Pick<FlameTree, "count" | "total" | "depth" | "childStart" | "childIndex" | "maxDepth">): FlameLayout {
  const x = new Float64Array(tree.count);
  const w = new Float64Array(tree.count);
  const rootTotal = tree.total[0] || 1;
  const rows: number[][] = Array.from({ length: tree.maxDepth + 1 }, () => []);
  // Preorder with heaviest child first visits each row left to right, so rows come out sorted.
  const stack = [0];
  w[0] = tree.total[0] > 0 ? 1 : 0;
  while (stack.length) {
    const i = stack.pop()!;
    rows[tree.depth[i]].push(i);
    let cursor = x[i];
    const a = tree.childStart[i];
    const b = tree.childStart[i + 1];
    for (let c = a; c < b; c++) {
      const k = tree.childIndex[c];
      x[k] = cursor;
      w[k] = tree.total[k] / rootTotal;
      cursor += w[k];
    }
    for (let c = b - 1; c >= a; c--) stack.push(tree.childIndex[c]);
  }
  return { x, w, byDepth: rows.map((r) => Int32Array.from(r)) };
}

/** First position in a row whose node ends after `x0` (binary search on sorted starts). */
export function firstVisible(layout: FlameLayout, row: Int32Array, x0: number): number {
  let lo = 0;
  let hi = row.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const i = row[mid];
    if (layout.x[i] + layout.w[i] <= x0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The node at fraction `fx` of the width in row `depth`, or -1. */
export function nodeAt(layout: FlameLayout, depth: number, fx: number): number {
  const row = layout.byDepth[depth];
  if (!row) return -1;
  const at = firstVisible(layout, row, fx);
  if (at >= row.length) return -1;
  const i = row[at];
  return layout.x[i] <= fx && fx < layout.x[i] + layout.w[i] ? i : -1;
}

export interface Viewport {
  /** Visible range of the root's width, as fractions [x0, x1). */
  x0: number;
  x1: number;
}

/** The viewport that shows node `index` across the full width. */
export function viewportFor(layout: FlameLayout, index: number): Viewport {
  const w = layout.w[index] || 1;
  return { x0: layout.x[index], x1: layout.x[index] + w };
}

/** Zooms the viewport by `factor` (< 1 zooms in) around fraction `at`, clamped to [0, 1]. */
export function zoomViewport(v: Viewport, factor: number, at: number): Viewport {
  const span = Math.min(1, Math.max(1e-9, (v.x1 - v.x0) * factor));
  let x0 = at - (at - v.x0) * (span / (v.x1 - v.x0));
  x0 = Math.min(Math.max(0, x0), 1 - span);
  return { x0, x1: x0 + span };
}

/** Moves the viewport by `delta` of its own width, clamped to [0, 1]. */
export function panViewport(v: Viewport, delta: number): Viewport {
  const span = v.x1 - v.x0;
  const x0 = Math.min(Math.max(0, v.x0 + delta * span), 1 - span);
  return { x0, x1: x0 + span };
}
