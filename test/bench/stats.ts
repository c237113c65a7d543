import { readFileSync } from "node:fs";
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

/** The machine's CPU time so far (all cores, in clock ticks) and the part of it the hypervisor took for other guests (steal), from /proc/stat; null where there is none. */
export function cpuTicks(): { total: number; steal: number } | null {
  try {
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return null;
  }
}

/**
 * The share of the machine's CPU time taken by the hypervisor between two cpuTicks readings, in
 * percent: on a shared virtual machine a benchmark can lose a third of its cores to other guests,
 * which its load average does not show.
 */
export function stealPercent(from: ReturnType<typeof cpuTicks>, to: ReturnType<typeof cpuTicks>): number | null {
  if (!from || !to || to.total <= from.total) return null;
  return Math.round((1000 * (to.steal - from.steal)) / (to.total - from.total)) / 10;
}
