// `npm run bench -- experiments`: the statistics of experiments on this machine, proven by running
// them (issue 23): false positives of A/A experiments, power against a known 5 % slowdown under
// `measure` and under `callgrind`, and a side by side with hyperfine under a growing background load.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { analyzeExperiment } from "../../analysis/experiments/analyze";
import { trialMetric } from "../../server/capture/trial-metric";
import type { ExperimentAnalysis } from "../../server/domain/experiment";
import { callService, createInvestigation, listCapabilities, planExperiment, runExperiment, showExperiment, showOperation, type ServiceContext } from "../../server/services";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { REPO_ROOT } from "../helpers/cli";
import { summarize } from "./stats";

/*
 * Sizes (env vars shrink or grow them; the defaults finish in about 15 minutes here):
 *   EMBERSCOPE_BENCH_EXPERIMENTS          experiments per set (A/A, 5 % measure, 5 % callgrind), default 20
 *   EMBERSCOPE_BENCH_EXPERIMENT_TRIALS    trials per variant of the measure sets, default 6 (+1 warm-up block)
 *   EMBERSCOPE_BENCH_EXPERIMENT_ROUNDS    rounds of experiment-work of the measure sets' base variant, default 60000 (~85 ms)
 *   EMBERSCOPE_BENCH_DRIFT_TRIALS         trials (and hyperfine runs) per variant under drift, default 12
 *
 * The workload is test/fixtures/experiment-work.c (work linear in its rounds): the "5 % slower"
 * variant runs 5 % more rounds. The truth of a ratio is read without Emberscope: valgrind's own
 * instruction totals (its `summary:` line) and hyperfine's wall times on the quiet machine.
 */

const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const EXPERIMENTS = env("EMBERSCOPE_BENCH_EXPERIMENTS", 20);
const TRIALS = env("EMBERSCOPE_BENCH_EXPERIMENT_TRIALS", 6);
const ROUNDS = env("EMBERSCOPE_BENCH_EXPERIMENT_ROUNDS", 60_000);
const DRIFT_TRIALS = env("EMBERSCOPE_BENCH_DRIFT_TRIALS", 12);
const CALLGRIND_ROUNDS = 2000;
const SLOWER = 1.05;

const WORKLOAD = `
[workloads.work]
description = "A fixed amount of integer work (test/fixtures/experiment-work.c)."
argv = ["./experiment-work", "{rounds}"]
timeout = 120
[workloads.work.parameters.rounds]
type = "integer"
default = 1000
`;

const round4 = (x: number | null) => (x === null ? null : Math.round(x * 10_000) / 10_000);

function project(): { root: string; ctx: ServiceContext } {
  const root = mkdtempSync(path.join(tmpdir(), "emberscope-bench-experiments-"));
  cpSync(path.join(REPO_ROOT, "examples", "demo"), root, { recursive: true, filter: (src) => !src.includes(".emberscope") });
  appendFileSync(path.join(root, "emberscope.toml"), WORKLOAD);
  copyFileSync(path.join(REPO_ROOT, "test", "fixtures", "experiment-work.c"), path.join(root, "experiment-work.c"));
  const cc = spawnSync("cc", ["-O1", "-o", path.join(root, "experiment-work"), path.join(root, "experiment-work.c")], { encoding: "utf8" });
  if (cc.status !== 0) throw new Error(`cc failed: ${cc.stderr}`);
  initWorkspace(root).close();
  return { root, ctx: { locator: { cwd: root, projectRoot: root }, actor: "test" } };
}

interface Done {
  analysis: ExperimentAnalysis;
  seconds: number;
  /** The same trials analysed on another metric of their runs (measure records wall and CPU time). */
  also?: { metric: string; analysis: ReturnType<typeof analyzeExperiment> };
}

