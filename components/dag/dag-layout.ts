/**
 * Where the DAG view draws each node: rows by longest-path depth (a node sits one row below its
 * deepest dependency), ordered within rows by barycentre sweeps (each node moves towards the mean
 * position of its neighbours in the rows above, then below, up to twelve times), keeping the order
 * with the fewest crossings between adjacent rows. Then x: the critical path runs straight down,
 * other boxes sit as near the mean of their neighbours above as their row's order allows.
 *
 * Beyond `budget` nodes the graph is folded around its critical path: the path's nodes stay (the
 * `pathBudget` heaviest of them when the path itself is longer, with its first and last), and
 * every other node joins the fold of its band — the rows between two shown path nodes — drawn as
 * one "+N" box between them. A fold opens on click (`expanded`); a band of one or two nodes is
 * never folded. Pure (no DOM), so it is tested in node.
 */

export const NODE_W = 184;
export const NODE_H = 44;
export const GAP_X = 18;
export const GAP_Y = 30;

export interface DagLayoutInput {
  nodeCount: number;
  /** Edge k goes from its dependency from[k] to its dependent to[k] (node indices, acyclic). */
  from: ArrayLike<number>;
  to: ArrayLike<number>;
  /** The critical path, first dependency first. */
  path: ArrayLike<number>;
  /** Each node's weight on the path (its own time): which path nodes stay when the path is folded too. */
  weight: ArrayLike<number>;
}

export interface LayoutOptions {
  budget: number;
  pathBudget: number;
  /** Fold ids opened by the user. */
  expanded: ReadonlySet<string>;
}

export type LayoutElement = NodeElement | FoldElement;

interface Placed {
  /** The centre of the element's box; y is its top. */
  x: number;
  y: number;
  row: number;
}

export interface NodeElement extends Placed {
  kind: "node";
  id: string;
  node: number;
}

export interface FoldElement extends Placed {
  kind: "fold";
  /** Stable while the same graph is shown: `fold:<band>`. */
  id: string;
  members: number[];
  /** How many of its members are on the critical path. */
  onPath: number;
}

export interface LayoutEdge {
  /** Element indices. */
  from: number;
  to: number;
  /** The graph's edges it stands for (indices into from/to). */
  edges: number[];
  /** It joins two consecutive steps of the critical path. */
  onPath: boolean;
  /** Another route already leads from its source to its target (it is not in the transitive reduction). */
  implied: boolean;
}

export interface DagLayout {
  elements: LayoutElement[];
  edges: LayoutEdge[];
  /** Element index of each node (its own, or its fold's). */
  elementOf: Int32Array;
  rows: number;
  /** Bounds of the drawing: box centres from minX to maxX (boxes reach NODE_W / 2 beyond), y from 0 to height. */
  minX: number;
  maxX: number;
  height: number;
  /** Nodes hidden in closed folds. */
  folded: number;
}

export const DEFAULT_LAYOUT: LayoutOptions = { budget: 500, pathBudget: 150, expanded: new Set() };

const SWEEPS = 12;
const MAX_REDUCED = 12_000;

