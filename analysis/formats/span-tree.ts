/**
 * Depth of each span of a trace whose parents are known by index: a parent on the same track nests
 * it; a parent elsewhere (or none) makes it a root of its track. Iterative (traces can be deep);
 * a parent cycle is cut where it closes (`parentOf` is changed there) and reported by `onCycle`.
 */
export function spanDepths(trackOf: ArrayLike<number>, parentOf: Int32Array, onCycle: () => void): Int32Array {
  const n = parentOf.length;
  const depth = new Int32Array(n).fill(-1);
  const walk = new Int32Array(n).fill(-1);
  const chain: number[] = [];
  for (let i = 0; i < n; i++) {
    let at = i;
    while (depth[at] < 0) {
      const parent = parentOf[at];
      if (parent < 0 || trackOf[parent] !== trackOf[at]) {
        depth[at] = 0;
        break;
      }
      walk[at] = i;
      if (walk[parent] === i) {
        onCycle();
        parentOf[at] = -1;
        depth[at] = 0;
        break;
      }
      chain.push(at);
      at = parent;
    }
    while (chain.length > 0) {
      const child = chain.pop()!;
      depth[child] = depth[parentOf[child]] + 1;
    }
  }
  return depth;
}
