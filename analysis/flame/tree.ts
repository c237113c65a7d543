/**
 * A flame tree in columnar form (typed arrays, one index per node), built from the server's
 * pruned `flame_tree` nodes. Index 0 is a synthetic root ("all") whose total is the sum of the
 * real roots, so zoom, search and layout never special-case a forest.
 */

/** One node as the `evidence.flame_tree` service returns it (the fields this module reads). */
export interface FlameInputNode {
  node_id: string;
  parent_id: string | null;
  frame_key: string;
  name: string;
  file: string | null;
  line: number | null;
  module: string | null;
  kind: string;
  self: number;
  total: number;
}

export interface FlameTree {
  count: number;
  ids: string[];
  frameKeys: string[];
  names: string[];
  files: (string | null)[];
  lines: (number | null)[];
  modules: (string | null)[];
  kinds: string[];
  parent: Int32Array;
  depth: Int32Array;
  self: Float64Array;
  total: Float64Array;
  /** Children of node i are childIndex[childStart[i] .. childStart[i + 1]), heaviest first. */
  childStart: Int32Array;
  childIndex: Int32Array;
  maxDepth: number;
  indexById: Map<string, number>;
}

export const ROOT_ID = "(all)";

/** Builds the columnar tree; nodes whose parent is missing hang under the synthetic root. */
export function buildFlameTree(nodes: readonly FlameInputNode[], rootName = "all"): FlameTree {
  const count = nodes.length + 1;
  const indexById = new Map<string, number>();
  indexById.set(ROOT_ID, 0);
  nodes.forEach((n, i) => indexById.set(n.node_id, i + 1));
  const tree: FlameTree = {
    count,
    ids: new Array(count),
    frameKeys: new Array(count),
    names: new Array(count),
    files: new Array(count),
    lines: new Array(count),
    modules: new Array(count),
    kinds: new Array(count),
    parent: new Int32Array(count),
    depth: new Int32Array(count),
    self: new Float64Array(count),
    total: new Float64Array(count),
    childStart: new Int32Array(count + 1),
    childIndex: new Int32Array(Math.max(0, count - 1)),
    maxDepth: 0,
    indexById,
  };
  tree.ids[0] = ROOT_ID;
  tree.frameKeys[0] = ROOT_ID;
  tree.names[0] = rootName;
  tree.files[0] = null;
  tree.lines[0] = null;
  tree.modules[0] = null;
  tree.kinds[0] = "program";
  tree.parent[0] = -1;
  const childCount = new Int32Array(count);
  let rootTotal = 0;
  for (let i = 1; i < count; i++) {
    const n = nodes[i - 1];
    tree.ids[i] = n.node_id;
    tree.frameKeys[i] = n.frame_key;
    tree.names[i] = n.name;
    tree.files[i] = n.file;
    tree.lines[i] = n.line;
    tree.modules[i] = n.module;
    tree.kinds[i] = n.kind;
    tree.self[i] = n.self;
    tree.total[i] = n.total;
    const p = n.parent_id === null ? 0 : (indexById.get(n.parent_id) ?? 0);
    tree.parent[i] = p === i ? 0 : p;
    if (tree.parent[i] === 0) rootTotal += n.total;
    childCount[tree.parent[i]]++;
  }
  tree.total[0] = rootTotal;
  for (let i = 0; i < count; i++) tree.childStart[i + 1] = tree.childStart[i] + childCount[i];
  const fill = tree.childStart.slice(0, count);
  for (let i = 1; i < count; i++) tree.childIndex[fill[tree.parent[i]]++] = i;
  // Left-heavy: heaviest child first, ties by name so the order is stable across loads.
  for (let i = 0; i < count; i++) {
    const a = tree.childStart[i];
    const b = tree.childStart[i + 1];
    if (b - a > 1) {
      const kids = Array.from(tree.childIndex.subarray(a, b)).sort((x, y) => tree.total[y] - tree.total[x] || (tree.names[x] < tree.names[y] ? -1 : tree.names[x] > tree.names[y] ? 1 : x - y));
      tree.childIndex.set(kids, a);
    }
  }
  // Depths from the structure (parents are not guaranteed to precede children in the input).
  const stack = [0];
  tree.depth[0] = 0;
  while (stack.length) {
    const i = stack.pop()!;
    for (let c = tree.childStart[i]; c < tree.childStart[i + 1]; c++) {
      const k = tree.childIndex[c];
      tree.depth[k] = tree.depth[i] + 1;
      if (tree.depth[k] > tree.maxDepth) tree.maxDepth = tree.depth[k];
      stack.push(k);
    }
  }
  return tree;
}

/** The node and its ancestors, root first (the breadcrumb). */
export function pathTo(tree: FlameTree, index: number): number[] {
  const out: number[] = [];
  for (let i = index; i >= 0; i = tree.parent[i]) out.push(i);
  return out.reverse();
}

/** Visits node indices depth-first, parents before children, heaviest child first. */
export function forEachPreorder(tree: FlameTree, visit: (index: number) => void, from = 0): void {
  const stack = [from];
  while (stack.length) {
    const i = stack.pop()!;
    visit(i);
    for (let c = tree.childStart[i + 1] - 1; c >= tree.childStart[i]; c--) stack.push(tree.childIndex[c]);
  }
}

/** The children of a node, heaviest first. */
export function childrenOf(tree: FlameTree, index: number): number[] {
  return Array.from(tree.childIndex.subarray(tree.childStart[index], tree.childStart[index + 1]));
}
