import { describe, expect, it } from "vitest";
import { assessFinding, callService, cancelOperation, createInvestigation, planExperiment, recordFinding, resumeExperiment, runExperiment, showExperiment, showOperation, type ServiceContext } from "../../server/services";
import { demoProject, waitFor } from "../helpers/demo";
import { failure } from "../helpers/failure";
import { runCli } from "../helpers/cli";

/*
 * Experiments end to end: real SQLite, the real measure adapter (GNU time), the demo workload run
 * as child processes by a detached pool worker. The primary metric is cpu_ns (user + sys): on
 * this shared 2-core machine wall time also counts the time other processes hold the cores, while
 * CPU time counts only the workload's own work, so a 30 % heavier variant stands out in few trials.
 */

const ctxFor = (root: string): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor: "test" });

const ended = (state: string) => ["succeeded", "failed", "cancelled"].includes(state);

async function runToEnd(ctx: ServiceContext, planInput: Record<string, unknown>, key: string) {
  const plan = await callService(planExperiment, ctx, planInput);
  const started = await callService(runExperiment, ctx, { plan_token: plan.plan_token, expected_plan_id: plan.plan_id, idempotency_key: key });
  await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (op) => ended(op.state), 240_000, 250);
  return { plan, started, shown: await callService(showExperiment, ctx, { experiment_id: started.experiment_id }) };
}

