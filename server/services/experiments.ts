import { createHash, randomInt } from "node:crypto";
import { z } from "zod";
import { DesignError, DESIGN_LIMITS, randomizedBlocks } from "../../analysis/experiments/design";
import { adapterNamed } from "../capture/adapters";
import { consumePlanOf, linkPlanOperation, peekPlan, resolveIntent, storePlanOf } from "../capture/plan";
import { ensureWorker } from "../capture/pool";
import { loadProjectConfig } from "../capture/project-config";
import type { ExperimentJob } from "../capture/run-experiment";
import { canonicalJson } from "../domain/cursor";
import { EmberscopeError } from "../domain/errors";
import { Experiment, ExperimentAnalysis, ExperimentDesign, Polarity, Trial, VariantName, VariantSpec, type ExperimentState } from "../domain/experiment";
import { newId, nowIso } from "../domain/ids";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { HypothesisId, InvestigationId } from "../domain/notebook";
import { writeTransaction } from "../store/control-store";
import { countTrials, getExperiment, insertExperiment, insertTrials, listExperimentRows, listTrials, listTrialsAfter, patchExperiment } from "../store/experiments";
import { hypothesisNotFound } from "../store/hypotheses";
import { getInvestigation } from "../store/investigations";
import { ACTIVE_STATES, createOperation, getOperation, idempotencyConflict, Operation, OperationState, operationIntent } from "../store/operations";
import type { Workspace } from "../store/workspace";
import { authorFor } from "./notebook-rules";
import { reconcileOperations } from "./operations";
import { keysetPage } from "./pagination";
import { defineService, parseServiceInput } from "./service";

/**
 * Experiments: variants of declared workloads run as randomized complete blocks of trials under
 * one adapter, through the worker pool as one operation; the paired analysis
 * (analysis/experiments/analyze.ts) is stored with the experiment once every trial ran.
 * Planned like a capture: a reviewable plan (every trial's command line) and a single-use token.
 */

/** Default primary metric per adapter; others name theirs. */
const DEFAULT_METRIC: Record<string, string> = { measure: "wall_ns", callgrind: "instructions" };
/** Adapters that repeat by themselves run once per trial: the experiment does the repeating. */
const ONE_RUN_PER_TRIAL = { repeat: 1, warmup: 0 };

const ExperimentId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^exp_[0-9a-z]+$/, "expected an id starting exp_");

/** The state an experiment is in now: a `running` one whose operation ended was interrupted (or cancelled). */
function effectiveState(ws: Workspace, experiment: Experiment): ExperimentState {
  if (experiment.state !== "running" || !experiment.operation_id) return experiment.state;
  const op = getOperation(ws.db, experiment.operation_id);
  if (ACTIVE_STATES.includes(op.state)) return "running";
  return op.state === "cancelled" ? "cancelled" : op.state === "succeeded" ? "completed" : "interrupted";
}

function current(ws: Workspace, id: string): Experiment {
  const experiment = getExperiment(ws.db, id);
  return { ...experiment, state: effectiveState(ws, experiment) };
}

/** Each variant's capture intent, resolved against the declarations and machine of now. */
async function resolveVariants(ws: Workspace, design: ExperimentDesign): Promise<ExperimentJob["variants"]> {
  const resolved: ExperimentJob["variants"] = {};
  for (const v of design.variants) {
    resolved[v.name] = await resolveIntent(ws, { adapter: design.adapter, workload: v.workload, parameters: v.parameters, options: design.options }).catch((error: unknown) => {
      throw error instanceof EmberscopeError && error.details.argument ? new EmberscopeError(error.code, `Variant ${v.name}: ${error.message}`, { details: { ...error.details, variant: v.name }, recovery: error.recovery }) : error;
    });
  }
  return resolved;
}

function jobDigest(experimentId: string, variants: ExperimentJob["variants"]): string {
  const digests = Object.fromEntries(Object.entries(variants).map(([name, v]) => [name, v.digest]));
  return createHash("sha256").update(canonicalJson({ experiment_id: experimentId, digests })).digest("hex");
}

function staleIntent(experiment: Experiment): EmberscopeError {
  return new EmberscopeError("STALE_INTENT", "A variant's workload declaration, program or environment changed since the experiment was planned; its trials would not compare. Plan a new experiment.", {
    details: { experiment_id: experiment.experiment_id },
    recovery: { operation: "experiments.plan", arguments: planArguments(experiment), safe_to_repeat: true },
  });
}

