import { z } from "zod";
import { Author } from "./notebook";

/**
 * Zod models of experiments: randomized, paired trials of workload variants under one adapter,
 * with the analysis (analysis/experiments/analyze.ts) stored once the trials ran.
 */

const ParameterValue = z.union([z.string().max(4096), z.number(), z.boolean()]);

export const VariantName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a variant name is letters, digits, '_', '.' or '-'");

export const VariantSpec = z
  .object({
    name: VariantName,
    workload: z.string().min(1).max(128).describe("A workload declared in emberscope.toml."),
    parameters: z.record(z.string(), ParameterValue).default({}).describe("Its parameter values (declared defaults otherwise)."),
  })
  .strict();
export type VariantSpec = z.infer<typeof VariantSpec>;

export const Polarity = z.enum(["lower_is_better", "higher_is_better"]);
export const Decision = z.enum(["meaningful_improvement", "meaningful_regression", "no_meaningful_difference", "inconclusive"]);
export type Decision = z.infer<typeof Decision>;

/** What an experiment runs and how it is judged: fixed when it is planned. */
export const ExperimentDesign = z.object({
  variants: z.array(VariantSpec),
  baseline: z.string().describe("The variant the others are compared with (the first by default)."),
  adapter: z.string(),
  options: z.record(z.string(), ParameterValue).describe("Adapter options of every trial (adapters that repeat are asked for one run, no warm-up: the experiment repeats)."),
  metric: z.string().describe("The primary metric read from each trial's run: a measurement (wall_ns, user_ns, sys_ns, cpu_ns = user + sys, max_rss_bytes) or a metric total (instructions, samples, …)."),
  polarity: Polarity,
  estimand: z.literal("median_paired_log_ratio"),
  threshold: z.number(),
  confidence: z.number(),
  trials: z.number().int().describe("Measured trials per variant (one per block)."),
  warmups: z.number().int().describe("Warm-up blocks, run first and discarded."),
  seed: z.number().int(),
});
export type ExperimentDesign = z.infer<typeof ExperimentDesign>;

export const ExperimentState = z.enum(["planned", "running", "completed", "interrupted", "cancelled", "failed"]);
export type ExperimentState = z.infer<typeof ExperimentState>;

const AnalysisWarning = z.object({ code: z.string(), message: z.string() });

/** analysis/experiments/analyze.ts's ExperimentAnalysis, as stored. */
export const ExperimentAnalysis = z.object({
  method: z.string(),
  confidence: z.number(),
  threshold: z.number(),
  polarity: Polarity,
  resamples: z.number().int(),
  variants: z.array(
    z.object({
      variant: z.string(),
      trials: z.number().int(),
      failed: z.number().int(),
      median: z.number().nullable(),
      mad: z.number().nullable(),
      min: z.number().nullable(),
      max: z.number().nullable(),
      drift_over_run: z.number().nullable().describe("How much the values moved from the variant's first trial to its last (Theil–Sen), as a fraction of its median."),
      outliers: z.number().int(),
      values: z.array(z.object({ index: z.number().int(), block: z.number().int(), value: z.number() })),
    }),
  ),
  comparisons: z.array(
    z.object({
      variant: z.string(),
      baseline: z.string(),
      pairs: z.number().int(),
      excluded_blocks: z.number().int(),
      ratio: z.number().nullable(),
      ci: z.tuple([z.number(), z.number()]).nullable(),
      decision: Decision,
      blocks_needed: z.number().int().nullable(),
      deltas: z.array(z.object({ block: z.number().int(), log_ratio: z.number() })),
    }),
  ),
  failed_trials: z.number().int(),
  warmups_discarded: z.number().int(),
  warnings: z.array(AnalysisWarning),
});
export type ExperimentAnalysis = z.infer<typeof ExperimentAnalysis>;

export const Experiment = z.object({
  experiment_id: z.string(),
  investigation_id: z.string(),
  hypothesis_id: z.string().nullable(),
  title: z.string(),
  design: ExperimentDesign,
  state: ExperimentState,
  operation_id: z.string().nullable().describe("The operation running (or that last ran) its trials."),
  analysis: ExperimentAnalysis.nullable(),
  commit_id: z.string().nullable().describe("HEAD once the analysis was stored: a finding cites the experiment at this commit."),
  created_by: Author,
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Experiment = z.infer<typeof Experiment>;

export const TrialOutcome = z.enum(["pending", "ok", "failed"]);

export const Trial = z.object({
  index: z.number().int().describe("Position in run order, from 0."),
  block: z.number().int().describe("Measured blocks from 0; warm-up blocks are negative."),
  order: z.number().int().describe("Position within its block."),
  variant: z.string(),
  warmup: z.boolean(),
  run_id: z.string().nullable(),
  value: z.number().nullable(),
  outcome: TrialOutcome,
  failure: z.object({ code: z.string(), message: z.string() }).nullable().describe("Why it failed (kept; excluded from the estimate)."),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
});
export type Trial = z.infer<typeof Trial>;