export function layoutDag(input: DagLayoutInput, options: LayoutOptions = DEFAULT_LAYOUT): DagLayout {
  const n = input.nodeCount;
  const layer = longestPathLayers(input);
  const onPath = new Uint8Array(n);
  for (let k = 0; k < input.path.length; k++) onPath[input.path[k]] = 1;

  // Which element each node is drawn as; `level` orders rows (folds sit half a row below their band's first path node).
  const elementOf = new Int32Array(n).fill(-1);
  const elements: { kind: "node" | "fold"; id: string; node: number; members: number[]; onPath: number; level: number }[] = [];
  const show = (v: number) => {
    elementOf[v] = elements.length;
    elements.push({ kind: "node", id: `n:${v}`, node: v, members: [v], onPath: onPath[v], level: layer[v] });
  };
  let folded = 0;
  if (n <= options.budget) {
    for (let v = 0; v < n; v++) show(v);
  } else {
    const anchors = shownPathNodes(input, options.pathBudget).sort((a, b) => layer[a] - layer[b]);
    const anchorLayers = anchors.map((a) => layer[a]);
    for (const a of anchors) show(a);
    const bands = new Map<number, number[]>();
    for (let v = 0; v < n; v++) {
      if (elementOf[v] >= 0) continue;
      const band = upperBound(anchorLayers, layer[v]);
      const list = bands.get(band) ?? [];
      list.push(v);
      bands.set(band, list);
    }
    for (const [band, members] of [...bands].sort((a, b) => a[0] - b[0])) {
      const id = `fold:${band}`;
      if (members.length <= 2 || options.expanded.has(id)) {
        for (const v of members) show(v);
        continue;
      }
      const level = band === 0 ? -0.5 : anchorLayers[band - 1] + 0.5;
      for (const v of members) elementOf[v] = elements.length;
      elements.push({ kind: "fold", id, node: -1, members, onPath: members.reduce((s, v) => s + onPath[v], 0), level });
      folded += members.length;
    }
  }

  // Rows: distinct levels in order.
  const levels = [...new Set(elements.map((e) => e.level))].sort((a, b) => a - b);
  const rowOfLevel = new Map(levels.map((l, r) => [l, r]));
  const rowOf = elements.map((e) => rowOfLevel.get(e.level)!);

  // Element edges, one per pair; on the path when it joins consecutive path nodes.
  const edgeAt = new Map<string, number>();
  const edges: LayoutEdge[] = [];
  for (let k = 0; k < input.from.length; k++) {
    const a = elementOf[input.from[k]];
    const b = elementOf[input.to[k]];
    if (a === b) continue;
    const key = `${a}>${b}`;
    let at = edgeAt.get(key);
    if (at === undefined) {
      edgeAt.set(key, (at = edges.length));
      edges.push({ from: a, to: b, edges: [], onPath: false, implied: false });
    }
    edges[at].edges.push(k);
  }
  for (let k = 0; k + 1 < input.path.length; k++) {
    const at = edgeAt.get(`${elementOf[input.path[k]]}>${elementOf[input.path[k + 1]]}`);
    if (at !== undefined) edges[at].onPath = true;
  }

  markImplied(elements.length, rowOf, edges);
  const above: number[][] = elements.map(() => []);
  const below: number[][] = elements.map(() => []);
  for (const edge of edges) {
    above[edge.to].push(edge.from);
    below[edge.from].push(edge.to);
  }
  const order = orderRows(rowOf, levels.length, above, below);
  // Each step of the path is drawn under the one before it.
  const pathAbove = new Int32Array(elements.length).fill(-1);
  for (let k = 0; k + 1 < input.path.length; k++) {
    const a = elementOf[input.path[k]];
    const b = elementOf[input.path[k + 1]];
    if (a !== b && pathAbove[b] < 0) pathAbove[b] = a;
  }
  const x = placeRows(order, above, pathAbove);
  const placed: LayoutElement[] = [];
  let minX = Infinity;
  let maxX = -Infinity;
  elements.forEach((e, i) => {
    const y = rowOf[i] * (NODE_H + GAP_Y);
    minX = Math.min(minX, x[i]);
    maxX = Math.max(maxX, x[i]);
    placed.push(e.kind === "node" ? { kind: "node", id: e.id, node: e.node, x: x[i], y, row: rowOf[i] } : { kind: "fold", id: e.id, members: e.members, onPath: e.onPath, x: x[i], y, row: rowOf[i] });
  });
  if (placed.length === 0) minX = maxX = 0;
  return { elements: placed, edges, elementOf, rows: levels.length, minX, maxX, height: Math.max(0, levels.length * (NODE_H + GAP_Y) - GAP_Y), folded };
}

/** Longest-path depth of every node (Kahn's order); nodes left in a cycle go below the rest. */
export function longestPathLayers(input: Pick<DagLayoutInput, "nodeCount" | "from" | "to">): Int32Array {
  const n = input.nodeCount;
  const start = new Int32Array(n + 1);
  for (let k = 0; k < input.from.length; k++) start[input.from[k] + 1]++;
  for (let v = 0; v < n; v++) start[v + 1] += start[v];
  const next = new Int32Array(input.from.length);
  const fill = start.slice(0, n);
  const waiting = new Int32Array(n);
  for (let k = 0; k < input.from.length; k++) {
    next[fill[input.from[k]]++] = input.to[k];
    waiting[input.to[k]]++;
  }
  const layer = new Int32Array(n);
  const queue = new Int32Array(n);
  let tail = 0;
  for (let v = 0; v < n; v++) if (waiting[v] === 0) queue[tail++] = v;
  let deepest = 0;
  for (let head = 0; head < tail; head++) {
    const u = queue[head];
    deepest = Math.max(deepest, layer[u]);
    for (let e = start[u]; e < start[u + 1]; e++) {
      const w = next[e];
      if (layer[u] + 1 > layer[w]) layer[w] = layer[u] + 1;
      if (--waiting[w] === 0) queue[tail++] = w;
    }
  }
  if (tail < n) for (let v = 0; v < n; v++) if (waiting[v] > 0) layer[v] = deepest + 1;
  return layer;
}

/**
 * Flags the edges outside the transitive reduction: u → w is implied when another successor of u
 * reaches w. Edges go down the rows, so reachability is built bottom-up, as bit sets.
 */
function markImplied(count: number, rowOf: readonly number[], edges: LayoutEdge[]): void {
  // count² bits: past this many elements (several large folds opened), every edge is drawn.
  if (count > MAX_REDUCED) return;
  const words = (count + 31) >>> 5;
  const reach = new Uint32Array(count * words);
  const out: number[][] = Array.from({ length: count }, () => []);
  edges.forEach((edge, k) => out[edge.from].push(k));
  const byRowDown = Array.from({ length: count }, (_, e) => e).sort((a, b) => rowOf[b] - rowOf[a]);
  for (const u of byRowDown) {
    const mine = u * words;
    for (const k of out[u]) {
      const w = edges[k].to;
      reach[mine + (w >>> 5)] |= 1 << (w & 31);
      for (let i = 0; i < words; i++) reach[mine + i] |= reach[w * words + i];
    }
  }
  for (let u = 0; u < count; u++) {
    for (const k of out[u]) {
      const w = edges[k].to;
      edges[k].implied = out[u].some((j) => j !== k && (reach[edges[j].to * words + (w >>> 5)] & (1 << (w & 31))) !== 0);
    }
  }
}