function planArguments(e: Experiment): Record<string, unknown> {
  const d = e.design;
  return { investigation_id: e.investigation_id, title: e.title, variants: d.variants, baseline: d.baseline, adapter: d.adapter, options: d.options, metric: d.metric, polarity: d.polarity, threshold: d.threshold, confidence: d.confidence, trials: d.trials, warmups: d.warmups, seed: d.seed };
}

const PlanInput = z
  .object({
    investigation_id: InvestigationId,
    hypothesis_id: HypothesisId.optional().describe("The hypothesis the experiment tests."),
    title: z.string().trim().min(1).max(200).optional().describe("By default: the variants' names."),
    variants: z.array(VariantSpec).min(2).max(DESIGN_LIMITS.variants),
    baseline: VariantName.optional().describe("The variant the others are compared with; the first by default."),
    adapter: z.string().min(1).max(64).default("measure").describe("measure (wall/cpu/RSS), callgrind (instruction counts), or any adapter whose run yields the metric."),
    options: z.record(z.string(), z.union([z.string().max(4096), z.number(), z.boolean()])).default({}).describe("Adapter options of every trial."),
    metric: z.string().min(1).max(128).optional().describe("Primary metric: wall_ns (measure's default), cpu_ns, user_ns, max_rss_bytes, instructions (callgrind's default), …"),
    polarity: Polarity.default("lower_is_better"),
    threshold: z.number().gt(0).lt(1).default(0.02).describe("The smallest change that matters, as a fraction (0.02: 2 %)."),
    confidence: z.number().gt(0.5).lt(1).default(0.95),
    trials: z.number().int().min(2).max(200).default(10).describe("Measured trials per variant (blocks)."),
    warmups: z.number().int().min(0).max(DESIGN_LIMITS.warmups).default(1).describe("Warm-up blocks, run first and discarded."),
    seed: z.number().int().min(0).max(2 ** 31 - 1).optional().describe("Seeds the run order and the bootstrap; drawn at random by default (and kept)."),
  })
  .strict();

const PlannedTrial = Trial.pick({ index: true, block: true, order: true, variant: true, warmup: true }).extend({ argv: z.array(z.string()).describe("The workload's command line (the adapter wraps it, as captures show).") });

export const planExperiment = defineService({
  name: "experiments.plan",
  summary: "Plan an experiment: variants of declared workloads, adapter, metric and design, resolved into a reviewable plan (every trial's command line in run order) with a public plan_id and a secret single-use plan_token (10 minutes).",
  kind: "mutation",
  input: PlanInput,
  output: z.object({
    plan_id: z.string(),
    plan_token: z.string(),
    expires_at: z.string(),
    experiment: Experiment,
    plan: z.object({ variants: z.record(z.string(), z.record(z.string(), z.unknown())).describe("Each variant's resolved capture intent."), trials: z.array(PlannedTrial) }),
  }),
  handler: async (input, { ws, ctx }) => {
    const investigation = getInvestigation(ws.db, input.investigation_id);
    if (input.hypothesis_id) {
      const row = ws.db.prepare("SELECT investigation_id FROM hypotheses WHERE id = ?").get(input.hypothesis_id) as { investigation_id: string } | undefined;
      if (row?.investigation_id !== investigation.investigation_id) throw hypothesisNotFound(input.hypothesis_id, investigation.investigation_id);
    }
    const names = input.variants.map((v) => v.name);
    const baseline = input.baseline ?? names[0];
    if (!names.includes(baseline)) throw new EmberscopeError("INVALID_ARGUMENTS", "The baseline is not one of the variants.", { details: { argument: "baseline", variants: names } });
    const adapter = adapterNamed(input.adapter);
    const metric = input.metric ?? DEFAULT_METRIC[adapter.name];
    if (!metric) throw new EmberscopeError("INVALID_ARGUMENTS", `Name the primary metric for the ${adapter.name} adapter.`, { details: { argument: "metric" } });
    const { limits } = loadProjectConfig(ws.layout.projectRoot);
    if (input.trials > limits.measure_repeat_max) {
      throw new EmberscopeError("POLICY_DENIED", `At most ${limits.measure_repeat_max} measured trials per variant are allowed (limits.measure_repeat_max in emberscope.toml).`, {
        details: { argument: "trials", max: limits.measure_repeat_max },
      });
    }
    const defaults = Object.fromEntries(Object.entries(ONE_RUN_PER_TRIAL).filter(([name]) => name in adapter.options));
    const design: ExperimentDesign = {
      variants: input.variants,
      baseline,
      adapter: adapter.name,
      options: { ...defaults, ...input.options },
      metric,
      polarity: input.polarity,
      estimand: "median_paired_log_ratio",
      threshold: input.threshold,
      confidence: input.confidence,
      trials: input.trials,
      warmups: input.warmups,
      seed: input.seed ?? randomInt(2 ** 31 - 1),
    };
    let planned;
    try {
      planned = randomizedBlocks({ variants: names, blocks: design.trials, warmups: design.warmups, seed: design.seed });
    } catch (error) {
      if (error instanceof DesignError) throw new EmberscopeError("INVALID_ARGUMENTS", `Invalid design: ${error.message}.`, { details: { argument: error.argument } });
      throw error;
    }
    const variants = await resolveVariants(ws, design);
    const now = nowIso();
    const experiment: Experiment = {
      experiment_id: newId("exp"),
      investigation_id: investigation.investigation_id,
      hypothesis_id: input.hypothesis_id ?? null,
      title: input.title ?? names.join(" vs "),
      design,
      state: "planned",
      operation_id: null,
      analysis: null,
      commit_id: null,
      created_by: authorFor(ctx),
      revision: 1,
      created_at: now,
      updated_at: now,
    };
    const job: ExperimentJob = { experiment_id: experiment.experiment_id, variants };
    const plan = writeTransaction(ws.db, () => {
      insertExperiment(ws.db, experiment);
      insertTrials(ws.db, experiment.experiment_id, planned);
      return storePlanOf(ws, "experiment", job, jobDigest(experiment.experiment_id, variants));
    });
    return {
      ...plan,
      experiment,
      plan: {
        variants: Object.fromEntries(Object.entries(variants).map(([name, v]) => [name, v.intent as unknown as Record<string, unknown>])),
        trials: planned.map((t) => ({ index: t.index, block: t.block, order: t.order, variant: t.variant, warmup: t.warmup, argv: variants[t.variant].intent.argv })),
      },
    };
  },
});

