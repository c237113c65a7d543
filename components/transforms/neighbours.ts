import type { FlameInputNode } from "../../analysis/flame/tree";
import type { NeighbourRow } from "../sandwich/SandwichCell";

/**
 * A function's direct callers and callees read off its sandwich trees (callersTree, calleesTree of
 * a transformed flame tree): the first level under each root, calls at a root as "(root)". Under
 * transforms the page has no server list to show (evidence.callers reads the untransformed stacks).
 */
export function neighboursOfTrees(callerNodes: readonly FlameInputNode[], calleeNodes: readonly FlameInputNode[]): { callers: NeighbourRow[]; callees: NeighbourRow[] } {
  const firstLevel = (nodes: readonly FlameInputNode[]) => {
    const roots = new Set(nodes.filter((n) => n.parent_id === null).map((n) => n.node_id));
    const rows = new Map<string, NeighbourRow>();
    for (const n of nodes) {
      if (n.parent_id === null || !roots.has(n.parent_id)) continue;
      const row = rows.get(n.frame_key) ?? { frame_key: n.frame_key, name: n.name, file: n.file, line: n.line, value: 0 };
      row.value += n.total;
      rows.set(n.frame_key, row);
    }
    // A callee reached only through a call of the function again holds nothing (as the server's lists leave out).
    return { rows: [...rows.values()].filter((r) => r.value > 0).sort((a, b) => b.value - a.value || a.frame_key.localeCompare(b.frame_key)), roots: nodes.filter((n) => n.parent_id === null) };
  };
  const callers = firstLevel(callerNodes);
  // The callers tree keeps calls made at a root as the root's self value.
  const atRoot = callers.roots.reduce((s, n) => s + n.self, 0);
  if (atRoot > 0) callers.rows.push({ frame_key: "(root)", name: "(root)", file: null, line: null, value: atRoot });
  return { callers: callers.rows, callees: firstLevel(calleeNodes).rows };
}
