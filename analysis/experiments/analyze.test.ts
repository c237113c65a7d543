import { describe, expect, it } from "vitest";
import { analyzeExperiment, decide, median, standardNormal as normal, type AnalysisInput, type TrialOutcome } from "./analyze";
import { DesignError, randomizedBlocks } from "./design";
import { seededRandom } from "./random";

/**
 * Trials of A and B in randomized blocks on a drifting machine: every value is base × drift(t) ×
 * e^ε (σ on the log scale), B's also × `ratio`. The drift grows 30 % over the run: a sequential
 * design would see it as a difference, the paired one cancels it.
 */
function simulate(seed: number, ratio: number, blocks: number, sigma = 0.03): TrialOutcome[] {
  const random = seededRandom(seed * 7919 + 1);
  const plan = randomizedBlocks({ variants: ["A", "B"], blocks, warmups: 1, seed });
  return plan.map((t) => {
    const drift = 1 + (0.3 * t.index) / plan.length;
    const value = 100 * drift * Math.exp(sigma * normal(random)) * (t.variant === "B" ? ratio : 1);
    return { index: t.index, block: t.block, variant: t.variant, warmup: t.warmup, value };
  });
}

const input = (trials: TrialOutcome[], more: Partial<AnalysisInput> = {}): AnalysisInput => ({ trials, baseline: "A", polarity: "lower_is_better", threshold: 0.02, confidence: 0.95, seed: 42, ...more });

describe("randomized complete blocks", () => {
  it("runs every variant once per block in a seeded order, warm-ups first", () => {
    const plan = randomizedBlocks({ variants: ["A", "B", "C"], blocks: 4, warmups: 2, seed: 9 });
    expect(plan).toHaveLength(18);
    expect(plan.slice(0, 6).every((t) => t.warmup && t.block < 0)).toBe(true);
    for (let b = -2; b < 4; b++) expect(plan.filter((t) => t.block === b).map((t) => t.variant).sort()).toEqual(["A", "B", "C"]);
    expect(plan.map((t) => t.index)).toEqual(plan.map((_, i) => i));
    expect(randomizedBlocks({ variants: ["A", "B", "C"], blocks: 4, warmups: 2, seed: 9 })).toEqual(plan);
    // Not one fixed order: over 4 measured blocks of 3 variants, a seed gives more than one order.
    expect(new Set(plan.filter((t) => !t.warmup && t.order === 0).map((t) => t.variant)).size).toBeGreaterThan(1);
  });

  it("refuses too few variants, repeated names and out-of-range counts", () => {
    expect(() => randomizedBlocks({ variants: ["A"], blocks: 5, warmups: 0, seed: 1 })).toThrow(DesignError);
    expect(() => randomizedBlocks({ variants: ["A", "A"], blocks: 5, warmups: 0, seed: 1 })).toThrow(/differ/);
    expect(() => randomizedBlocks({ variants: ["A", "B"], blocks: 1, warmups: 0, seed: 1 })).toThrow(/trials per variant/);
    expect(() => randomizedBlocks({ variants: ["A", "B"], blocks: 5, warmups: -1, seed: 1 })).toThrow(/warm-ups/);
  });
});

