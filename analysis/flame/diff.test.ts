import { describe, expect, it } from "vitest";
import { DIFF_NEUTRAL, diffIndex } from "./colour";
import { diffColourOf, diffColourScale, diffFlameTrees } from "./diff";
import { nodesFromFolded } from "./fixture.test-helpers";

const base = nodesFromFolded(`main;countPrimes 90
main;format 10`);
const candidate = nodesFromFolded(`main;hashStrings 170
main;format 20
main;countPrimes 10`);

describe("differential flame trees", () => {
  it("merges stacks by call path and measures the change of each share", () => {
    const diff = diffFlameTrees(base.map((n) => ({ ...n, node_id: `b${n.node_id}` })).map((n) => ({ ...n, parent_id: n.parent_id && `b${n.parent_id}` })), candidate);
    const byKey = new Map(diff.nodes.map((n) => [n.node_id, n]));
    const primes = byKey.get("k_main/k_countPrimes")!;
    expect([primes.base_total, primes.candidate_total, primes.total]).toEqual([90, 10, 10]);
    expect(primes.share_change).toBeCloseTo(0.05 - 0.9);
    expect(byKey.get("k_main/k_hashStrings")!.share_change).toBeCloseTo(0.85);
    expect(byKey.get("k_main/k_format")!.share_change).toBeCloseTo(0);
    expect(byKey.get("k_main")!.share_change).toBeCloseTo(0);
    const scale = diffColourScale(diff);
    expect(diffColourOf(primes, scale)).toBeLessThan(DIFF_NEUTRAL);
    expect(diffColourOf(byKey.get("k_main/k_hashStrings")!, scale)).toBeGreaterThan(DIFF_NEUTRAL);
    expect(diffColourOf(byKey.get("k_main")!, scale)).toBe(DIFF_NEUTRAL);
  });

  it("draws from the base so that vanished stacks keep their width", () => {
    const gone = diffFlameTrees(base, nodesFromFolded("main;hashStrings 5"), "base");
    expect(gone.nodes.find((n) => n.name === "countPrimes")).toMatchObject({ total: 90, candidate_total: 0 });
    expect(gone.nodes.find((n) => n.name === "hashStrings")).toBeUndefined();
    const fromCandidate = diffFlameTrees(base, nodesFromFolded("main;hashStrings 5"));
    expect(fromCandidate.nodes.find((n) => n.name === "countPrimes")).toBeUndefined();
  });

  it("scales colour strength by the size of the change", () => {
    expect(diffIndex(0.5, 0.5)).toBe(DIFF_NEUTRAL + 6);
    expect(diffIndex(-0.5, 0.5)).toBe(DIFF_NEUTRAL - 6);
    expect(diffIndex(0.001, 0.5)).toBe(DIFF_NEUTRAL + 1);
    expect(diffIndex(0, 0.5)).toBe(DIFF_NEUTRAL);
  });
});