const Started = z.object({
  experiment_id: z.string(),
  operation_id: z.string(),
  status: OperationState,
  reconnected: z.boolean(),
  worker_started: z.boolean(),
});

/** Queues the experiment operation (or finds the one this idempotency key made) and makes sure a pool worker runs it. */
function startOperation(ws: Workspace, experiment: Experiment, job: ExperimentJob, digest: string, idempotency: { scope: string; key: string }, planId: string | null): z.infer<typeof Started> {
  const { operation, created } = writeTransaction(ws.db, () => {
    const made = createOperation(ws.db, { kind: "experiment", intent: job, intentDigest: digest, runId: null, state: "queued", idempotency });
    if (made.created) {
      patchExperiment(ws.db, experiment.experiment_id, { state: "running", operation_id: made.operation.operation_id });
      if (planId) linkPlanOperation(ws, planId, made.operation.operation_id);
    }
    return made;
  });
  const worker = operation.state === "queued" ? ensureWorker(ws) : { started: false };
  return { experiment_id: experiment.experiment_id, operation_id: operation.operation_id, status: operation.state, reconnected: !created, worker_started: worker.started };
}

function notResumable(experiment: Experiment, why: string): EmberscopeError {
  return new EmberscopeError("EXPERIMENT_NOT_RESUMABLE", why, {
    details: { experiment_id: experiment.experiment_id, state: experiment.state, operation_id: experiment.operation_id },
    recovery: { operation: "experiments.get", arguments: { experiment_id: experiment.experiment_id }, safe_to_repeat: true },
  });
}

export const runExperiment = defineService({
  name: "experiments.run",
  summary: "Run a planned experiment with its single-use plan_token: one durable operation (kind experiment, progress in trials) that the worker pool runs; the same idempotency_key reconnects.",
  kind: "mutation",
  input: z.object({ plan_token: z.string().min(8).max(256), expected_plan_id: z.string().min(1).max(128).optional(), idempotency_key: z.string().min(1).max(200) }).strict(),
  output: Started,
  handler: async (input, { ws }) => {
    const scope = "experiments.run";
    const known = ws.db.prepare("SELECT operation_id, intent_digest FROM idempotency_keys WHERE scope = ? AND key = ?").get(scope, input.idempotency_key) as { operation_id: string; intent_digest: string } | undefined;
    if (known) {
      // Checked before the token is consumed: a key already used for another plan must not use up this one.
      if (peekPlan(ws, "experiment", input.plan_token)?.digest !== known.intent_digest) throw idempotencyConflict(input.idempotency_key, known.operation_id);
      const job = operationIntent<ExperimentJob>(ws.db, known.operation_id);
      return startOperation(ws, getExperiment(ws.db, job.experiment_id), job, known.intent_digest, { scope, key: input.idempotency_key }, null);
    }
    const plan = consumePlanOf<ExperimentJob>(ws, "experiment", input.plan_token, input.expected_plan_id, (job) => ({ operation: "experiments.plan", arguments: planArguments(getExperiment(ws.db, job.experiment_id)), safe_to_repeat: true }));
    const experiment = getExperiment(ws.db, plan.intent.experiment_id);
    if (experiment.state !== "planned") throw notResumable(experiment, "The experiment already ran; resume it instead.");
    const now = await resolveVariants(ws, experiment.design).catch(() => null);
    if (!now || jobDigest(experiment.experiment_id, now) !== plan.digest) throw staleIntent(experiment);
    return startOperation(ws, experiment, plan.intent, plan.digest, { scope, key: input.idempotency_key }, plan.planId);
  },
});

