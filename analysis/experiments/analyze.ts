/**
 * The analysis of an experiment's trials (pure, deterministic for a seed).
 *
 * Estimand: per block, the paired log-ratio d = ln(candidate / baseline) of the primary metric;
 * the estimate is the median of d over the blocks where both trials succeeded, reported as a
 * ratio exp(median). Its confidence interval is a smoothed percentile bootstrap over blocks
 * (≥ 10,000 resamples drawn from the seed; each resampled d gets Gaussian noise of standard
 * deviation 1.4826·MAD/√n). The plain bootstrap of a median undercovers at small n because its
 * resamples take only the sample's values; the smoothing corrects most of it. Measured on the
 * synthetic drifting machine of analyze.test.ts (200 seeded cases, true ratio 1.05, σ = 3 %),
 * the 95 % interval covered the truth in 194 / 184 / 190 cases at 10 / 20 / 30 blocks (plain:
 * 191 / 178 / 186). Pairing within a block cancels what the two trials share (the machine's
 * state at that moment); the median resists the odd disturbed block.
 *
 * Decision, with T = ln(1 + threshold) and the CI [lo, hi] of the median log-ratio:
 * - `no_meaningful_difference`: −T ≤ lo and hi ≤ T (the whole CI inside the practical band);
 * - `meaningful_improvement` / `meaningful_regression`: the whole CI beyond the band on one side
 *   (lo > T or hi < −T), named by the polarity (lower or higher is better);
 * - `inconclusive`: otherwise (the CI reaches into the band and out of it).
 *
 * Per variant: median, MAD, min, max and drift (the Theil–Sen slope of value against run order,
 * times the span of the variant's trials in run order, as a fraction of the median: how much the
 * values moved from the first trial to the last). Warnings, as hyperfine gives them: outliers
 * (modified z-score |0.6745 (x − median) / MAD| > 3.5, Iglewicz and Hoaglin), failed trials
 * (kept, excluded, counted), too few trials for the threshold (with the blocks that would narrow
 * the CI to it: the CI narrows as 1/√n), and drift.
 */
import { randomIndex, seededRandom } from "./random";

export type Polarity = "lower_is_better" | "higher_is_better";
export type Decision = "meaningful_improvement" | "meaningful_regression" | "no_meaningful_difference" | "inconclusive";

export interface TrialOutcome {
  /** Position in run order. */
  index: number;
  block: number;
  variant: string;
  warmup: boolean;
  /** The primary metric; null when the trial failed. */
  value: number | null;
  /** Why it failed (kept, excluded from the estimate). */
  failure?: string | null;
}

export interface AnalysisInput {
  trials: readonly TrialOutcome[];
  /** The variant the others are compared with (A). */
  baseline: string;
  polarity: Polarity;
  /** The smallest change that matters, as a fraction (0.02: 2 %). */
  threshold: number;
  /** e.g. 0.95 */
  confidence: number;
  resamples?: number;
  seed: number;
}

export interface VariantSummary {
  variant: string;
  /** Measured (not warm-up) trials that gave a value. */
  trials: number;
  failed: number;
  median: number | null;
  mad: number | null;
  min: number | null;
  max: number | null;
  /** Theil–Sen slope of value against run order times the run's span, as a fraction of the median. */
  drift_over_run: number | null;
  outliers: number;
  /** In run order: what the per-trial picture draws. */
  values: { index: number; block: number; value: number }[];
}

export interface Comparison {
  variant: string;
  baseline: string;
  /** Blocks where both trials gave a value. */
  pairs: number;
  /** Blocks left out because one of the two failed. */
  excluded_blocks: number;
  /** exp(median paired log-ratio): candidate / baseline. */
  ratio: number | null;
  ci: [number, number] | null;
  decision: Decision;
  /** Blocks the experiment would need for the CI's half-width to reach the threshold; null once it has. */
  blocks_needed: number | null;
  /** Per block: the paired log-ratio (the delta picture). */
  deltas: { block: number; log_ratio: number }[];
}

export interface Warning {
  code: "OUTLIERS" | "FAILED_TRIALS" | "TOO_FEW_TRIALS" | "DRIFT" | "NON_POSITIVE_VALUES";
  message: string;
}

export interface ExperimentAnalysis {
  method: string;
  confidence: number;
  threshold: number;
  polarity: Polarity;
  resamples: number;
  variants: VariantSummary[];
  comparisons: Comparison[];
  failed_trials: number;
  warmups_discarded: number;
  warnings: Warning[];
}

export const MIN_RESAMPLES = 10_000;
const OUTLIER_Z = 3.5;