/** The path nodes a folded graph keeps: all, or the heaviest `budget` with the first and last. */
function shownPathNodes(input: DagLayoutInput, budget: number): number[] {
  const path = Array.from(input.path);
  if (path.length <= budget) return path;
  const heaviest = [...path].sort((a, b) => input.weight[b] - input.weight[a] || a - b).slice(0, budget);
  return [...new Set([path[0], ...heaviest, path[path.length - 1]])];
}

/** How many of the sorted values are ≤ x. */
function upperBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Rows of element indices, ordered by barycentre sweeps (down, up, …) starting from index order;
 * the order with the fewest crossings between adjacent rows is kept. Edges go down the rows.
 */
function orderRows(rowOf: readonly number[], rowCount: number, above: readonly number[][], below: readonly number[][]): number[][] {
  const count = rowOf.length;
  const rows: number[][] = Array.from({ length: rowCount }, () => []);
  for (let e = 0; e < count; e++) rows[rowOf[e]].push(e);
  const pos = new Float64Array(count);
  const place = (row: number[]) => row.forEach((e, i) => (pos[e] = i - (row.length - 1) / 2));
  rows.forEach(place);
  const sweep = (r: number, neighbours: readonly number[][]) => {
    const row = rows[r];
    if (row.length < 2) return place(row);
    const centre = new Map<number, number>();
    for (const e of row) {
      const list = neighbours[e];
      centre.set(e, list.length ? list.reduce((s, m) => s + pos[m], 0) / list.length : pos[e]);
    }
    // Stable: equal barycentres keep their current order.
    row.sort((a, b) => centre.get(a)! - centre.get(b)! || pos[a] - pos[b]);
    place(row);
  };
  let best = rows.map((row) => [...row]);
  let fewest = adjacentCrossings(rows, pos, rowOf, below);
  for (let s = 0; s < SWEEPS && fewest > 0; s++) {
    if (s % 2 === 0) for (let r = 1; r < rowCount; r++) sweep(r, above);
    else for (let r = rowCount - 2; r >= 0; r--) sweep(r, below);
    const now = adjacentCrossings(rows, pos, rowOf, below);
    if (now < fewest) {
      fewest = now;
      best = rows.map((row) => [...row]);
    }
  }
  return best;
}

/**
 * x of each element, row by row from the top, keeping each row's order and a box's width apart:
 * a path step wants its predecessor's x (the path runs straight down), another element the mean x
 * of its neighbours above (the first row, and elements with none, their place in the packed row).
 * The pushes left to right and right to left are averaged, which keeps both the order and the gap.
 */
function placeRows(rows: readonly number[][], above: readonly number[][], pathAbove: Int32Array): Float64Array {
  const slot = NODE_W + GAP_X;
  const x = new Float64Array(pathAbove.length);
  for (const row of rows) {
    const n = row.length;
    const wanted = row.map((e, i) => {
      if (pathAbove[e] >= 0) return x[pathAbove[e]];
      const list = above[e];
      return list.length ? list.reduce((s, m) => s + x[m], 0) / list.length : (i - (n - 1) / 2) * slot;
    });
    const left = new Float64Array(n);
    const right = new Float64Array(n);
    for (let i = 0; i < n; i++) left[i] = i === 0 ? wanted[i] : Math.max(wanted[i], left[i - 1] + slot);
    for (let i = n - 1; i >= 0; i--) right[i] = i === n - 1 ? wanted[i] : Math.min(wanted[i], right[i + 1] - slot);
    row.forEach((e, i) => (x[e] = (left[i] + right[i]) / 2));
  }
  return x;
}

/** Crossings among edges joining adjacent rows: per row, inversions of the targets' positions in source order. */
function adjacentCrossings(rows: readonly number[][], pos: Float64Array, rowOf: readonly number[], below: readonly number[][]): number {
  let total = 0;
  for (let r = 0; r + 1 < rows.length; r++) {
    const targets: number[] = [];
    for (const e of rows[r]) {
      const next = below[e].filter((m) => rowOf[m] === r + 1).sort((a, b) => pos[a] - pos[b]);
      for (const m of next) targets.push(pos[m]);
    }
    total += inversions(targets);
  }
  return total;
}

/** Pairs i < j with values[i] > values[j] (merge sort). */
function inversions(values: number[]): number {
  if (values.length < 2) return 0;
  const mid = values.length >> 1;
  const left = values.slice(0, mid);
  const right = values.slice(mid);
  let count = inversions(left) + inversions(right);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < left.length && j < right.length) {
    if (right[j] < left[i]) {
      count += left.length - i;
      values[k++] = right[j++];
    } else values[k++] = left[i++];
  }
  while (i < left.length) values[k++] = left[i++];
  while (j < right.length) values[k++] = right[j++];
  return count;
}
