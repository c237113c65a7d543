import type { FlameTree } from "./tree";

export interface SearchResult {
  /** 1 for nodes that match, else 0. */
  matched: Uint8Array;
  count: number;
  /** Sum of totals of matched nodes that have no matched ancestor (each sample counted once). */
  matchedTotal: number;
  /** matchedTotal / root total. */
  share: number;
}

/**
 * Case-insensitive substring match on name, file or module. A query written /like this/ is a
 * regular expression. Nested matches (recursion) count once toward the share.
 */
export function searchFlame(tree: FlameTree, query: string): SearchResult | null {
  const q = query.trim();
  if (!q) return null;
  let test: (s: string) => boolean;
  const re = /^\/(.+)\/$/.exec(q);
  if (re) {
    try {
      const rx = new RegExp(re[1], "i");
      test = (s) => rx.test(s);
    } catch {
      const lower = q.toLowerCase();
      test = (s) => s.toLowerCase().includes(lower);
    }
  } else {
    const lower = q.toLowerCase();
    test = (s) => s.toLowerCase().includes(lower);
  }
  const matched = new Uint8Array(tree.count);
  const covered = new Uint8Array(tree.count);
  let count = 0;
  let matchedTotal = 0;
  // Indices are not topologically ordered, so walk from the root.
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    const parentCovered = i > 0 && covered[tree.parent[i]] === 1;
    if (i > 0 && (test(tree.names[i]) || (tree.files[i] !== null && test(tree.files[i]!)) || (tree.modules[i] !== null && test(tree.modules[i]!)))) {
      matched[i] = 1;
      count++;
      if (!parentCovered) matchedTotal += tree.total[i];
      covered[i] = 1;
    } else covered[i] = parentCovered ? 1 : 0;
    for (let c = tree.childStart[i]; c < tree.childStart[i + 1]; c++) stack.push(tree.childIndex[c]);
  }
  return { matched, count, matchedTotal, share: tree.total[0] > 0 ? matchedTotal / tree.total[0] : 0 };
}
