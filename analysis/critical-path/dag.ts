/**
 * The critical path of a workflow DAG under the recorded-duration model: every node takes the
 * time it took when recorded, starts as soon as all its dependencies have finished, and nothing
 * else limits concurrency. Then the sequential sum of durations is what running one call at a
 * time costs, the longest (duration-weighted) path is what unbounded concurrency costs, and their
 * ratio bounds the speed-up. Per node: the earliest and latest start (CPM's forward and backward
 * passes) and the slack between them.
 *
 * Built for a million nodes and millions of edges: typed arrays, successors in CSR form, Kahn's
 * topological order, no recursion; every pass is linear in nodes + edges.
 *
 * Tie-breaks (the answer never depends on the order edges are given in):
 * - a node's critical predecessor is the one that finishes last; among equal finishes, the lowest
 *   node index (a predecessor finishing at 0 still counts);
 * - the path ends at a node without dependents that finishes last (one always does: a dependent
 *   finishes no earlier); among equal finishes, the lowest node index. So zero-duration nodes at
 *   either end of a chain stay on its path.
 * Times are exact for whole nanoseconds up to 2^53 ns (about 104 days).
 */
import { CycleError, CriticalPathInputError } from "./errors";

export interface DagInput {
  /** Recorded duration of node i in ns (finite, ≥ 0); the node count is its length. */
  durations: ArrayLike<number>;
  /** Edge k goes from its dependency `from[k]` to its dependent `to[k]` (node indices). */
  from: ArrayLike<number>;
  to: ArrayLike<number>;
}

/** A validated, topologically ordered DAG: what every computation here reads. */
export interface Dag {
  nodeCount: number;
  edgeCount: number;
  durations: Float64Array;
  /** Dependents of node i are successors[successorStart[i] .. successorStart[i + 1]). */
  successorStart: Int32Array;
  successors: Int32Array;
  /** Every node after all its dependencies (Kahn's order: sources by index, then as freed). */
  order: Int32Array;
}

export interface DagCriticalPath {
  /** Sum of all recorded durations: the time of running one node at a time. */
  sequentialNs: number;
  /** Length of the critical path: the time with unbounded concurrency. */
  lengthNs: number;
  /** sequentialNs / lengthNs (1 when both are 0): how much faster concurrency alone can make it. */
  speedupBound: number;
  /** The critical path, node indices from its first dependency to its last dependent. */
  path: Int32Array;
  earliestStart: Float64Array;
  earliestFinish: Float64Array;
  /** The latest start that does not lengthen the path (sinks may finish as late as lengthNs). */
  latestStart: Float64Array;
  /** latestStart − earliestStart; 0 on every longest path, not only the reported one. */
  slack: Float64Array;
  /** 1 for the nodes of `path`. */
  onPath: Uint8Array;
}

export interface WhatIfResult {
  node: number;
  durationNs: number;
  sequentialNs: number;
  lengthNs: number;
  speedupBound: number;
  path: Int32Array;
}

/** Validates the input, builds the successor lists and orders the nodes; a cycle throws CycleError. */
export function buildDag(input: DagInput): Dag {
  const nodeCount = input.durations.length;
  const edgeCount = input.from.length;
  if (input.to.length !== edgeCount) throw new CriticalPathInputError("the edge arrays differ in length", {});
  const durations = new Float64Array(nodeCount);
  for (let i = 0; i < nodeCount; i++) {
    const d = input.durations[i];
    if (!(d >= 0) || !Number.isFinite(d)) throw new CriticalPathInputError("a duration is not a finite number ≥ 0", { node: i });
    durations[i] = d;
  }
  const successorStart = new Int32Array(nodeCount + 1);
  for (let k = 0; k < edgeCount; k++) {
    const u = input.from[k];
    const w = input.to[k];
    if (!isNode(u, nodeCount) || !isNode(w, nodeCount)) throw new CriticalPathInputError("an edge names no node", { edge: k });
    successorStart[u + 1]++;
  }
  for (let i = 0; i < nodeCount; i++) successorStart[i + 1] += successorStart[i];
  const successors = new Int32Array(edgeCount);
  const fill = successorStart.slice(0, nodeCount);
  const inDegree = new Int32Array(nodeCount);
  for (let k = 0; k < edgeCount; k++) {
    const w = input.to[k];
    successors[fill[input.from[k]]++] = w;
    inDegree[w]++;
  }

  // Kahn's algorithm; `order` doubles as the queue.
  const order = new Int32Array(nodeCount);
  let tail = 0;
  for (let i = 0; i < nodeCount; i++) if (inDegree[i] === 0) order[tail++] = i;
  for (let head = 0; head < tail; head++) {
    const u = order[head];
    for (let e = successorStart[u]; e < successorStart[u + 1]; e++) if (--inDegree[successors[e]] === 0) order[tail++] = successors[e];
  }
  if (tail < nodeCount) throw new CycleError(findCycle(input, inDegree));
  return { nodeCount, edgeCount, durations, successorStart, successors, order };
}

function isNode(x: number, nodeCount: number): boolean {
  return Number.isInteger(x) && x >= 0 && x < nodeCount;
}

