import { spawnSync } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { callService, createInvestigation, listCapabilities, planExperiment, runExperiment, showExperiment, showOperation, type ServiceContext } from "../../server/services";
import { demoProject, waitFor } from "../helpers/demo";

/*
 * An experiment under callgrind: instruction counts as the primary metric, on a small native
 * program (test/fixtures/experiment-work.c) whose work grows linearly with its rounds. A variant
 * with 5 % more rounds must be a meaningful regression, every trial's count must match what
 * valgrind itself writes in its own `summary:` line, and the counts must repeat from trial to trial
 * (this is why callgrind decides with few trials on a busy machine).
 */

const ROUNDS = { base: 2000, more: 2100 };

const hasCc = spawnSync("cc", ["--version"]).status === 0;

/** valgrind's own total (with a minimal environment, as the capture's child has) for one run, read from the `summary:` line of its output file. */
function valgrindSummary(cwd: string, rounds: number): number {
  const out = path.join(cwd, `independent-${rounds}.out`);
  const run = spawnSync("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, "./experiment-work", String(rounds)], { cwd, encoding: "utf8", env: { PATH: process.env.PATH } as unknown as NodeJS.ProcessEnv });
  expect(run.status, run.stderr).toBe(0);
  const line = readFileSync(out, "utf8").split("\n").find((l) => l.startsWith("summary:"));
  return Number(line!.slice("summary:".length).trim());
}

describe("an experiment under callgrind", () => {
  it("decides a 5 % heavier native variant is a meaningful regression, from repeatable instruction counts", async (t) => {
    const root = demoProject(`[workloads.work]\nargv = ["./experiment-work", "{rounds}"]\ntimeout = 60\n[workloads.work.parameters.rounds]\ntype = "integer"\ndefault = 1000\n`);
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    const callgrind = (await callService(listCapabilities, ctx, {})).adapters.find((a) => a.adapter === "callgrind");
    if (!hasCc || !callgrind?.available) t.skip();
    copyFileSync(path.join(import.meta.dirname, "..", "fixtures", "experiment-work.c"), path.join(root, "experiment-work.c"));
    expect(spawnSync("cc", ["-O1", "-o", path.join(root, "experiment-work"), path.join(root, "experiment-work.c")]).status).toBe(0);

    const inv = await callService(createInvestigation, ctx, { title: "Do 5 % more rounds cost 5 % more instructions?" });
    const plan = await callService(planExperiment, ctx, {
      investigation_id: inv.investigation_id,
      variants: [
        { name: "base", workload: "work", parameters: { rounds: ROUNDS.base } },
        { name: "more", workload: "work", parameters: { rounds: ROUNDS.more } },
      ],
      adapter: "callgrind",
      threshold: 0.02,
      trials: 4,
      warmups: 0,
      seed: 23,
    });
    expect(plan.experiment.design.metric).toBe("instructions");
    expect(plan.plan.trials.map((t) => t.argv)).toContainEqual(["./experiment-work", "2100"]);
    const started = await callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: "callgrind" });
    const op = await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (o) => ["succeeded", "failed", "cancelled"].includes(o.state), 90_000, 250);
    expect(op.state).toBe("succeeded");
    const { experiment, counts } = await callService(showExperiment, ctx, { experiment_id: started.experiment_id });
    expect(counts).toMatchObject({ ok: 8, failed: 0 });

    const analysis = experiment.analysis!;
    const [comparison] = analysis.comparisons;
    expect(comparison.decision).toBe("meaningful_regression");
    // Against valgrind's own totals, read from its output file without Emberscope.
    const truth = { base: valgrindSummary(root, ROUNDS.base), more: valgrindSummary(root, ROUNDS.more) };
    for (const v of analysis.variants) {
      const expected = truth[v.variant as keyof typeof truth];
      // The child's environment differs from ours (the dynamic loader and libc read it at startup): a few thousand instructions.
      for (const { value } of v.values) expect(Math.abs(value / expected - 1)).toBeLessThan(1e-3);
      // Repeatable: the spread of a variant's counts is a few instructions in millions.
      expect((v.max! - v.min!) / v.median!).toBeLessThan(1e-4);
    }
    expect(comparison.ratio!).toBeCloseTo(truth.more / truth.base, 4);
    expect(comparison.ci![1] / comparison.ci![0] - 1).toBeLessThan(1e-4);
  }, 120_000);
});
