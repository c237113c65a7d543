/** Summary statistics for benchmark samples (milliseconds unless said otherwise). */
export function summarize(samples: number[]): { n: number; min: number; p50: number; p95: number; max: number; mean: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    n: sorted.length,
    min: round(sorted[0]),
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    max: round(sorted[sorted.length - 1]),
    mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}
