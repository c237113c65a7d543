import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import { callService, createInvestigation, planExperiment, resumeExperiment, runExperiment, showExperiment, showOperation, type ServiceContext } from "../../server/services";
import { demoProject, waitFor } from "../helpers/demo";

/*
 * Experiments end to end: real SQLite, the real measure adapter (GNU time), the demo workload run
 * as child processes by a detached pool worker. The primary metric is cpu_ns (user + sys): on
 * this shared 2-core machine wall time also counts the time other processes hold the cores, while
 * CPU time counts only the workload's own work, so a 30 % heavier variant stands out in few trials.
 */

const ctxFor = (root: string): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor: "test" });

async function failure(promise: Promise<unknown>): Promise<EmberscopeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EmberscopeError) return error;
    throw error;
  }
  throw new Error("expected a typed error");
}

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
  }, 300_000);
});
