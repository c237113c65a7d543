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

  it("merges every call of a function into one callee tree", () => {
    const callees = calleesTree(tree, "k_c");
    const byId = new Map(callees.map((n) => [n.node_id, n]));
    expect(byId.get("k_c")!.total).toBe(10);
    expect(byId.get("k_c")!.self).toBe(3);
    expect(byId.get("k_c/k_d")!.total).toBe(4);
    expect(byId.get("k_c/k_c")!.total).toBe(3);
  });
});