/**
 * MCP's run_experiment: planning and starting in one tool, in two calls as run_workflow does.
 * Without plan_token it plans (experiments.plan: the design's arguments); with it, it starts that
 * plan (experiments.run). The CLI keeps the two commands.
 */
export const planOrRunExperiment = defineService({
  name: "experiments.plan_or_run",
  summary: "Plan an experiment (no plan_token: the design's arguments, returning the plan and its single-use plan_token) or start the plan a plan_token names (with an idempotency_key), as one durable operation the worker pool runs.",
  kind: "mutation",
  input: PlanInput.partial()
    .extend({
      plan_token: z.string().min(8).max(256).optional().describe("The token a plan returned: starts that plan (with idempotency_key; no design arguments)."),
      expected_plan_id: z.string().min(1).max(128).optional(),
      idempotency_key: z.string().min(1).max(200).optional().describe("Needed to start: the same key and token reconnect to the operation they started."),
    })
    .strict(),
  output: z.object({ planned: planExperiment.output.nullable().describe("The plan, when this call planned."), started: Started.nullable().describe("The operation, when this call started a plan.") }),
  handler: async (input, env) => {
    const { plan_token, expected_plan_id, idempotency_key, ...design } = input;
    if (plan_token === undefined) return { planned: await planExperiment.handler(parseServiceInput(planExperiment, design), env), started: null };
    const mixed = (["investigation_id", "variants"] as const).find((name) => design[name] !== undefined);
    if (mixed) throw new EmberscopeError("INVALID_ARGUMENTS", "A plan_token starts the plan it was given for: pass it without a design.", { details: { argument: mixed } });
    if (idempotency_key === undefined) throw new EmberscopeError("INVALID_ARGUMENTS", "Starting a plan needs an idempotency_key (the same key reconnects to the operation it started).", { details: { argument: "idempotency_key" } });
    return { planned: null, started: await runExperiment.handler({ plan_token, expected_plan_id, idempotency_key }, env) };
  },
});

export const resumeExperiment = defineService({
  name: "experiments.resume",
  summary: "Continue an interrupted or cancelled experiment: a new operation runs only its missing trials (finished ones are kept); the same idempotency_key reconnects.",
  kind: "mutation",
  input: z.object({ experiment_id: ExperimentId, idempotency_key: z.string().min(1).max(200).optional() }).strict(),
  output: Started,
  handler: async (input, { ws }) => {
    reconcileOperations(ws);
    const experiment = current(ws, input.experiment_id);
    if (!["interrupted", "cancelled", "failed"].includes(experiment.state)) {
      throw notResumable(experiment, experiment.state === "planned" ? "The experiment never started; run it with its plan token." : `The experiment is ${experiment.state}; there is nothing to resume.`);
    }
    const previous = operationIntent<ExperimentJob>(ws.db, experiment.operation_id!);
    const variants = await resolveVariants(ws, experiment.design).catch(() => null);
    const digest = jobDigest(experiment.experiment_id, previous.variants);
    if (!variants || jobDigest(experiment.experiment_id, variants) !== digest) throw staleIntent(experiment);
    const key = input.idempotency_key ?? `resume-${experiment.operation_id}`;
    return startOperation(ws, experiment, previous, digest, { scope: "experiments.resume", key }, null);
  },
});

const Counts = z.object({ total: z.number().int(), ok: z.number().int(), failed: z.number().int(), pending: z.number().int() });

