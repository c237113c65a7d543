import { describe, expect, it } from "vitest";
import { buildDag, dagCriticalPath, whatIf, type DagInput } from "./dag";
import { CycleError, CriticalPathInputError } from "./errors";
import { layeredDag } from "./fixture.test-helpers";

const analyse = (input: DagInput) => dagCriticalPath(buildDag(input));
const perNode = (values: Float64Array | Uint8Array) => Array.from(values);

describe("dagCriticalPath", () => {
  // a(2) → b(3) → d(1), a → c(5) → d
  const diamond: DagInput = { durations: [2, 3, 5, 1], from: [0, 0, 1, 2], to: [1, 2, 3, 3] };

  it("finds the longer branch of a diamond, with the other branch's slack", () => {
    const result = analyse(diamond);
    expect(Array.from(result.path)).toEqual([0, 2, 3]);
    expect(result.lengthNs).toBe(8);
    expect(result.sequentialNs).toBe(11);
    expect(result.speedupBound).toBe(11 / 8);
    expect(perNode(result.earliestStart)).toEqual([0, 2, 2, 7]);
    expect(perNode(result.earliestFinish)).toEqual([2, 5, 7, 8]);
    expect(perNode(result.latestStart)).toEqual([0, 4, 2, 7]);
    expect(perNode(result.slack)).toEqual([0, 2, 0, 0]);
    expect(perNode(result.onPath)).toEqual([1, 0, 1, 1]);
  });

  it("puts every node of a chain on the path, with no speed-up", () => {
    const result = analyse({ durations: [1, 2, 3], from: [0, 1], to: [1, 2] });
    expect(Array.from(result.path)).toEqual([0, 1, 2]);
    expect(result.lengthNs).toBe(6);
    expect(result.speedupBound).toBe(1);
    expect(perNode(result.slack)).toEqual([0, 0, 0]);
  });

  it("goes through the slowest branch of a fan-out/fan-in, the lowest index among equals; the equal branch has zero slack but is not on the path", () => {
    // 0(1) fans out to 1(4) 2(7) 3(2) 4(7), which fan in to 5(3).
    const result = analyse({ durations: [1, 4, 7, 2, 7, 3], from: [0, 0, 0, 0, 1, 2, 3, 4], to: [1, 2, 3, 4, 5, 5, 5, 5] });
    expect(Array.from(result.path)).toEqual([0, 2, 5]);
    expect(result.lengthNs).toBe(11);
    expect(result.sequentialNs).toBe(24);
    expect(result.speedupBound).toBe(24 / 11);
    expect(perNode(result.earliestStart)).toEqual([0, 1, 1, 1, 1, 8]);
    expect(perNode(result.latestStart)).toEqual([0, 4, 1, 6, 1, 8]);
    expect(perNode(result.slack)).toEqual([0, 3, 0, 5, 0, 0]);
    expect(perNode(result.onPath)).toEqual([1, 0, 1, 0, 0, 1]);
  });

  it("ends the path at the lowest-index node among those finishing last", () => {
    const result = analyse({ durations: [5, 5], from: [], to: [] });
    expect(Array.from(result.path)).toEqual([0]);
    expect(result.lengthNs).toBe(5);
    expect(result.speedupBound).toBe(2);
    expect(perNode(result.slack)).toEqual([0, 0]);
  });

  it("keeps zero-duration nodes at either end of a chain on the path", () => {
    const result = analyse({ durations: [0, 4, 0], from: [0, 1], to: [1, 2] });
    expect(Array.from(result.path)).toEqual([0, 1, 2]);
    expect(result.lengthNs).toBe(4);
  });

  it("gives the same answer whatever order the edges come in, and with repeated edges", () => {
    const shuffled = analyse({ durations: [1, 4, 7, 2, 7, 3], from: [4, 0, 3, 0, 2, 0, 1, 0, 2], to: [5, 4, 5, 3, 5, 2, 5, 1, 5] });
    expect(Array.from(shuffled.path)).toEqual([0, 2, 5]);
    expect(perNode(shuffled.slack)).toEqual([0, 3, 0, 5, 0, 0]);
  });

  it("answers an empty DAG with an empty path and a bound of 1", () => {
    const result = analyse({ durations: [], from: [], to: [] });
    expect(Array.from(result.path)).toEqual([]);
    expect(result.lengthNs).toBe(0);
    expect(result.speedupBound).toBe(1);
  });

  it("agrees with a simple oracle on a generated 3,000-node DAG", () => {
    const input = layeredDag(3_000, 50, 42);
    const result = analyse(input);
    const oracle = oracleOf(input);
    expect(perNode(result.earliestStart)).toEqual(oracle.earliestStart);
    expect(perNode(result.latestStart)).toEqual(oracle.latestStart);
    expect(result.lengthNs).toBe(oracle.lengthNs);
    expect(Array.from(result.path)).toEqual(oracle.path);
  });

  it("completes a generated 1 M-node DAG with a consistent answer", () => {
    const input = layeredDag(1_000_000, 1_000, 7);
    const dag = buildDag(input);
    const result = dagCriticalPath(dag);
    const path = Array.from(result.path);
    for (let k = 1; k < path.length; k++) {
      expect(dag.successors.subarray(dag.successorStart[path[k - 1]], dag.successorStart[path[k - 1] + 1])).toContain(path[k]);
      expect(result.earliestStart[path[k]]).toBe(result.earliestFinish[path[k - 1]]);
    }
    expect(result.earliestStart[path[0]]).toBe(0);
    expect(result.earliestFinish[path[path.length - 1]]).toBe(result.lengthNs);
    expect(path.reduce((sum, v) => sum + input.durations[v], 0)).toBe(result.lengthNs);
    expect(result.earliestFinish.every((f) => f <= result.lengthNs)).toBe(true);
    expect(path.every((v) => result.slack[v] === 0)).toBe(true);
    expect(result.slack.every((s) => s >= 0)).toBe(true);
  });
});