/** Plans and runs one experiment of two variants of `work` through the pool, to its end. */
async function experiment(ctx: ServiceContext, investigationId: string, design: { rounds: [number, number]; adapter: string; metric: string; trials: number; warmups: number; seed: number; alsoMetric?: string }): Promise<Done> {
  const start = performance.now();
  const plan = await callService(planExperiment, ctx, {
    investigation_id: investigationId,
    variants: [
      { name: "a", workload: "work", parameters: { rounds: design.rounds[0] } },
      { name: "b", workload: "work", parameters: { rounds: design.rounds[1] } },
    ],
    adapter: design.adapter,
    metric: design.metric,
    trials: design.trials,
    warmups: design.warmups,
    seed: design.seed,
  });
  const started = await callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: `bench-${plan.plan_id}` });
  for (;;) {
    const op = await callService(showOperation, ctx, { operation_id: started.operation_id });
    if (["succeeded", "failed", "cancelled"].includes(op.state)) {
      if (op.state !== "succeeded") throw new Error(`experiment operation ${op.state}: ${JSON.stringify(op.error)}`);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const shown = await callService(showExperiment, ctx, { experiment_id: started.experiment_id });
  const done: Done = { analysis: shown.experiment.analysis!, seconds: (performance.now() - start) / 1000 };
  if (design.alsoMetric) {
    const ws = openWorkspace(ctx.locator);
    try {
      const trials = [];
      for (const t of shown.trials) {
        const value = t.outcome === "ok" && t.run_id ? await trialMetric(ws, t.run_id, shown.experiment.commit_id!, design.alsoMetric) : null;
        trials.push({ index: t.index, block: t.block, variant: t.variant, warmup: t.warmup, value });
      }
      const d = shown.experiment.design;
      done.also = { metric: design.alsoMetric, analysis: analyzeExperiment({ trials, baseline: "a", polarity: d.polarity, threshold: d.threshold, confidence: d.confidence, seed: d.seed }) };
    } finally {
      ws.close();
    }
  }
  return done;
}

function decisions(list: { decision: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of list) counts[c.decision] = (counts[c.decision] ?? 0) + 1;
  return counts;
}

function setFigures(results: { analysis: { comparisons: ExperimentAnalysis["comparisons"] } }[]) {
  const comparisons = results.map((r) => r.analysis.comparisons[0]);
  const meaningful = comparisons.filter((c) => c.decision === "meaningful_improvement" || c.decision === "meaningful_regression").length;
  const needed = comparisons.map((c) => c.blocks_needed).filter((n): n is number => n !== null);
  const ratios = comparisons.map((c) => c.ratio!).filter((r) => r !== null);
  return {
    decisions: decisions(comparisons),
    meaningful,
    detected_regression: comparisons.filter((c) => c.decision === "meaningful_regression").length,
    ratio: ratios.length ? { median: round4(summarize(ratios).p50), min: round4(Math.min(...ratios)), max: round4(Math.max(...ratios)) } : null,
    ci_width_median: round4(summarize(comparisons.filter((c) => c.ci).map((c) => c.ci![1] / c.ci![0] - 1)).p50),
    blocks_needed: needed.length ? { median: summarize(needed).p50, max: Math.max(...needed), of: needed.length } : null,
  };
}

/** valgrind's own instruction total for one run (its `summary:` line), with a minimal environment as a capture's child has. */
function valgrindInstructions(root: string, rounds: number): number {
  const out = path.join(root, `truth-${rounds}.callgrind`);
  const run = spawnSync("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, "./experiment-work", String(rounds)], { cwd: root, encoding: "utf8", env: { PATH: process.env.PATH } as unknown as NodeJS.ProcessEnv });
  if (run.status !== 0) throw new Error(`valgrind failed: ${run.stderr}`);
  return Number(readFileSync(out, "utf8").split("\n").find((l) => l.startsWith("summary:"))!.slice(8).trim());
}

/** hyperfine on the two variants, as it runs them: all of A, then all of B. Its median wall times. */
function hyperfine(root: string, rounds: [number, number], runs: number): { ratio_of_medians: number; ratio_of_means: number; seconds: number; medians_s: [number, number] } {
  const out = path.join(root, `hyperfine-${Date.now()}.json`);
  const start = performance.now();
  const run = spawnSync("hyperfine", ["--warmup", "1", "--runs", String(runs), "--shell=none", "--export-json", out, `./experiment-work ${rounds[0]}`, `./experiment-work ${rounds[1]}`], { cwd: root, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`hyperfine failed: ${run.stderr}`);
  const results = (JSON.parse(readFileSync(out, "utf8")) as { results: { median: number; mean: number }[] }).results;
  return { ratio_of_medians: results[1].median / results[0].median, ratio_of_means: results[1].mean / results[0].mean, seconds: (performance.now() - start) / 1000, medians_s: [results[0].median, results[1].median] };
}

/**
 * A background load whose busy fraction grows linearly from 0 to `peak` over `seconds` (then
 * stays): a node child alternating spin and sleep in 50 ms periods, on the same CPU as the
 * workloads (affinity inherited), so the machine slows down steadily while a tool runs.
 */
function rampingLoad(seconds: number, peak: number): ChildProcess {
  const script = `const t0 = Date.now(); const period = 50;
function tick() { const f = Math.min(${peak}, ${peak} * (Date.now() - t0) / ${seconds * 1000}); const end = Date.now() + f * period; while (Date.now() < end) {} setTimeout(tick, (1 - f) * period); }
tick();`;
  return spawn(process.execPath, ["-e", script], { stdio: "ignore" });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

/** Pins this process (and so every child started after: the pool worker, hyperfine, the load) to one CPU. */
function pinToOneCpu(): string | null {
  const cpu = "1";
  const pinned = spawnSync("taskset", ["-cp", cpu, String(process.pid)], { encoding: "utf8" });
  return pinned.status === 0 ? cpu : null;
}

/**
 * The statistics of experiments proven by running them (issue 23): false positives of A/A
 * experiments under `measure`, power against a known 5 % slowdown under `measure` and under
 * `callgrind`, and hyperfine side by side with the interleaved design on one CPU while a background
 * load ramps up (each ratio against the truth read by hyperfine on the quiet machine and by
 * valgrind's own totals). Needs cc, valgrind, hyperfine and taskset; about 15 minutes.
 */
export async function experimentsBenchmark(): Promise<Record<string, unknown>> {
  const { root, ctx } = project();
  const roots = [root];
  try {
    const available = (await callService(listCapabilities, ctx, {})).adapters.filter((a) => a.available).map((a) => a.adapter);
    const inv = (await callService(createInvestigation, ctx, { title: "experiments benchmark" })).investigation_id;
    const slower = Math.round(ROUNDS * SLOWER);
    const log = (s: string) => process.stderr.write(`${s}\n`);

    // (a) false positives: A/A (the same variant twice) under measure.
    const aa: Done[] = [];
    for (let i = 0; i < EXPERIMENTS; i++) {
      aa.push(await experiment(ctx, inv, { rounds: [ROUNDS, ROUNDS], adapter: "measure", metric: "wall_ns", trials: TRIALS, warmups: 1, seed: 1000 + i, alsoMetric: "cpu_ns" }));
      log(`A/A ${i + 1}/${EXPERIMENTS}: ${aa[i].analysis.comparisons[0].decision} ${round4(aa[i].analysis.comparisons[0].ratio)}`);
    }
    // (b) power: a known 5 % slowdown under measure.
    const power: Done[] = [];
    for (let i = 0; i < EXPERIMENTS; i++) {
      power.push(await experiment(ctx, inv, { rounds: [ROUNDS, slower], adapter: "measure", metric: "wall_ns", trials: TRIALS, warmups: 1, seed: 2000 + i, alsoMetric: "cpu_ns" }));
      log(`5 % measure ${i + 1}/${EXPERIMENTS}: ${power[i].analysis.comparisons[0].decision} ${round4(power[i].analysis.comparisons[0].ratio)}`);
    }
    // (b') the same under callgrind: instruction counts.
    const callgrind: Done[] = [];
    let callgrindTruth: number | null = null;
    if (available.includes("callgrind")) {
      const slowerCg = Math.round(CALLGRIND_ROUNDS * SLOWER);
      callgrindTruth = valgrindInstructions(root, slowerCg) / valgrindInstructions(root, CALLGRIND_ROUNDS);
      for (let i = 0; i < EXPERIMENTS; i++) {
        callgrind.push(await experiment(ctx, inv, { rounds: [CALLGRIND_ROUNDS, slowerCg], adapter: "callgrind", metric: "instructions", trials: 3, warmups: 0, seed: 3000 + i }));
        log(`5 % callgrind ${i + 1}/${EXPERIMENTS}: ${callgrind[i].analysis.comparisons[0].decision} ${round4(callgrind[i].analysis.comparisons[0].ratio)}`);
      }
    }
    const also = (set: Done[]) => setFigures(set.map((d) => ({ analysis: d.also!.analysis as unknown as ExperimentAnalysis })));

    // (c) side by side under drift, in a fresh workspace (so its pool worker starts pinned with us).
    const drift = project();
    roots.push(drift.root);
    const driftInv = (await callService(createInvestigation, drift.ctx, { title: "drift" })).investigation_id;
    const cpu = pinToOneCpu();
    const pair: [number, number] = [ROUNDS, slower];
    const quietHyperfine = hyperfine(drift.root, pair, DRIFT_TRIALS);
    const quietOurs = await experiment(drift.ctx, driftInv, { rounds: pair, adapter: "measure", metric: "wall_ns", trials: DRIFT_TRIALS, warmups: 1, seed: 4000 });
    const instructionsTruth = available.includes("callgrind") ? valgrindInstructions(drift.root, slower) / valgrindInstructions(drift.root, ROUNDS) : null;
    // The load grows over about as long as each tool took in quiet, up to a 90 % busy competitor on the same CPU.
    let load = rampingLoad(quietHyperfine.seconds, 0.9);
    const driftHyperfine = hyperfine(drift.root, pair, DRIFT_TRIALS);
    await stop(load);
    load = rampingLoad(quietOurs.seconds, 0.9);
    const driftOurs = await experiment(drift.ctx, driftInv, { rounds: pair, adapter: "measure", metric: "wall_ns", trials: DRIFT_TRIALS, warmups: 1, seed: 4001 });
    await stop(load);
    const ours = (d: Done) => {
      const c = d.analysis.comparisons[0];
      const a = d.analysis.variants.find((v) => v.variant === "a")!;
      return { ratio: round4(c.ratio), ci: c.ci?.map(round4), decision: c.decision, drift_over_run_a: round4(a.drift_over_run), seconds: Math.round(d.seconds) };
    };
    // The truth: the work ratio as valgrind counts it (the quiet wall ratio is kept too, but "quiet" is only as quiet as the shared machine).
    const truthWall = quietHyperfine.ratio_of_medians;
    const error = (estimate: number | null) => (estimate === null ? null : { vs_instructions: instructionsTruth === null ? null : round4(estimate / instructionsTruth - 1), vs_quiet_wall: round4(estimate / truthWall - 1) });

    return {
      sizes: { experiments: EXPERIMENTS, trials_per_variant: TRIALS, warmup_blocks: 1, rounds: ROUNDS, slower_rounds: slower, callgrind_rounds: CALLGRIND_ROUNDS, callgrind_trials: 3, drift_trials: DRIFT_TRIALS, threshold: 0.02, confidence: 0.95 },
      false_positives_aa_measure: {
        goal: "≤ 1 meaningful decision of 20",
        wall_ns: setFigures(aa),
        cpu_ns_same_trials: also(aa),
        note: "measure reads GNU time's %e %U %S, which have 10 ms resolution: at ~85 ms per run wall_ns and cpu_ns are quantized in steps of ~12 % (cpu_ns A/A ratios of exactly 1)",
        seconds_per_experiment: summarize(aa.map((d) => d.seconds)).p50,
      },
      power_5pct_measure: {
        truth_instructions: callgrindTruth !== null ? round4(valgrindInstructions(root, slower) / valgrindInstructions(root, ROUNDS)) : null,
        wall_ns: setFigures(power),
        cpu_ns_same_trials: also(power),
        seconds_per_experiment: summarize(power.map((d) => d.seconds)).p50,
      },
      power_5pct_callgrind: available.includes("callgrind")
        ? { truth_instructions: round4(callgrindTruth), ...setFigures(callgrind), seconds_per_experiment: summarize(callgrind.map((d) => d.seconds)).p50 }
        : { skipped: "callgrind unavailable" },
      drift_side_by_side: {
        pinned_cpu: cpu,
        load: "a node child on the same CPU whose busy fraction grows linearly from 0 to 90 % over as long as the tool took in quiet",
        truth: { wall_ratio_quiet_hyperfine: round4(truthWall), wall_ratio_quiet_ours: round4(quietOurs.analysis.comparisons[0].ratio), instructions_ratio_callgrind: round4(instructionsTruth) },
        hyperfine_sequential: { ratio_of_medians: round4(driftHyperfine.ratio_of_medians), ratio_of_means: round4(driftHyperfine.ratio_of_means), error_vs_truth: error(driftHyperfine.ratio_of_medians), seconds: Math.round(driftHyperfine.seconds) },
        emberscope_interleaved: { ...ours(driftOurs), error_vs_truth: error(driftOurs.analysis.comparisons[0].ratio) },
        quiet: { hyperfine: { ratio_of_medians: round4(quietHyperfine.ratio_of_medians), seconds: Math.round(quietHyperfine.seconds) }, emberscope: ours(quietOurs) },
      },
    };
  } finally {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  }
}
