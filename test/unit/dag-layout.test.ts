import { describe, expect, it } from "vitest";
import { layeredDag } from "../../analysis/critical-path/fixture.test-helpers";
import { buildDag, dagCriticalPath } from "../../analysis/critical-path/dag";
import { layoutDag, longestPathLayers, NODE_H, GAP_Y, type DagLayout, type DagLayoutInput } from "../../components/dag/dag-layout";

function input(nodeCount: number, edges: [number, number][], path: number[], weight?: number[]): DagLayoutInput {
  return { nodeCount, from: edges.map((e) => e[0]), to: edges.map((e) => e[1]), path, weight: weight ?? new Array(nodeCount).fill(1) };
}

/** Node indices of each row, left to right. */
function rows(layout: DagLayout): (number | string)[][] {
  const out: (number | string)[][] = Array.from({ length: layout.rows }, () => []);
  const byX = [...layout.elements].sort((a, b) => a.x - b.x);
  for (const e of byX) out[e.row].push(e.kind === "node" ? e.node : e.id);
  return out;
}

/** Crossings between edges joining adjacent rows. */
function crossings(layout: DagLayout): number {
  const edges = layout.edges.map((e) => [layout.elements[e.from], layout.elements[e.to]]).filter(([a, b]) => b.row === a.row + 1);
  let count = 0;
  for (let i = 0; i < edges.length; i++)
    for (let j = i + 1; j < edges.length; j++) {
      const [a, b] = edges[i];
      const [c, d] = edges[j];
      if (a.row === c.row && (a.x - c.x) * (b.x - d.x) < 0) count++;
    }
  return count;
}

describe("DAG view layout", () => {
  it("puts each node one row below its deepest dependency", () => {
    // 0 → 1 → 3, 0 → 2, 2 → 3, 0 → 3: 3 is two rows down (through 1 or 2), not one.
    const layers = longestPathLayers(input(4, [[0, 1], [1, 3], [0, 2], [2, 3], [0, 3]], []));
    expect(Array.from(layers)).toEqual([0, 1, 1, 2]);
    const layout = layoutDag(input(4, [[0, 1], [1, 3], [0, 2], [2, 3], [0, 3]], [0, 1, 3]));
    expect(layout.elements.map((e) => e.y)).toEqual([0, 1, 1, 2].map((r) => r * (NODE_H + GAP_Y)));
  });

  it("orders a row by its dependencies' positions, untangling crossed edges", () => {
    // Row 1 is 2, 3 in index order but 3 hangs under 0 and 2 under 1.
    const layout = layoutDag(input(4, [[0, 3], [1, 2]], []));
    expect(rows(layout)).toEqual([[0, 1], [3, 2]]);
    expect(crossings(layout)).toBe(0);
  });

  it("has fewer crossings than index order on a generated workflow", () => {
    const dag = layeredDag(400, 20, 7);
    const graph = { nodeCount: 400, from: dag.from, to: dag.to, path: [], weight: dag.durations };
    const sorted = layoutDag(graph);
    // Index order as the baseline: each row's elements at their index position.
    const baseline: DagLayout = { ...sorted, elements: sorted.elements.map((e) => ({ ...e, x: e.kind === "node" ? e.node : 0 })) };
    expect(crossings(sorted)).toBeLessThan(crossings(baseline) * 0.8);
  });

  it("draws the critical path straight down, and a node under the dependencies it waits for", () => {
    // 0 and 1 on the first row; 2 waits for 1 only; the path 1 → 2 → 3 with 3 also after 0.
    const layout = layoutDag(input(4, [[1, 2], [2, 3], [0, 3]], [1, 2, 3]));
    const x = (id: string) => layout.elements.find((e) => e.id === id)!.x;
    expect(x("n:2")).toBe(x("n:1"));
    expect(x("n:3")).toBe(x("n:1"));
  });

  it("marks the edges between consecutive steps of the critical path", () => {
    const layout = layoutDag(input(3, [[0, 1], [1, 2], [0, 2]], [0, 1, 2]));
    expect(layout.edges.filter((e) => e.onPath).map((e) => [layout.elements[e.from].id, layout.elements[e.to].id])).toEqual([
      ["n:0", "n:1"],
      ["n:1", "n:2"],
    ]);
  });

  it("flags the edges another route already implies (outside the transitive reduction)", () => {
    // 0 → 1 → 2 and 0 → 2: the direct edge is implied; 0 → 3 is not.
    const layout = layoutDag(input(4, [[0, 1], [1, 2], [0, 2], [0, 3]], [0, 1, 2]));
    const implied = layout.edges.filter((e) => e.implied).map((e) => [layout.elements[e.from].id, layout.elements[e.to].id]);
    expect(implied).toEqual([["n:0", "n:2"]]);
  });

  it("shows every node up to the budget, and beyond it folds what is off the path between its steps", () => {
    // A chain 0 → 1 → … → 9 (the path), with 30 reads hanging off node 2 and 20 off node 6.
    const edges: [number, number][] = [];
    for (let v = 0; v < 9; v++) edges.push([v, v + 1]);
    for (let k = 0; k < 30; k++) edges.push([2, 10 + k]);
    for (let k = 0; k < 20; k++) edges.push([6, 40 + k]);
    const graph = input(60, edges, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(layoutDag(graph, { budget: 60, pathBudget: 150, expanded: new Set() }).folded).toBe(0);
    const folded = layoutDag(graph, { budget: 50, pathBudget: 150, expanded: new Set() });
    expect(folded.folded).toBe(50);
    expect(folded.elements.filter((e) => e.kind === "fold").map((e) => [e.id, e.kind === "fold" ? e.members.length : 0])).toEqual([
      ["fold:4", 30],
      ["fold:8", 20],
    ]);
    // A fold sits in a row of its own, below the path node beside its first row (the reads off
    // node 2 are one row below it, beside node 3).
    const fold = folded.elements.find((e) => e.id === "fold:4")!;
    const anchor = folded.elements.find((e) => e.id === "n:3")!;
    expect(fold.row).toBe(anchor.row + 1);
    // Opened, the fold's nodes come back at their own rows.
    const opened = layoutDag(graph, { budget: 50, pathBudget: 150, expanded: new Set(["fold:4"]) });
    expect(opened.folded).toBe(20);
    expect(opened.elements.filter((e) => e.kind === "node").length).toBe(40);
  });

  it("keeps the heaviest steps of a path longer than its budget, folding the rest of the path with what lies beside it", () => {
    const dag = layeredDag(5000, 2, 3);
    const built = buildDag(dag);
    const cp = dagCriticalPath(built);
    const layout = layoutDag({ nodeCount: 5000, from: dag.from, to: dag.to, path: cp.path, weight: dag.durations }, { budget: 500, pathBudget: 150, expanded: new Set() });
    expect(cp.path.length).toBeGreaterThan(150);
    expect(layout.elements.length).toBeLessThanOrEqual(500);
    const shownPath = layout.elements.filter((e) => e.kind === "node" && cp.onPath[e.node]).length;
    expect(shownPath).toBeLessThanOrEqual(152);
    const foldedPath = layout.elements.reduce((s, e) => s + (e.kind === "fold" ? e.onPath : 0), 0);
    expect(shownPath + foldedPath).toBe(cp.path.length);
    // Every edge of the folded drawing goes down: folds sit between the path nodes that bound them.
    for (const e of layout.edges) expect(layout.elements[e.to].row).toBeGreaterThan(layout.elements[e.from].row);
  });
});
