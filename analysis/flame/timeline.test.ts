import { describe, expect, it } from "vitest";
import { timelineRemainder } from "../queries/flame-timeline";
import { nodeAt, viewportFor } from "./layout";
import { searchFlame } from "./search";
import { buildTimeline, type TimelineInputCell } from "./timeline";
import { pathTo } from "./tree";

const cell = (cell_id: string, parent_id: string | null, name: string, start_ns: number, end_ns: number, total: number, self: number): TimelineInputCell => ({
  cell_id,
  parent_id,
  frame_key: `k_${name}`,
  name,
  file: `${name}.js`,
  line: 1,
  module: null,
  kind: "js",
  start_ns,
  end_ns,
  total,
  self,
});

// main [100,200): a [100,140) then a again [160,200) with b under the first a only.
const CELLS = [
  cell("0@100", null, "main", 100, 200, 10, 2),
  cell("1@160", "0@100", "a", 160, 200, 4, 4),
  cell("1@100", "0@100", "a", 100, 140, 4, 1),
  cell("2@100", "1@100", "b", 100, 130, 3, 3),
];

describe("time-order flame graph layout", () => {
  it("places cells at their time as fractions of the whole span, rows sorted by start", () => {
    const { tree, layout, start, end } = buildTimeline(CELLS);
    const at = (id: string) => tree.indexById.get(id)!;
    expect([start[0], end[0]]).toEqual([100, 200]);
    expect([layout.x[at("1@160")], layout.w[at("1@160")]]).toEqual([0.6, 0.4]);
    expect([layout.x[at("2@100")], layout.w[at("2@100")]]).toEqual([0, 0.3]);
    // The later a comes after the earlier one although it was listed first.
    expect(Array.from(layout.byDepth[2]).map((i) => tree.ids[i])).toEqual(["1@100", "1@160"]);
    // The gap between the two a cells (main's self time) holds no cell.
    expect(nodeAt(layout, 2, 0.5)).toBe(-1);
    expect(nodeAt(layout, 3, 0.1)).toBe(at("2@100"));
    expect(pathTo(tree, at("2@100")).map((i) => tree.names[i])).toEqual(["all", "main", "a", "b"]);
    expect(viewportFor(layout, at("1@160"))).toEqual({ x0: 0.6, x1: 1 });
  });

  it("search counts a frame's value once across its cells", () => {
    const { tree } = buildTimeline(CELLS);
    const found = searchFlame(tree, "a")!;
    // "main" contains an a as well: matched at the top, so the share is everything.
    expect(found.matchedTotal).toBe(10);
    expect(searchFlame(tree, "b")!.matchedTotal).toBe(3);
  });

  it("reports the value that pruned cells leave undrawn", () => {
    // main: 10 = 2 self + 4 + 4 → nothing; a@100: 4 = 1 self + 3 (b) → nothing; drop b: 3 missing.
    expect(timelineRemainder(CELLS, 10)).toBe(0);
    expect(timelineRemainder(CELLS.filter((c) => c.name !== "b"), 10)).toBe(3);
    // Top-level cells left out count too: the window held 15, the drawn top level 10.
    expect(timelineRemainder(CELLS, 15)).toBe(5);
  });

  it("an empty timeline still has a root of width 1", () => {
    const { tree, layout } = buildTimeline([]);
    expect(tree.count).toBe(1);
    expect(layout.w[0]).toBe(1);
  });
});
