/** The length of the union of intervals [start, end) (any order, overlapping or not). */
export function unionLength(intervals: readonly (readonly [number, number])[]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let reach = -Infinity;
  for (const [s, t] of sorted) {
    if (t <= reach) continue;
    covered += t - Math.max(s, reach);
    reach = t;
  }
  return covered;
}