export const showExperiment = defineService({
  name: "experiments.get",
  summary: "Show an experiment: design, state, every trial (block, order, run, value or failure), its operation's progress and, once run, the analysis (per-variant summaries, ratio with CI and decision, warnings).",
  kind: "query",
  input: z.object({ experiment_id: ExperimentId }).strict(),
  output: z.object({ experiment: Experiment, trials: z.array(Trial), counts: Counts, operation: Operation.nullable() }),
  handler: (input, { ws }) => {
    reconcileOperations(ws);
    const experiment = current(ws, input.experiment_id);
    const trials = listTrials(ws.db, experiment.experiment_id);
    const count = (outcome: Trial["outcome"]) => trials.filter((t) => t.outcome === outcome).length;
    return {
      experiment,
      trials,
      counts: { total: trials.length, ok: count("ok"), failed: count("failed"), pending: count("pending") },
      operation: experiment.operation_id ? getOperation(ws.db, experiment.operation_id) : null,
    };
  },
});

export const listExperiments = defineService({
  name: "experiments.list",
  summary: "List experiments, newest first, of one investigation or all.",
  kind: "query",
  input: z.object({ investigation_id: InvestigationId.optional(), limit: Limit, cursor: CursorArg }).strict(),
  output: pageOf(Experiment),
  handler: (input, { ws }) => {
    if (input.investigation_id) getInvestigation(ws.db, input.investigation_id);
    const filters = { investigation_id: input.investigation_id };
    return keysetPage({
      ws,
      binding: { query: "experiments.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "experiments.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listExperimentRows(ws.db, filters, after, limit).map((e) => ({ ...e, state: effectiveState(ws, e) })),
      keyOf: (e): [string, string] => [e.created_at, e.experiment_id],
    });
  },
});

const ComparisonSummary = ExperimentAnalysis.shape.comparisons.element.omit({ deltas: true });
const VariantSummary = ExperimentAnalysis.shape.variants.element.omit({ values: true });

export const summarizeExperiment = defineService({
  name: "experiments.summary",
  summary:
    "An experiment in bounded form: design and state, the operation's progress in trials, trial counts, and once analysed each comparison's decision, ratio and CI (with the blocks the CI would need), each variant's median, MAD, min, max, drift and outliers, and the warnings — without the per-trial values; trials a page at a time (pass next_cursor back as cursor).",
  kind: "query",
  input: z.object({ experiment_id: ExperimentId, limit: z.number().int().min(1).max(200).default(20).describe("Trials per page (in run order)."), cursor: CursorArg }).strict(),
  output: z.object({
    experiment: Experiment.omit({ analysis: true }),
    progress: z.object({ state: OperationState, completed: z.number().int(), total: z.number().int() }).nullable().describe("The operation running (or that last ran) the trials."),
    counts: Counts,
    result: ExperimentAnalysis.pick({ method: true, confidence: true, threshold: true, polarity: true, resamples: true, failed_trials: true, warmups_discarded: true, warnings: true })
      .extend({ comparisons: z.array(ComparisonSummary), variants: z.array(VariantSummary) })
      .nullable()
      .describe("Null until every trial ran."),
    trials: z.array(Trial),
    next_cursor: z.string().nullable(),
  }),
  handler: (input, { ws }) => {
    reconcileOperations(ws);
    const { analysis, ...experiment } = current(ws, input.experiment_id);
    const counts = countTrials(ws.db, experiment.experiment_id);
    const operation = experiment.operation_id ? getOperation(ws.db, experiment.operation_id) : null;
    const page = keysetPage({
      ws,
      binding: { query: "experiments.summary", filters: { experiment_id: experiment.experiment_id }, order: "trial_index", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "experiments.summary", arguments: { experiment_id: experiment.experiment_id, limit: input.limit } },
      fetch: (after: [number] | null, limit) => listTrialsAfter(ws.db, experiment.experiment_id, after?.[0] ?? -1, limit),
      keyOf: (t): [number] => [t.index],
    });
    return {
      experiment,
      progress: operation ? { state: operation.state, completed: operation.progress.completed ?? 0, total: operation.progress.total ?? counts.total } : null,
      counts,
      result: analysis
        ? {
            method: analysis.method,
            confidence: analysis.confidence,
            threshold: analysis.threshold,
            polarity: analysis.polarity,
            resamples: analysis.resamples,
            failed_trials: analysis.failed_trials,
            warmups_discarded: analysis.warmups_discarded,
            warnings: analysis.warnings,
            comparisons: analysis.comparisons.map(({ deltas: _deltas, ...c }) => c),
            variants: analysis.variants.map(({ values: _values, ...v }) => v),
          }
        : null,
      trials: page.items,
      next_cursor: page.next_cursor,
    };
  },
});
