import { seededRandom } from "../experiments/random";
import type { DagInput } from "./dag";

/** The seeded PRNG experiments use (mulberry32): the same seed gives the same sequence everywhere. */
export const seeded = seededRandom;

/**
 * A workflow-shaped DAG for tests and the benchmark: layers of `width` nodes; each node after the
 * first layer depends on 1–4 nodes drawn from the three layers before it; durations are whole ns,
 * log-normal around 1 ms (most calls short, a few long). Edges go from lower to higher indices, so
 * index order is a topological order (the oracle in dag.test.ts relies on it).
 */
export function layeredDag(nodes: number, width: number, seed: number): DagInput {
  const random = seeded(seed);
  const durations = new Float64Array(nodes);
  for (let i = 0; i < nodes; i++) {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    durations[i] = Math.round(1e6 * Math.exp(normal));
  }
  const from: number[] = [];
  const to: number[] = [];
  for (let i = width; i < nodes; i++) {
    const layerStart = i - (i % width);
    const lowest = Math.max(0, layerStart - 3 * width);
    const fanIn = 1 + Math.floor(random() * 4);
    for (let k = 0; k < fanIn; k++) {
      from.push(lowest + Math.floor(random() * (layerStart - lowest)));
      to.push(i);
    }
  }
  return { durations, from: Int32Array.from(from), to: Int32Array.from(to) };
}