export const METHOD =
  "Randomized complete blocks; per block the paired log-ratio ln(candidate/baseline); estimate exp(median); percentile bootstrap CI over blocks; decision against ±ln(1+threshold).";

export class AnalysisInputError extends Error {
  readonly code = "INVALID_ARGUMENTS" as const;
  constructor(
    message: string,
    readonly argument: string,
  ) {
    super(message);
    this.name = "AnalysisInputError";
  }
}

export function analyzeExperiment(input: AnalysisInput): ExperimentAnalysis {
  const resamples = input.resamples ?? MIN_RESAMPLES;
  if (!(input.confidence > 0.5 && input.confidence < 1)) throw new AnalysisInputError("the confidence level is between 0.5 and 1 (0.95 by default)", "confidence");
  if (!(input.threshold > 0 && input.threshold < 1)) throw new AnalysisInputError("the practical threshold is a fraction between 0 and 1 (0.02 for 2 %)", "threshold");
  if (!Number.isInteger(resamples) || resamples < MIN_RESAMPLES) throw new AnalysisInputError(`at least ${MIN_RESAMPLES} bootstrap resamples`, "resamples");
  const names = [...new Set(input.trials.map((t) => t.variant))];
  if (!names.includes(input.baseline)) throw new AnalysisInputError("the baseline is not one of the trials' variants", "baseline");

  const warnings: Warning[] = [];
  const measured = input.trials.filter((t) => !t.warmup);
  const nonPositive = measured.filter((t) => t.value !== null && !(t.value > 0)).length;
  if (nonPositive > 0) warnings.push({ code: "NON_POSITIVE_VALUES", message: `${nonPositive} trial(s) gave a value ≤ 0, which has no ratio; they are excluded like failed trials.` });
  const usable = (t: TrialOutcome): t is TrialOutcome & { value: number } => t.value !== null && t.value > 0 && Number.isFinite(t.value);
  const failed = measured.filter((t) => t.value === null).length;
  if (failed > 0) warnings.push({ code: "FAILED_TRIALS", message: `${failed} trial(s) failed; they are kept with their reason and excluded from the estimate.` });

  const variants = names.map((name) => summarize(name, measured.filter((t) => t.variant === name), usable));
  for (const v of variants) {
    if (v.outliers > 0) warnings.push({ code: "OUTLIERS", message: `${v.variant}: ${v.outliers} outlier(s) (modified z-score above ${OUTLIER_Z}); the machine may have been disturbed. The median and the paired design limit their effect; consider more trials on a quieter machine.` });
    if (v.drift_over_run !== null && Math.abs(v.drift_over_run) > input.threshold) {
      warnings.push({ code: "DRIFT", message: `${v.variant}: values drifted by ${(v.drift_over_run * 100).toFixed(1)} % from its first trial to its last; blocks interleave the variants, so drift common to all cancels in the paired ratios.` });
    }
  }

  const random = seededRandom(input.seed);
  const comparisons = names
    .filter((name) => name !== input.baseline)
    .map((name) => compare(input, name, measured, usable, random, resamples));
  for (const c of comparisons) {
    if (c.blocks_needed !== null && c.decision !== "meaningful_improvement" && c.decision !== "meaningful_regression") {
      warnings.push({ code: "TOO_FEW_TRIALS", message: `${c.variant} vs ${c.baseline}: the CI is wider than the ±${(input.threshold * 100).toFixed(1)} % threshold; about ${c.blocks_needed} trials per variant (now ${c.pairs} pairs) would narrow it to the threshold.` });
    }
  }
  return {
    method: METHOD,
    confidence: input.confidence,
    threshold: input.threshold,
    polarity: input.polarity,
    resamples,
    variants,
    comparisons,
    failed_trials: failed,
    warmups_discarded: input.trials.length - measured.length,
    warnings,
  };
}

