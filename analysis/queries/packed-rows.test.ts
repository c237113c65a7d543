import { describe, expect, it } from "vitest";
import { packTimelineCells, unpackTimelineCells, type TimelineCell } from "./flame-timeline";
import { FLAME_NODE_KEYS, type FlameNode } from "./flame-tree";
import { packAnswer, packTreeRows, unpackAnswer, unpackTreeRows } from "./packed-rows";

const frame = (name: string) => ({ frame_key: `k-${name}`, name, file: `${name}.js`, line: 1, module: null, kind: "js" });
const cell = (cell_id: string, parent_id: string | null, name: string, depth: number, start_ns: number, end_ns: number): TimelineCell => ({
  cell_id,
  parent_id,
  ...frame(name),
  depth,
  start_ns,
  end_ns,
  total: end_ns - start_ns,
  self: 0,
});
/** Through JSON, as the page gets it. */
const viaJson = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe("packTreeRows: rows of a tree of frames for a transfer", () => {
  it("keeps each frame once and rebuilds time order's cell names and parents by their rule", () => {
    const rows = [cell("0@0", null, "main", 0, 0, 70.5), cell("1@0", "0@0", "a", 1, 0, 30), cell("1@0.2", "0@0", "a", 1, 0, 0), cell("1@40", "0@0", "a", 1, 40, 50)];
    const packed = packTimelineCells(rows);
    expect(packed.frames.map((f) => f.name)).toEqual(["main", "a"]);
    expect(packed.parent).toEqual([-1, 0, 0, 0]);
    expect(packed.ids).toBeUndefined();
    expect(unpackTimelineCells(viaJson(packed))).toStrictEqual(rows);
  });

  it("loses nothing from cells named otherwise, a parent that is not among them, or one frame_key with other details", () => {
    const renamed = { ...cell("x", null, "main", 0, 0, 10), name: "main (renamed)" };
    const rows = [cell("0@0", null, "main", 0, 0, 10), renamed, cell("1@5", "gone", "a", 1, 5, 6), cell("1@7", "x", "a", 1, 7, 8)];
    const packed = packTimelineCells(rows);
    expect(packed.frames).toHaveLength(3);
    expect(unpackTimelineCells(viaJson(packed))).toStrictEqual(rows);
  });

  it("keeps flame tree nodes' own ids, their key order and a pruned remainder's", () => {
    const node = (node_id: string, parent_id: string | null, name: string, total: number): FlameNode => ({ ...frame(name), node_id, parent_id, depth: parent_id === null ? 0 : 1, self: 1, total });
    const nodes = [node("17", null, "main", 9), node("42", "17", "a", 5), node("17:pruned", "17", "(pruned)", 3)];
    expect(unpackTreeRows(viaJson(packTreeRows(nodes, FLAME_NODE_KEYS)), FLAME_NODE_KEYS)).toStrictEqual(nodes);
    const answer = { nodes, unit: "ns", pruned_total: 3 };
    expect(unpackAnswer<typeof answer, "nodes">(viaJson(packAnswer(answer, "nodes", FLAME_NODE_KEYS)), "nodes", FLAME_NODE_KEYS)).toStrictEqual(answer);
    expect(packTreeRows([], FLAME_NODE_KEYS)).toMatchObject({ frames: [], parent: [] });
  });

  it("packs the same rows once (a kept answer asked again), other rows each their own way", () => {
    const node = (node_id: string, parent_id: string | null, name: string): FlameNode => ({ ...frame(name), node_id, parent_id, depth: parent_id === null ? 0 : 1, self: 1, total: 2 });
    const nodes = [node("1", null, "main"), node("2", "1", "a")];
    const first = packAnswer({ nodes, unit: "ns" }, "nodes", FLAME_NODE_KEYS);
    const again = packAnswer({ nodes, unit: "ms" }, "nodes", FLAME_NODE_KEYS);
    expect(again.packed_nodes).toBe(first.packed_nodes);
    // The answer's other fields are its own.
    expect(again.unit).toBe("ms");
    const other = [node("1", null, "main"), node("3", "1", "b")];
    const otherPacked = packAnswer({ nodes: other, unit: "ns" }, "nodes", FLAME_NODE_KEYS);
    expect(otherPacked.packed_nodes).not.toBe(first.packed_nodes);
    expect(unpackAnswer<{ nodes: FlameNode[]; unit: string }, "nodes">(viaJson(otherPacked), "nodes", FLAME_NODE_KEYS).nodes).toStrictEqual(other);
  });
});
