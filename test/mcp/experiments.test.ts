import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { releaseHeldWorkspaces } from "../../server/mcp/held-workspace";
import { callService, createInvestigation, planCapture, type ServiceContext } from "../../server/services";
import { demoProject, waitFor } from "../helpers/demo";
import { memoryClient, type AgentClient } from "./clients";

/*
 * Experiments through the real MCP SDK client: an agent plans one (every trial's command line in
 * block order, a plan token), runs it with the token (the pool runs the trials as real captures of
 * the demo workload under `measure`), follows its operation and reads the bounded result; bad
 * tokens and the person's policy in emberscope.toml are typed refusals.
 */

const VARIANTS = [
  { name: "base", workload: "demo", parameters: { mode: "batch" } },
  { name: "heavy", workload: "demo", parameters: { mode: "batch-heavy" } },
];

describe("experiments over MCP (real SDK client)", () => {
  let root: string;
  let person: ServiceContext;
  let agent: AgentClient;
  let investigationId: string;

  // A fresh demo project per test (temp projects are removed after each test).
  beforeEach(async () => {
    root = demoProject();
    person = { locator: { cwd: root, projectRoot: root }, actor: "cli" };
    investigationId = (await callService(createInvestigation, person, { title: "Is batch-heavy slower?" })).investigation_id;
    agent = await memoryClient(root);
  });
  afterEach(async () => {
    await agent?.close();
    releaseHeldWorkspaces();
  });

  it("lists the two experiment tools with honest annotations (planning and starting are run_experiment's two calls)", async () => {
    const { tools } = await agent.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.has("plan_experiment")).toBe(false);
    expect(byName.get("run_experiment")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
    expect(byName.get("get_experiment")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(Object.keys((byName.get("get_experiment")!.inputSchema as { properties: object }).properties)).toEqual(expect.arrayContaining(["experiment_id", "limit", "cursor"]));
  });

  it("plans (every trial's command line in block order), runs with the token, reports progress and a bounded result", async () => {
    const planned = await agent.call("run_experiment", { investigation_id: investigationId, variants: VARIANTS, metric: "cpu_ns", trials: 4, warmups: 1, seed: 11 });
    expect(planned.ok ? "ok" : planned.error).toBe("ok");
    if (!planned.ok) return;
    const plan = planned.value.planned;
    expect(plan.plan_token).toMatch(/^ept_/);
    expect(plan.experiment.created_by).toEqual({ actor: "agent", client: "emberscope-test" });
    expect(plan.plan.trials).toHaveLength(10);
    // Block order: every block runs each variant once; warm-up blocks come first; indexes are run order.
    expect(plan.plan.trials.map((t: { index: number }) => t.index)).toEqual([...Array(10).keys()]);
    const blocks = new Map<number, string[]>();
    for (const t of plan.plan.trials) blocks.set(t.block, [...(blocks.get(t.block) ?? []), t.variant]);
    expect([...blocks.keys()]).toEqual([-1, 0, 1, 2, 3]);
    for (const variants of blocks.values()) expect([...variants].sort()).toEqual(["base", "heavy"]);
    for (const t of plan.plan.trials) expect(t.argv).toEqual(["node", "app.js", "--seconds", "1.5", "--mode", t.variant === "base" ? "batch" : "batch-heavy"]);
    expect(planned.text).toContain("10 trial(s), 2 of them warm-up");
    // The agent view: no absolute path of this machine crosses the boundary.
    expect(JSON.stringify(planned.raw)).not.toContain(root);

    const started = await agent.call("run_experiment", { plan_token: plan.plan_token, expected_plan_id: plan.plan_id, idempotency_key: "mcp-exp-1" });
    expect(started.ok).toBe(true);
    if (!started.ok) return;
    expect(started.value.planned).toBe(null);
    expect(started.value.started).toMatchObject({ experiment_id: plan.experiment.experiment_id, operation_id: expect.stringMatching(/^op_/), reconnected: false });
    expect(started.links).toContain(`emberscope://operations/${started.value.started.operation_id}`);
    const again = await agent.call("run_experiment", { plan_token: plan.plan_token, idempotency_key: "mcp-exp-1" });
    expect(again.ok && again.value.started).toMatchObject({ operation_id: started.value.started.operation_id, reconnected: true });

    const seen: number[] = [];
    const op = await waitFor(
      async () => {
        const got = await agent.call("get_operation", { operation_id: started.value.started.operation_id });
        if (got.ok && got.value.progress.completed !== null) seen.push(got.value.progress.completed);
        return got.ok ? got.value : null;
      },
      (o) => o !== null && ["succeeded", "failed", "cancelled"].includes(o.state),
      240_000,
      300,
    );
    expect(op).toMatchObject({ kind: "experiment", state: "succeeded", progress: { completed: 10, total: 10 } });
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);

    const first = await agent.call("get_experiment", { experiment_id: plan.experiment.experiment_id, limit: 4 });
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    const r = first.value;
    expect(r.experiment.state).toBe("completed");
    expect(r.experiment).not.toHaveProperty("analysis");
    expect(r.counts).toEqual({ total: 10, ok: 10, failed: 0, pending: 0 });
    expect(r.progress).toEqual({ state: "succeeded", completed: 10, total: 10 });
    const [comparison] = r.result.comparisons;
    expect(comparison).toMatchObject({ variant: "heavy", baseline: "base", pairs: 4, excluded_blocks: 0 });
    expect(comparison).not.toHaveProperty("deltas");
    expect(comparison.ci[0]).toBeLessThanOrEqual(comparison.ratio);
    expect(comparison.ci[1]).toBeGreaterThanOrEqual(comparison.ratio);
    expect(r.result.variants.map((v: { variant: string }) => v.variant)).toEqual(["base", "heavy"]);
    for (const v of r.result.variants) {
      expect(v).not.toHaveProperty("values");
      expect(v.trials).toBe(4);
      expect(v.min).toBeLessThanOrEqual(v.median);
    }
    expect(r.result.resamples).toBeGreaterThanOrEqual(10_000);
    expect(first.text).toContain(`heavy vs base: ${comparison.decision}`);

    // Trials a page at a time, in run order, each with its run; the pages together are every trial once.
    expect(r.trials.map((t: { index: number }) => t.index)).toEqual([0, 1, 2, 3]);
    const indexes = r.trials.map((t: { index: number }) => t.index);
    let cursor = r.next_cursor;
    while (cursor) {
      const page = await agent.call("get_experiment", { experiment_id: plan.experiment.experiment_id, limit: 4, cursor });
      expect(page.ok).toBe(true);
      if (!page.ok) return;
      indexes.push(...page.value.trials.map((t: { index: number; run_id: string }) => t.index));
      for (const t of page.value.trials) expect(t.run_id).toMatch(/^run_/);
      cursor = page.value.next_cursor;
    }
    expect(indexes).toEqual([...Array(10).keys()]);

    // A cursor of another experiment's pages is refused, not misread.
    const other = await agent.call("run_experiment", { investigation_id: investigationId, variants: VARIANTS, trials: 2, warmups: 0 });
    const foreign = await agent.call("get_experiment", { experiment_id: other.ok ? other.value.planned.experiment.experiment_id : "exp_x", limit: 4, cursor: r.next_cursor });
    expect(!foreign.ok && foreign.error.code).toBe("STALE_CURSOR");
  }, 300_000);

  it("refuses bad plan tokens with typed errors whose recovery names a tool", async () => {
    const planned = await agent.call("run_experiment", { investigation_id: investigationId, variants: VARIANTS, trials: 2, warmups: 0 });
    expect(planned.ok ? "ok" : planned.error).toBe("ok");
    if (!planned.ok) return;
    const unknown = await agent.call("run_experiment", { plan_token: "ept_not-a-token-of-any-plan", idempotency_key: "bad-1" });
    expect(!unknown.ok && unknown.error).toMatchObject({ code: "PLAN_NOT_FOUND", recovery: { tool: "run_experiment" } });
    // A capture's plan token is not an experiment's.
    const capture = await callService(planCapture, person, { adapter: "measure", workload: "demo" });
    const wrongKind = await agent.call("run_experiment", { plan_token: capture.plan_token, idempotency_key: "bad-2" });
    expect(!wrongKind.ok && wrongKind.error.code).toBe("PLAN_NOT_FOUND");
    const tooShort = await agent.call("run_experiment", { plan_token: "ept", idempotency_key: "bad-3" });
    expect(!tooShort.ok && tooShort.error).toMatchObject({ code: "INVALID_ARGUMENTS" });
    const missingKey = await agent.call("run_experiment", { plan_token: planned.value.planned.plan_token });
    expect(!missingKey.ok && missingKey.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "idempotency_key" } });
    // A token with a design is ambiguous: refused, and the token is not used up by it.
    const withDesign = await agent.call("run_experiment", { plan_token: planned.value.planned.plan_token, idempotency_key: "bad-3b", investigation_id: investigationId, variants: VARIANTS });
    expect(!withDesign.ok && withDesign.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "investigation_id" } });
    const mismatch = await agent.call("run_experiment", { plan_token: planned.value.planned.plan_token, expected_plan_id: "plan_someotherplan", idempotency_key: "bad-4" });
    expect(!mismatch.ok && mismatch.error.code).toBe("PLAN_MISMATCH");
    // The mismatch did not use the token up; the one run does, and a second key finds it used.
    const ran = await agent.call("run_experiment", { plan_token: planned.value.planned.plan_token, expected_plan_id: planned.value.planned.plan_id, idempotency_key: "bad-5" });
    expect(ran.ok).toBe(true);
    const used = await agent.call("run_experiment", { plan_token: planned.value.planned.plan_token, idempotency_key: "bad-6" });
    expect(!used.ok && used.error).toMatchObject({ code: "PLAN_CONSUMED", recovery: { tool: "run_experiment" } });
    const missing = await agent.call("get_experiment", { experiment_id: "exp_doesnotexist" });
    expect(!missing.ok && missing.error.code).toBe("EXPERIMENT_NOT_FOUND");
    const hostileId = await agent.call("get_experiment", { experiment_id: "../../etc/passwd" });
    expect(!hostileId.ok && hostileId.error.code).toBe("INVALID_ARGUMENTS");
    if (ran.ok) await waitFor(() => agent.call("get_operation", { operation_id: ran.value.started.operation_id }), (o) => o.ok && ["succeeded", "failed", "cancelled"].includes(o.value.state), 120_000, 300);
  }, 180_000);

  it("keeps an agent inside the person's policy: declared workloads, allowed adapters, the trial limit", async () => {
    const strict = demoProject();
    const file = path.join(strict, "emberscope.toml");
    writeFileSync(file, `${readFileSync(file, "utf8").replace("[limits]", "[limits]\nmeasure_repeat_max = 5")}\n[policy]\nadapters = ["measure"]\n`);
    const inv = (await callService(createInvestigation, { locator: { cwd: strict, projectRoot: strict }, actor: "cli" }, { title: "policy" })).investigation_id;
    const strictAgent = await memoryClient(strict);
    try {
      const callgrind = await strictAgent.call("run_experiment", { investigation_id: inv, variants: VARIANTS, adapter: "callgrind", trials: 2 });
      expect(!callgrind.ok && callgrind.error).toMatchObject({ code: "POLICY_DENIED", details: { adapter: "callgrind", allowed: ["measure"] } });
      const tooMany = await strictAgent.call("run_experiment", { investigation_id: inv, variants: VARIANTS, trials: 6 });
      expect(!tooMany.ok && tooMany.error).toMatchObject({ code: "POLICY_DENIED", details: { argument: "trials", max: 5 } });
      const undeclared = await strictAgent.call("run_experiment", { investigation_id: inv, variants: [VARIANTS[0], { name: "rm", workload: "rm -rf /" }], trials: 2 });
      expect(!undeclared.ok && undeclared.error.code).toBe("WORKLOAD_NOT_FOUND");
      const unknownParameter = await strictAgent.call("run_experiment", { investigation_id: inv, variants: [VARIANTS[0], { name: "x", workload: "demo", parameters: { shell: "; rm -rf /" } }], trials: 2 });
      expect(!unknownParameter.ok && unknownParameter.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { variant: "x" } });
      const oneVariant = await strictAgent.call("run_experiment", { investigation_id: inv, variants: [VARIANTS[0]], trials: 2 });
      expect(!oneVariant.ok && oneVariant.error.code).toBe("INVALID_ARGUMENTS");
      // Nothing was planned by the refusals; within the limits it plans.
      const allowed = await strictAgent.call("run_experiment", { investigation_id: inv, variants: VARIANTS, trials: 5, warmups: 0 });
      expect(allowed.ok && allowed.value.planned.plan.trials).toHaveLength(10);
    } finally {
      await strictAgent.close();
    }
  });
});