function compare(input: AnalysisInput, name: string, measured: readonly TrialOutcome[], usable: (t: TrialOutcome) => t is TrialOutcome & { value: number }, random: () => number, resamples: number): Comparison {
  const byBlock = new Map<number, { a?: number; b?: number; missing: boolean }>();
  for (const t of measured) {
    if (t.variant !== input.baseline && t.variant !== name) continue;
    const entry = byBlock.get(t.block) ?? { missing: false };
    if (!usable(t)) entry.missing = true;
    else if (t.variant === input.baseline) entry.a = t.value;
    else entry.b = t.value;
    byBlock.set(t.block, entry);
  }
  const deltas: { block: number; log_ratio: number }[] = [];
  let excluded = 0;
  for (const [block, e] of [...byBlock.entries()].sort((x, y) => x[0] - y[0])) {
    if (e.a === undefined || e.b === undefined) {
      excluded++;
      continue;
    }
    deltas.push({ block, log_ratio: Math.log(e.b / e.a) });
  }
  const base = { variant: name, baseline: input.baseline, pairs: deltas.length, excluded_blocks: excluded, deltas };
  if (deltas.length < 2) return { ...base, ratio: deltas.length ? Math.exp(deltas[0].log_ratio) : null, ci: null, decision: "inconclusive", blocks_needed: null };

  const d = Float64Array.from(deltas, (x) => x.log_ratio);
  const estimate = median(d);
  const [lo, hi] = bootstrapMedianCi(d, input.confidence, resamples, random);
  const band = Math.log(1 + input.threshold);
  const decision = decide(lo, hi, band, input.polarity);
  const halfWidth = (hi - lo) / 2;
  const blocksNeeded = halfWidth > band ? Math.ceil(d.length * (halfWidth / band) ** 2) : null;
  return { ...base, ratio: Math.exp(estimate), ci: [Math.exp(lo), Math.exp(hi)], decision, blocks_needed: blocksNeeded };
}

/** The decision rule of the file comment, on the log scale. */
export function decide(lo: number, hi: number, band: number, polarity: Polarity): Decision {
  if (lo >= -band && hi <= band) return "no_meaningful_difference";
  const larger = lo > band;
  const smaller = hi < -band;
  if (!larger && !smaller) return "inconclusive";
  const better = polarity === "lower_is_better" ? smaller : larger;
  return better ? "meaningful_improvement" : "meaningful_regression";
}

/** Smoothed percentile bootstrap CI of the median (see the file comment). */
export function bootstrapMedianCi(values: Float64Array, confidence: number, resamples: number, random: () => number): [number, number] {
  const n = values.length;
  const m = median(values);
  const h = (1.4826 * median(Array.from(values, (v) => Math.abs(v - m)))) / Math.sqrt(n);
  const medians = new Float64Array(resamples);
  const sample = new Float64Array(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = values[randomIndex(random, n)] + (h > 0 ? h * standardNormal(random) : 0);
    medians[r] = medianOfSorted(sample.sort());
  }
  medians.sort();
  const alpha = 1 - confidence;
  return [quantileSorted(medians, alpha / 2), quantileSorted(medians, 1 - alpha / 2)];
}

/** A standard normal draw (Box–Muller). */
export function standardNormal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Median (the mean of the middle two for an even count); sorts a copy. */
export function median(values: ArrayLike<number>): number {
  return medianOfSorted(Float64Array.from(values).sort());
}

/** Median of values already in ascending order (a resample sorted in place: no copy per resample). */
function medianOfSorted(sorted: Float64Array): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/** Linear interpolation between order statistics (type 7, R's default). */
function quantileSorted(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const low = Math.floor(h);
  const high = Math.min(sorted.length - 1, low + 1);
  return sorted[low] + (h - low) * (sorted[high] - sorted[low]);
}

function summarize(variant: string, trials: readonly TrialOutcome[], usable: (t: TrialOutcome) => t is TrialOutcome & { value: number }): VariantSummary {
  const ok = trials.filter(usable).sort((a, b) => a.index - b.index);
  const values = ok.map((t) => t.value);
  const failed = trials.length - ok.length;
  if (values.length === 0) return { variant, trials: 0, failed, median: null, mad: null, min: null, max: null, drift_over_run: null, outliers: 0, values: [] };
  const m = median(values);
  const mad = median(values.map((v) => Math.abs(v - m)));
  const outliers = mad > 0 ? values.filter((v) => Math.abs((0.6745 * (v - m)) / mad) > OUTLIER_Z).length : 0;
  const slope = values.length >= 3 ? theilSen(ok.map((t) => t.index), values) : null;
  return {
    variant,
    trials: values.length,
    failed,
    median: m,
    mad,
    min: Math.min(...values),
    max: Math.max(...values),
    drift_over_run: slope === null || m === 0 ? null : (slope * (ok[ok.length - 1].index - ok[0].index)) / m,
    outliers,
    values: ok.map((t) => ({ index: t.index, block: t.block, value: t.value })),
  };
}

/** The median of the pairwise slopes (robust to outliers). */
function theilSen(x: readonly number[], y: readonly number[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < x.length; i++) for (let j = i + 1; j < x.length; j++) if (x[j] !== x[i]) slopes.push((y[j] - y[i]) / (x[j] - x[i]));
  return slopes.length ? median(slopes) : 0;
}
