import type { FlameInputNode, FlameTree } from "./tree";

/**
 * Sandwich view trees for one function (by frame_key), derived from a flame tree, each sample
 * counted once under recursion. As Firefox Profiler's "collapse recursion" does, a stack keeps
 * the function's outermost call and its innermost call's callees, and drops the frames between:
 * - callers: inverted — the function at the root, the callers of its outermost call below it,
 *   their callers next…, each path weighted by the function's inclusive value along it; the
 *   first level adds up to the function's total (with calls at a root as the root's self);
 * - callees: what its calls call, merged into one tree rooted at the function; a call of the
 *   function further down starts again at the root, so the root's self is the function's self
 *   and the first level adds up to its total minus self, never naming the function itself.
 * The server's `callers` and `callees` queries say the same of the first level.
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
    const rootId = trie.add(null, tree, i, 0, 0);
    const stack: [number, string][] = [[i, rootId]];
    while (stack.length) {
      const [k, parentId] = stack.pop()!;
      // The function again (recursion): what it calls hangs under the root, its self is the root's.
      const id = tree.frameKeys[k] === frameKey ? rootId : trie.add(parentId, tree, k, 0, 0);
      trie.addSelf(id, tree.self[k]);
      for (let c = tree.childStart[k]; c < tree.childStart[k + 1]; c++) stack.push([tree.childIndex[c], id]);
    }
  }
  return trie.nodes(true);
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

  /** The nodes; with `fromSelf`, each total is first made its self plus its children's totals. */
  nodes(fromSelf = false): FlameInputNode[] {
    const nodes = [...this.byId.values()];
    if (fromSelf) {
      // A node is added after its parent: children come later in insertion order.
      for (const n of nodes) n.total = n.self;
      for (let k = nodes.length - 1; k >= 0; k--) {
        const parentId = nodes[k].parent_id;
        if (parentId !== null) this.byId.get(parentId)!.total += nodes[k].total;
      }
    }
    return nodes;
  }
}