describe("whatIf", () => {
  const diamond = buildDag({ durations: [2, 3, 5, 1], from: [0, 0, 1, 2], to: [1, 2, 3, 3] });

  it("moves the path to the other branch when a path node gets faster", () => {
    const result = whatIf(diamond, 2, 1);
    expect(Array.from(result.path)).toEqual([0, 1, 3]);
    expect(result.lengthNs).toBe(6);
    expect(result.sequentialNs).toBe(7);
    expect(result.speedupBound).toBe(7 / 6);
  });

  it("keeps the path when an off-path node changes within its slack", () => {
    const result = whatIf(diamond, 1, 4);
    expect(Array.from(result.path)).toEqual([0, 2, 3]);
    expect(result.lengthNs).toBe(8);
  });

  it("takes the lower-index branch when a what-if makes the branches tie", () => {
    const result = whatIf(diamond, 1, 5);
    expect(Array.from(result.path)).toEqual([0, 1, 3]);
    expect(result.lengthNs).toBe(8);
  });

  it("moves the path onto an off-path node slowed past its slack", () => {
    const result = whatIf(diamond, 1, 10);
    expect(Array.from(result.path)).toEqual([0, 1, 3]);
    expect(result.lengthNs).toBe(13);
  });

  it("leaves the DAG's recorded durations as they were", () => {
    whatIf(diamond, 2, 1);
    expect(dagCriticalPath(diamond).lengthNs).toBe(8);
  });

  it("refuses a node that does not exist", () => {
    expect(() => whatIf(diamond, 4, 1)).toThrow(CriticalPathInputError);
  });
});

describe("buildDag", () => {
  const cycleOf = (input: DagInput): CycleError => {
    try {
      buildDag(input);
    } catch (error) {
      if (error instanceof CycleError) return error;
      throw error;
    }
    throw new Error("no cycle reported");
  };

  it("reports a cycle as CYCLE_DETECTED naming its nodes in dependency order", () => {
    // 0 → 1 → 2 → 1, and 2 → 3 (downstream of the cycle, not in it)
    const error = cycleOf({ durations: [1, 1, 1, 1], from: [0, 1, 2, 2], to: [1, 2, 1, 3] });
    expect(error.code).toBe("CYCLE_DETECTED");
    expect(error.cycle).toEqual([1, 2]);
    expect(error.message).toBe("the dependencies form a cycle: node 1 → node 2 → node 1");
  });

  it("names a longer cycle from its lowest node", () => {
    // 0 → 5 → 3 → 4 → 5
    expect(cycleOf({ durations: [1, 1, 1, 1, 1, 1], from: [0, 5, 3, 4], to: [5, 3, 4, 5] }).cycle).toEqual([3, 4, 5]);
  });

  it("names a node that depends on itself", () => {
    expect(cycleOf({ durations: [1, 1], from: [0, 1], to: [1, 1] }).cycle).toEqual([1]);
  });

  it("refuses an edge to a missing node and a negative duration", () => {
    expect(() => buildDag({ durations: [1], from: [0], to: [1] })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENTS", at: { edge: 0 } }));
    expect(() => buildDag({ durations: [1, -1], from: [], to: [] })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENTS", at: { node: 1 } }));
  });
});

/** Textbook CPM over index order (the generator's edges go from lower to higher indices). */
function oracleOf(input: DagInput) {
  const n = input.durations.length;
  const preds: number[][] = Array.from({ length: n }, () => []);
  const succs: number[][] = Array.from({ length: n }, () => []);
  for (let k = 0; k < input.from.length; k++) {
    preds[input.to[k]].push(input.from[k]);
    succs[input.from[k]].push(input.to[k]);
  }
  const earliestStart: number[] = [];
  const finish = (v: number) => earliestStart[v] + input.durations[v];
  for (let v = 0; v < n; v++) earliestStart.push(Math.max(0, ...preds[v].map(finish)));
  const lengthNs = Math.max(...Array.from({ length: n }, (_, v) => finish(v)));
  const latestStart: number[] = new Array(n);
  for (let v = n - 1; v >= 0; v--) latestStart[v] = Math.min(lengthNs, ...succs[v].map((w) => latestStart[w])) - input.durations[v];
  const path: number[] = [];
  let v = Array.from({ length: n }, (_, i) => i).find((i) => succs[i].length === 0 && finish(i) === lengthNs)!;
  for (;;) {
    path.unshift(v);
    const at = earliestStart[v];
    const pred = preds[v].filter((u) => finish(u) === at).sort((a, b) => a - b)[0];
    if (pred === undefined) break;
    v = pred;
  }
  return { earliestStart, latestStart, lengthNs, path };
}
