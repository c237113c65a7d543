import { describe, expect, it } from "vitest";
import { nodesFromFolded } from "./fixture.test-helpers";
import { searchFlame } from "./search";
import { buildFlameTree } from "./tree";

describe("flame search", () => {
  const tree = buildFlameTree(
    nodesFromFolded(`main;a;c 4
main;b;c;c 2
main;b 1
main;lib_x 3`),
  );

  it("marks every matching frame and counts nested matches once in the share", () => {
    const result = searchFlame(tree, "c")!;
    const names = tree.ids.filter((_, i) => result.matched[i]);
    expect(names.sort()).toEqual(["main;a;c", "main;b;c", "main;b;c;c"]);
    expect(result.count).toBe(3);
    expect(result.matchedTotal).toBe(6);
    expect(result.share).toBeCloseTo(0.6);
  });

  it("matches module names, regular expressions, and nothing for an empty query", () => {
    expect(searchFlame(tree, "LIB")!.count).toBe(1);
    expect(searchFlame(tree, "/^[ab]$/")!.count).toBe(2);
    expect(searchFlame(tree, "   ")).toBeNull();
    expect(searchFlame(tree, "zzz")!.share).toBe(0);
  });
});
