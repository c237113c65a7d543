import { describe, expect, it } from "vitest";
import { nodesFromFolded } from "./fixture.test-helpers";
import { firstVisible, layoutFlame, nodeAt, panViewport, viewportFor, zoomViewport } from "./layout";
import { buildFlameTree, childrenOf, pathTo } from "./tree";

const FOLDED = `main;a;c 4
main;a 2
main;b;c 2
main;b 1
main 1`;

describe("flame tree and left-heavy layout", () => {
  it("hangs the roots under a synthetic root and orders children heaviest first", () => {
    const tree = buildFlameTree(nodesFromFolded(FOLDED).reverse());
    expect(tree.total[0]).toBe(10);
    const main = tree.indexById.get("main")!;
    expect(childrenOf(tree, 0)).toEqual([main]);
    expect(childrenOf(tree, main).map((i) => tree.names[i])).toEqual(["a", "b"]);
    expect(tree.maxDepth).toBe(3);
    expect(pathTo(tree, tree.indexById.get("main;b;c")!).map((i) => tree.names[i])).toEqual(["all", "main", "b", "c"]);
  });

  it("packs children from the parent's start with widths proportional to totals", () => {
    const tree = buildFlameTree(nodesFromFolded(FOLDED));
    const layout = layoutFlame(tree);
    const at = (id: string) => tree.indexById.get(id)!;
    expect(layout.w[0]).toBe(1);
    expect([layout.x[at("main;a")], layout.w[at("main;a")]]).toEqual([0, 0.6]);
    expect(layout.x[at("main;b")]).toBeCloseTo(0.6);
    expect(layout.x[at("main;b;c")]).toBeCloseTo(0.6);
    expect(layout.w[at("main;b;c")]).toBeCloseTo(0.2);
    // Row 3 holds both c nodes, sorted by x.
    expect(Array.from(layout.byDepth[3]).map((i) => tree.ids[i])).toEqual(["main;a;c", "main;b;c"]);
    expect(nodeAt(layout, 3, 0.65)).toBe(at("main;b;c"));
    expect(nodeAt(layout, 3, 0.85)).toBe(-1); // b's self time: no child there
    expect(firstVisible(layout, layout.byDepth[3], 0.5)).toBe(1);
  });

  it("zooms to a node and keeps zoom and pan inside the profile", () => {
    const tree = buildFlameTree(nodesFromFolded(FOLDED));
    const layout = layoutFlame(tree);
    const v = viewportFor(layout, tree.indexById.get("main;b")!);
    expect(v.x0).toBeCloseTo(0.6);
    expect(v.x1).toBeCloseTo(0.9);
    const z = zoomViewport({ x0: 0, x1: 1 }, 0.5, 1);
    expect(z).toEqual({ x0: 0.5, x1: 1 });
    expect(panViewport(z, 1)).toEqual({ x0: 0.5, x1: 1 });
    expect(panViewport(z, -0.5)).toEqual({ x0: 0.25, x1: 0.75 });
    expect(zoomViewport(z, 4, 0.7)).toEqual({ x0: 0, x1: 1 });
  });
});
