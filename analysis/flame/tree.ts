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

/** The numeric part of a flame tree: what layout needs, cheap to move between threads. */
export type TreeStructure = Pick<FlameTree, "count" | "parent" | "depth" | "self" | "total" | "childStart" | "childIndex" | "maxDepth">;

/** Index per node id (0 is the synthetic root), and each node's parent index (missing parents → root). */
export function indexNodes(nodes: readonly { node_id: string; parent_id: string | null }[]): { indexById: Map<string, number>; parent: Int32Array } {
  const indexById = new Map<string, number>();
  indexById.set(ROOT_ID, 0);
  nodes.forEach((n, i) => indexById.set(n.node_id, i + 1));
  const parent = new Int32Array(nodes.length + 1);
  parent[0] = -1;
  for (let i = 1; i <= nodes.length; i++) {
    const id = nodes[i - 1].parent_id;
    const p = id === null ? 0 : (indexById.get(id) ?? 0);
    parent[i] = p === i ? 0 : p;
  }
  return { indexById, parent };
}

/**
 * Children lists (heaviest first, ties by name so the order is stable across loads), depths and
 * the root's total from parent indices and values. Index 0 is the synthetic root.
 */
export function treeStructure(parent: Int32Array, self: Float64Array, total: Float64Array, names: readonly string[]): TreeStructure {
  const count = parent.length;
  const childCount = new Int32Array(count);
  let rootTotal = 0;
  for (let i = 1; i < count; i++) {
    if (parent[i] === 0) rootTotal += total[i];
    childCount[parent[i]]++;
  }
  total[0] = rootTotal;
  self[0] = 0;
  const childStart = new Int32Array(count + 1);
  const childIndex = new Int32Array(Math.max(0, count - 1));
  for (let i = 0; i < count; i++) childStart[i + 1] = childStart[i] + childCount[i];
  const fill = childStart.slice(0, count);
  for (let i = 1; i < count; i++) childIndex[fill[parent[i]]++] = i;
  for (let i = 0; i < count; i++) {
    const a = childStart[i];
    const b = childStart[i + 1];
    if (b - a > 1) {
      const kids = Array.from(childIndex.subarray(a, b)).sort((x, y) => total[y] - total[x] || (names[x] < names[y] ? -1 : names[x] > names[y] ? 1 : x - y));
      childIndex.set(kids, a);
    }
  }
  // Depths from the structure (parents are not guaranteed to precede children in the input).
  const depth = new Int32Array(count);
  let maxDepth = 0;
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    for (let c = childStart[i]; c < childStart[i + 1]; c++) {
      const k = childIndex[c];
      depth[k] = depth[i] + 1;
      if (depth[k] > maxDepth) maxDepth = depth[k];
      stack.push(k);
    }
  }
  return { count, parent, depth, self, total, childStart, childIndex, maxDepth };
}

/** Values per node index (0 = root, filled by treeStructure). */
export function valuesOf(nodes: readonly { self: number; total: number }[]): { self: Float64Array; total: Float64Array } {
  const self = new Float64Array(nodes.length + 1);
  const total = new Float64Array(nodes.length + 1);
  nodes.forEach((n, i) => {
    self[i + 1] = n.self;
    total[i + 1] = n.total;
  });
  return { self, total };
}

/** The string columns of the nodes (index 0 is the root), for a structure computed elsewhere. */
export function assembleTree(nodes: readonly Omit<FlameInputNode, "node_id" | "parent_id" | "self" | "total">[], ids: readonly string[], indexById: Map<string, number>, structure: TreeStructure, rootName = "all"): FlameTree {
  const col = <T,>(root: T, pick: (n: (typeof nodes)[number]) => T): T[] => {
    const out = new Array<T>(nodes.length + 1);
    out[0] = root;
    for (let i = 0; i < nodes.length; i++) out[i + 1] = pick(nodes[i]);
    return out;
  };
  return {
    ...structure,
    ids: [ROOT_ID, ...ids],
    frameKeys: col(ROOT_ID, (n) => n.frame_key),
    names: col(rootName, (n) => n.name),
    files: col<string | null>(null, (n) => n.file),
    lines: col<number | null>(null, (n) => n.line),
    modules: col<string | null>(null, (n) => n.module),
    kinds: col("program", (n) => n.kind),
    indexById,
  };
}

/** Builds the columnar tree; nodes whose parent is missing hang under the synthetic root. */
export function buildFlameTree(nodes: readonly FlameInputNode[], rootName = "all"): FlameTree {
  const { indexById, parent } = indexNodes(nodes);
  const { self, total } = valuesOf(nodes);
  const names = [rootName, ...nodes.map((n) => n.name)];
  return assembleTree(nodes, nodes.map((n) => n.node_id), indexById, treeStructure(parent, self, total, names), rootName);
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