describe("experiments of declared workload variants", () => {
  it("a variant doing 30 % more work is a meaningful regression; a failing variant's trials are kept, excluded and counted", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const inv = await callService(createInvestigation, ctx, { title: "Is the batch mode slower?" });
    const { plan, started, shown } = await runToEnd(
      ctx,
      {
        investigation_id: inv.investigation_id,
        variants: [
          { name: "base", workload: "demo", parameters: { mode: "batch" } },
          { name: "heavy", workload: "demo", parameters: { mode: "batch-heavy" } },
          { name: "broken", workload: "fail" },
        ],
        adapter: "measure",
        metric: "cpu_ns",
        trials: 8,
        warmups: 1,
        seed: 7,
      },
      "exp-1",
    );
    // The plan shows every trial's command line in run order.
    expect(plan.plan.trials).toHaveLength(27);
    expect(plan.plan.trials[0]).toMatchObject({ index: 0, block: -1, warmup: true, argv: expect.arrayContaining(["node"]) });
    expect(plan.plan.variants.heavy).toMatchObject({ adapter: { name: "measure", options: { repeat: 1, warmup: 0 } }, workload: { parameters: { mode: "batch-heavy" } } });

    expect(shown.operation).toMatchObject({ kind: "experiment", state: "succeeded", progress: { completed: 27, total: 27 } });
    expect(shown.experiment.state).toBe("completed");
    expect(shown.counts).toEqual({ total: 27, ok: 18, failed: 9, pending: 0 });
    for (const t of shown.trials) {
      expect(t.run_id).toMatch(/^run_/);
      expect(t.block).toBeGreaterThanOrEqual(-1);
      if (t.variant === "broken") expect(t).toMatchObject({ outcome: "failed", value: null, failure: { code: "PROCESS_FAILED" } });
      else expect(t).toMatchObject({ outcome: "ok", failure: null, value: expect.any(Number) });
    }
    const analysis = shown.experiment.analysis!;
    expect(analysis.resamples).toBeGreaterThanOrEqual(10_000);
    expect(analysis.failed_trials).toBe(8);
    expect(analysis.warnings.map((w) => w.code)).toContain("FAILED_TRIALS");
    const heavy = analysis.comparisons.find((c) => c.variant === "heavy")!;
    expect(heavy).toMatchObject({ baseline: "base", pairs: 8, decision: "meaningful_regression" });
    expect(heavy.ratio!).toBeGreaterThan(1.02);
    expect(analysis.comparisons.find((c) => c.variant === "broken")).toMatchObject({ pairs: 0, excluded_blocks: 8, decision: "inconclusive" });

    // The same idempotency key with the same (consumed) token reconnects.
    const again = await callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: "exp-1" });
    expect(again).toMatchObject({ operation_id: started.operation_id, reconnected: true });
    expect((await failure(callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: "exp-2" }))).code).toBe("PLAN_CONSUMED");
    // The key of that run, with another plan, is refused before the other plan's token is used up.
    const other = await callService(planExperiment, ctx, { investigation_id: inv.investigation_id, variants: [{ name: "x", workload: "fail" }, { name: "y", workload: "fail" }], trials: 2, warmups: 0 });
    expect((await failure(callService(runExperiment, ctx, { plan_token: other.plan_token, idempotency_key: "exp-1" }))).code).toBe("IDEMPOTENCY_CONFLICT");
    const otherRun = await callService(runExperiment, ctx, { plan_token: other.plan_token, idempotency_key: "exp-3" });
    expect(otherRun).toMatchObject({ experiment_id: other.experiment.experiment_id, reconnected: false });
    await waitFor(() => callService(showOperation, ctx, { operation_id: otherRun.operation_id }), (op) => ended(op.state), 120_000, 250);

    // A regression finding citing it as `supports` can be supported.
    const cited = { relation: "supports", target: { kind: "experiment", experiment_id: started.experiment_id, commit_id: shown.experiment.commit_id } };
    const { finding } = await callService(recordFinding, ctx, { investigation_id: inv.investigation_id, title: "batch-heavy is slower", claim: "batch-heavy costs more CPU than batch.", kind: "regression", evidence_level: "derived", references: [cited] });
    expect((await callService(assessFinding, ctx, { finding_id: finding.finding_id, expected_revision: 1, assessment: "supported" })).assessment).toBe("supported");
    // …but not as an improvement: the decision is in the other direction.
    const wrongWay = await failure(callService(recordFinding, ctx, { investigation_id: inv.investigation_id, title: "faster?", claim: "batch-heavy is faster.", kind: "improvement", evidence_level: "derived", assessment: "supported", references: [cited] }));
    expect(wrongWay.toDocument()).toMatchObject({ code: "FINDING_UNSUPPORTED", details: { experiment_id: started.experiment_id, accepted: ["meaningful_improvement"] } });
  }, 300_000);

  it("an A/A experiment (planned, run and shown through the CLI) finds no meaningful change, and a finding citing it cannot be supported", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const inv = await callService(createInvestigation, ctx, { title: "A/A" });
    const cli = (args: string[]) => runCli([...args, "--json"], { cwd: root });
    const plan = await cli(["experiments", "plan", "--investigation", inv.investigation_id, "--variant", "a=demo,mode=batch", "--variant", "b=demo,mode=batch", "--metric", "cpu_ns", "--trials", "6", "--warmups", "0", "--seed", "11"]);
    expect(plan.code).toBe(0);
    expect(plan.json.plan.trials).toHaveLength(12);
    const run = await cli(["experiments", "run", "--plan-token", plan.json.plan_token, "--expected-plan-id", plan.json.plan_id, "--idempotency-key", "aa"]);
    expect(run.json).toMatchObject({ experiment_id: plan.json.experiment.experiment_id, status: "queued" });
    await waitFor(() => callService(showOperation, ctx, { operation_id: run.json.operation_id }), (op) => ended(op.state), 240_000, 250);
    const shown = (await cli(["experiments", "show", run.json.experiment_id])).json;
    expect(shown.counts).toMatchObject({ total: 12, ok: 12 });
    const decision = shown.experiment.analysis.comparisons[0].decision;
    expect(["no_meaningful_difference", "inconclusive"]).toContain(decision);
    const refused = await failure(
      callService(recordFinding, ctx, {
        investigation_id: inv.investigation_id,
        title: "b differs",
        claim: "b is slower than a.",
        kind: "regression",
        evidence_level: "derived",
        assessment: "supported",
        references: [{ relation: "supports", target: { kind: "experiment", experiment_id: run.json.experiment_id, commit_id: shown.experiment.commit_id } }],
      }),
    );
    expect(refused.toDocument()).toMatchObject({ code: "FINDING_UNSUPPORTED", details: { decisions: [{ variant: "b", baseline: "a", decision }] } });
  }, 300_000);

  it("a worker killed mid-experiment: the operation is not left running, finished trials stay, and resume runs only the missing ones", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const inv = await callService(createInvestigation, ctx, { title: "crash" });
    const plan = await callService(planExperiment, ctx, { investigation_id: inv.investigation_id, variants: [{ name: "a", workload: "demo", parameters: { mode: "batch" } }, { name: "b", workload: "demo", parameters: { mode: "batch-heavy" } }], metric: "cpu_ns", trials: 3, warmups: 0, seed: 3 });
    const started = await callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: "crash" });
    const running = await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (op) => (op.progress.completed ?? 0) >= 2 || ended(op.state), 120_000, 50);
    expect(running.state).toBe("running");
    process.kill(running.worker!.pid!, "SIGKILL");

    const after = await waitFor(() => callService(showExperiment, ctx, { experiment_id: started.experiment_id }), (e) => e.operation?.state !== "running", 30_000);
    expect(after.experiment.state).toBe("interrupted");
    expect(after.operation).toMatchObject({ state: "failed", error: { code: "INTERRUPTED", recovery: { operation: "experiments.resume", arguments: { experiment_id: started.experiment_id } } } });
    const finished = after.trials.filter((t) => t.outcome !== "pending");
    expect(finished.length).toBeGreaterThanOrEqual(2);
    expect(after.counts.pending).toBeGreaterThan(0);

    const resumed = await callService(resumeExperiment, ctx, { experiment_id: started.experiment_id, idempotency_key: "resume-1" });
    expect(resumed).toMatchObject({ experiment_id: started.experiment_id, reconnected: false });
    expect(resumed.operation_id).not.toBe(started.operation_id);
    await waitFor(() => callService(showOperation, ctx, { operation_id: resumed.operation_id }), (op) => ended(op.state), 120_000, 250);
    const done = await callService(showExperiment, ctx, { experiment_id: started.experiment_id });
    expect(done.experiment.state).toBe("completed");
    expect(done.counts).toMatchObject({ total: 6, ok: 6, pending: 0 });
    for (const t of finished) expect(done.trials[t.index]).toEqual(t);
    expect(done.experiment.analysis!.comparisons[0].pairs).toBe(3);
    expect((await failure(callService(resumeExperiment, ctx, { experiment_id: started.experiment_id }))).toDocument()).toMatchObject({ code: "EXPERIMENT_NOT_RESUMABLE", details: { state: "completed" } });
  }, 300_000);

  it("cancel stops the experiment and the trial running; its finished trials are kept and resume completes it", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const inv = await callService(createInvestigation, ctx, { title: "cancel" });
    const plan = await callService(planExperiment, ctx, { investigation_id: inv.investigation_id, variants: [{ name: "a", workload: "demo", parameters: { mode: "batch" } }, { name: "b", workload: "demo", parameters: { mode: "batch-heavy" } }], metric: "cpu_ns", trials: 2, warmups: 0, seed: 5 });
    const started = await callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: "c" });
    await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (op) => (op.progress.completed ?? 0) >= 1 || ended(op.state), 120_000, 50);
    expect(["cancelling", "cancelled"]).toContain((await callService(cancelOperation, ctx, { operation_id: started.operation_id })).state);
    const cancelled = await waitFor(() => callService(showExperiment, ctx, { experiment_id: started.experiment_id }), (e) => e.operation?.state === "cancelled", 30_000);
    expect(cancelled.experiment.state).toBe("cancelled");
    expect(cancelled.operation!.error).toMatchObject({ code: "CANCELLED", recovery: { operation: "experiments.resume" } });
    expect(cancelled.counts.ok).toBeGreaterThanOrEqual(1);
    expect(cancelled.counts.pending).toBeGreaterThan(0);

    const resumed = await callService(resumeExperiment, ctx, { experiment_id: started.experiment_id });
    await waitFor(() => callService(showOperation, ctx, { operation_id: resumed.operation_id }), (op) => ended(op.state), 120_000, 250);
    const done = await callService(showExperiment, ctx, { experiment_id: started.experiment_id });
    expect(done).toMatchObject({ experiment: { state: "completed" }, counts: { total: 4, ok: 4, pending: 0 } });
  }, 300_000);
});