describe("experiment analysis", () => {
  it("covers the true ratio with its 95 % CI in at least 93 % of 200 seeded experiments of 30 blocks on a drifting machine", () => {
    let covered = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const [c] = analyzeExperiment(input(simulate(seed, 1.05, 30))).comparisons;
      if (c.ci![0] <= 1.05 && 1.05 <= c.ci![1]) covered++;
    }
    expect(covered).toBeGreaterThanOrEqual(186);
    // 200 bootstraps of 10,000 resamples: seconds of CPU, more on a busy machine.
  }, 120_000);

  it("is deterministic for a seed", () => {
    const trials = simulate(3, 1.1, 12);
    expect(analyzeExperiment(input(trials))).toEqual(analyzeExperiment(input(trials)));
    expect(analyzeExperiment(input(trials, { seed: 43 })).comparisons[0].ci).not.toEqual(analyzeExperiment(input(trials)).comparisons[0].ci);
  });

  it("finds a 10 % slowdown a meaningful regression when lower is better, an improvement when higher is", () => {
    const trials = simulate(5, 1.1, 20);
    const [lower] = analyzeExperiment(input(trials)).comparisons;
    expect(lower.decision).toBe("meaningful_regression");
    expect(lower.ratio!).toBeGreaterThan(1.07);
    expect(lower.ratio!).toBeLessThan(1.13);
    expect(analyzeExperiment(input(trials, { polarity: "higher_is_better" })).comparisons[0].decision).toBe("meaningful_improvement");
  });

  it("never calls an A/A experiment a meaningful change, and says how many trials would settle it", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const [c] = analyzeExperiment(input(simulate(seed, 1, 10))).comparisons;
      expect(["no_meaningful_difference", "inconclusive"]).toContain(c.decision);
    }
    const noisy = analyzeExperiment(input(simulate(8, 1, 4, 0.1)));
    expect(noisy.comparisons[0]).toMatchObject({ decision: "inconclusive" });
    expect(noisy.comparisons[0].blocks_needed!).toBeGreaterThan(4);
    expect(noisy.warnings.map((w) => w.code)).toContain("TOO_FEW_TRIALS");
  });

  it("excludes failed trials and their blocks, counts them and keeps their reason out of the estimate", () => {
    const trials = simulate(11, 1.1, 10);
    const broken = trials.map((t) => (t.variant === "B" && t.block === 3 ? { ...t, value: null, failure: "exit 1" } : t));
    const analysis = analyzeExperiment(input(broken));
    expect(analysis.failed_trials).toBe(1);
    expect(analysis.warmups_discarded).toBe(2);
    expect(analysis.comparisons[0]).toMatchObject({ pairs: 9, excluded_blocks: 1 });
    expect(analysis.comparisons[0].deltas.map((d) => d.block)).not.toContain(3);
    expect(analysis.variants.find((v) => v.variant === "B")).toMatchObject({ trials: 9, failed: 1 });
    expect(analysis.warnings.map((w) => w.code)).toContain("FAILED_TRIALS");
  });

  it("reports each variant's median, MAD, min, drift and outliers", () => {
    const trials: TrialOutcome[] = [];
    // A: 100, 102, 104, … in run order (+2 per trial of A), one far outlier; B flat at 50.
    for (let b = 0; b < 10; b++) {
      trials.push({ index: 2 * b, block: b, variant: "A", warmup: false, value: b === 9 ? 400 : 100 + 2 * b });
      trials.push({ index: 2 * b + 1, block: b, variant: "B", warmup: false, value: 50 });
    }
    const { variants, warnings } = analyzeExperiment(input(trials));
    const a = variants.find((v) => v.variant === "A")!;
    expect(a).toMatchObject({ trials: 10, min: 100, max: 400, median: 109, mad: 5, outliers: 1 });
    // Theil–Sen ignores the outlier: +2 per trial of A over 9 steps (run order 0 to 18) is +18, 16.5 % of the median 109.
    expect(a.drift_over_run!).toBeCloseTo(18 / 109, 10);
    expect(variants.find((v) => v.variant === "B")).toMatchObject({ median: 50, mad: 0, outliers: 0, drift_over_run: 0 });
    expect(warnings.map((w) => w.code)).toEqual(expect.arrayContaining(["OUTLIERS", "DRIFT"]));
  });

  it("decides at the band's edges as documented", () => {
    const band = Math.log(1.02);
    expect(decide(-band, band, band, "lower_is_better")).toBe("no_meaningful_difference");
    expect(decide(-band - 1e-9, band, band, "lower_is_better")).toBe("inconclusive");
    expect(decide(band + 1e-9, 0.5, band, "lower_is_better")).toBe("meaningful_regression");
    expect(decide(band, 0.5, band, "lower_is_better")).toBe("inconclusive");
    expect(decide(-0.5, -band - 1e-9, band, "lower_is_better")).toBe("meaningful_improvement");
    expect(decide(-0.5, -band - 1e-9, band, "higher_is_better")).toBe("meaningful_regression");
    expect(decide(-0.5, 0.5, band, "higher_is_better")).toBe("inconclusive");
  });

  it("refuses bad settings with the argument named", () => {
    const trials = simulate(1, 1, 4);
    expect(() => analyzeExperiment(input(trials, { resamples: 100 }))).toThrow(expect.objectContaining({ argument: "resamples" }));
    expect(() => analyzeExperiment(input(trials, { threshold: 0 }))).toThrow(expect.objectContaining({ argument: "threshold" }));
    expect(() => analyzeExperiment(input(trials, { confidence: 1 }))).toThrow(expect.objectContaining({ argument: "confidence" }));
    expect(() => analyzeExperiment(input(trials, { baseline: "Z" }))).toThrow(expect.objectContaining({ argument: "baseline" }));
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });
});
