import { describe, expect, it } from "vitest";
import { nodesFromFolded } from "./fixture.test-helpers";
import { callersTree, calleesTree } from "./sandwich";
import { buildFlameTree } from "./tree";

const tree = buildFlameTree(
  nodesFromFolded(`main;a;c;d 4
main;a;c 1
main;b;c 2
c;c 3`),
);

describe("sandwich trees", () => {
  it("inverts the callers of a function, weighted by its inclusive value on each path", () => {
    const callers = callersTree(tree, "k_c");
    const byId = new Map(callers.map((n) => [n.node_id, n]));
    expect(byId.get("k_c")!.total).toBe(10);
    expect(byId.get("k_c/k_a")!.total).toBe(5);
    expect(byId.get("k_c/k_a/k_main")!.total).toBe(5);
    expect(byId.get("k_c/k_b")!.total).toBe(2);
    // The root-level call of c (recursion counted once) is c's own self in the inverted tree.
    expect(byId.get("k_c")!.self).toBe(3);
    expect(byId.get("k_c/k_a/k_main")!.self).toBe(5);
  });

  it("merges every call of a function into one callee tree, a recursive call starting again at the root", () => {
    const callees = calleesTree(tree, "k_c");
    const byId = new Map(callees.map((n) => [n.node_id, n]));
    expect(byId.get("k_c")!.total).toBe(10);
    // Self: main;a;c 1 + main;b;c 2 + the inner c of c;c 3 — every sample that ends in c.
    expect(byId.get("k_c")!.self).toBe(6);
    expect(byId.get("k_c/k_d")!.total).toBe(4);
    // c;c is collapsed to c: c is never its own callee.
    expect(byId.has("k_c/k_c")).toBe(false);
    expect(callees).toHaveLength(2);
  });

  it("collapses indirect recursion: the frames between the outermost and the innermost call are not callees", () => {
    const indirect = buildFlameTree(nodesFromFolded(`main;f;g;f;h 5
main;f;g 2
main;f;g;f 1`));
    const byId = new Map(calleesTree(indirect, "k_f").map((n) => [n.node_id, n]));
    // f;g;f;h → f;h and f;g;f → f: g keeps only the samples in which no f is below it.
    expect([...byId.keys()].sort()).toEqual(["k_f", "k_f/k_g", "k_f/k_h"]);
    expect(byId.get("k_f")).toMatchObject({ total: 8, self: 1 });
    expect(byId.get("k_f/k_g")).toMatchObject({ total: 2, self: 2 });
    expect(byId.get("k_f/k_h")).toMatchObject({ total: 5, self: 5 });
    const callers = new Map(callersTree(indirect, "k_f").map((n) => [n.node_id, n]));
    // Callers of the outermost call only: main, never g.
    expect([...callers.keys()].sort()).toEqual(["k_f", "k_f/k_main"]);
    expect(callers.get("k_f/k_main")!.total).toBe(8);
  });
});
