import type { FlameInputNode, FlameTree } from "./tree";

/**
 * Sandwich view trees for one function (by frame_key), derived from a flame tree:
 * - callers: inverted — the function at the root, its callers below it, their callers next…,
 *   each path weighted by the function's inclusive value along it;
 * - callees: every call of the function merged into one tree rooted at the function.
 * Recursive calls count once: only outermost occurrences (no ancestor with the same key) are used.
 */
export function callersTree(tree: FlameTree, frameKey: string): FlameInputNode[] {
  const trie = new Trie();
  for (const i of outermost(tree, frameKey)) {
    const weight = tree.total[i];
    let parentId = trie.add(null, tree, i, weight, 0);
    let at = tree.parent[i];
    while (at > 0) {
      const last = tree.parent[at] <= 0;
      parentId = trie.add(parentId, tree, at, weight, last ? weight : 0);
      at = tree.parent[at];
    }
    if (tree.parent[i] <= 0) trie.addSelf(parentId, weight);
  }
  return trie.nodes();
}

export function calleesTree(tree: FlameTree, frameKey: string): FlameInputNode[] {
  const trie = new Trie();
  for (const i of outermost(tree, frameKey)) {
    const stack: [number, string | null][] = [[i, null]];
    while (stack.length) {
      const [k, parentId] = stack.pop()!;
      const id = trie.add(parentId, tree, k, tree.total[k], tree.self[k]);
      for (let c = tree.childStart[k]; c < tree.childStart[k + 1]; c++) stack.push([tree.childIndex[c], id]);
    }
  }
  return trie.nodes();
}

/** Nodes of `frameKey` with no ancestor of the same key. */
export function outermost(tree: FlameTree, frameKey: string): number[] {
  const out: number[] = [];
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    if (i > 0 && tree.frameKeys[i] === frameKey) {
      out.push(i);
      continue;
    }
    for (let c = tree.childStart[i]; c < tree.childStart[i + 1]; c++) stack.push(tree.childIndex[c]);
  }
  return out;
}

class Trie {
  private byId = new Map<string, FlameInputNode>();

  add(parentId: string | null, tree: FlameTree, i: number, total: number, self: number): string {
    const id = parentId === null ? tree.frameKeys[i] : `${parentId}/${tree.frameKeys[i]}`;
    const node = this.byId.get(id);
    if (node) {
      node.total += total;
      node.self += self;
    } else {
      this.byId.set(id, { node_id: id, parent_id: parentId, frame_key: tree.frameKeys[i], name: tree.names[i], file: tree.files[i], line: tree.lines[i], module: tree.modules[i], kind: tree.kinds[i], self, total });
    }
    return id;
  }

  addSelf(id: string, self: number): void {
    this.byId.get(id)!.self += self;
  }

  nodes(): FlameInputNode[] {
    return [...this.byId.values()];
  }
}