/**
 * One cycle among the nodes Kahn's algorithm could not free (inDegree > 0). Each such node has a
 * dependency that is also unfreed, so walking back through the lowest-index one must repeat a node.
 */
function findCycle(input: DagInput, inDegree: Int32Array): number[] {
  const n = inDegree.length;
  const lowestPred = new Int32Array(n).fill(n);
  for (let k = 0; k < input.from.length; k++) {
    const u = input.from[k];
    const w = input.to[k];
    if (inDegree[u] > 0 && inDegree[w] > 0 && u < lowestPred[w]) lowestPred[w] = u;
  }
  let start = 0;
  while (inDegree[start] === 0) start++;
  const seenAt = new Int32Array(n).fill(-1);
  const walk: number[] = [];
  let v = start;
  while (seenAt[v] < 0) {
    seenAt[v] = walk.length;
    walk.push(v);
    v = lowestPred[v];
  }
  // walk[seenAt[v]..] goes backwards through dependencies; reverse it into dependency order.
  const cycle = walk.slice(seenAt[v]).reverse();
  let lowest = 0;
  for (let i = 1; i < cycle.length; i++) if (cycle[i] < cycle[lowest]) lowest = i;
  return [...cycle.slice(lowest), ...cycle.slice(0, lowest)];
}

/** The critical path and, per node, earliest/latest start and slack. */
export function dagCriticalPath(dag: Dag): DagCriticalPath {
  const n = dag.nodeCount;
  const { durations, successorStart, successors, order } = dag;
  const earliestStart = new Float64Array(n);
  const criticalPred = new Int32Array(n);
  const { path, lengthNs } = forwardPass(dag, durations, earliestStart, criticalPred);

  const earliestFinish = new Float64Array(n);
  for (let i = 0; i < n; i++) earliestFinish[i] = earliestStart[i] + durations[i];
  const latestStart = new Float64Array(n);
  const slack = new Float64Array(n);
  for (let k = n - 1; k >= 0; k--) {
    const u = order[k];
    let latestFinish = lengthNs;
    for (let e = successorStart[u]; e < successorStart[u + 1]; e++) if (latestStart[successors[e]] < latestFinish) latestFinish = latestStart[successors[e]];
    latestStart[u] = latestFinish - durations[u];
    slack[u] = latestStart[u] - earliestStart[u];
  }
  const onPath = new Uint8Array(n);
  for (const v of path) onPath[v] = 1;
  const sequentialNs = sum(durations);
  return { sequentialNs, lengthNs, speedupBound: bound(sequentialNs, lengthNs), path, earliestStart, earliestFinish, latestStart, slack, onPath };
}

/** The critical path if node `node` took `durationNs` instead of its recorded time (one forward pass). */
export function whatIf(dag: Dag, node: number, durationNs: number): WhatIfResult {
  if (!isNode(node, dag.nodeCount)) throw new CriticalPathInputError("the what-if names no node", { node });
  if (!(durationNs >= 0) || !Number.isFinite(durationNs)) throw new CriticalPathInputError("the what-if duration is not a finite number ≥ 0", { node });
  const durations = dag.durations.slice();
  durations[node] = durationNs;
  const { path, lengthNs } = forwardPass(dag, durations, new Float64Array(dag.nodeCount), new Int32Array(dag.nodeCount));
  const sequentialNs = sum(durations);
  return { node, durationNs, sequentialNs, lengthNs, speedupBound: bound(sequentialNs, lengthNs), path };
}

/** Fills earliest starts and critical predecessors (-1: none) in topological order; returns the path. */
function forwardPass(dag: Dag, durations: Float64Array, earliestStart: Float64Array, criticalPred: Int32Array): { path: Int32Array; lengthNs: number } {
  const { nodeCount: n, successorStart, successors, order } = dag;
  criticalPred.fill(-1);
  for (let k = 0; k < n; k++) {
    const u = order[k];
    const finish = earliestStart[u] + durations[u];
    for (let e = successorStart[u]; e < successorStart[u + 1]; e++) {
      const w = successors[e];
      if (criticalPred[w] < 0 || finish > earliestStart[w] || (finish === earliestStart[w] && u < criticalPred[w])) {
        earliestStart[w] = finish;
        criticalPred[w] = u;
      }
    }
  }
  let end = -1;
  let lengthNs = 0;
  for (let i = 0; i < n; i++) {
    if (successorStart[i] !== successorStart[i + 1]) continue;
    const finish = earliestStart[i] + durations[i];
    if (end < 0 || finish > lengthNs) {
      end = i;
      lengthNs = finish;
    }
  }
  let steps = 0;
  for (let v = end; v >= 0; v = criticalPred[v]) steps++;
  const path = new Int32Array(steps);
  for (let v = end, k = steps - 1; v >= 0; v = criticalPred[v]) path[k--] = v;
  return { path, lengthNs };
}

function sum(values: Float64Array): number {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i];
  return total;
}

function bound(sequentialNs: number, lengthNs: number): number {
  return lengthNs > 0 ? sequentialNs / lengthNs : 1;
}
