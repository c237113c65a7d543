// Workflows that run (issue 25), through the services on a real workspace, with the worker pool's
// real worker process running each run: tools registered by a project's tools folder
// (test/fixtures/workflow-tools), contracts a person reviews, approvals, the ordered checks, partial
// failure, cancel, controlled replay's overlap, frozen reproduction, and hostile tool names.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { approveWorkflowTool, benchmarkWorkflow, callService, cancelOperation, getCriticalPath, getWorkflowRun, listToolContracts, listWorkflowRuns, reviewTool, runWorkflow, showRun } from "../../server/services";
import { loadToolRegistry } from "../../server/workflow/registry";
import { workflowProject, type TraceEvent } from "../helpers/workflow-project";

/** lookup(key) → record(its value): a read feeding a write. */
const READ_THEN_WRITE: TraceEvent[] = [
  { id: "c1", tool: "lookup", arguments: { key: "alpha-key" }, result: { value: "value-of-alpha-key" }, start: 0, end: 20 },
  { id: "c2", tool: "record", side_effect: "write", arguments: { value: "value-of-alpha-key" }, result: { written: true }, start: 30, end: 40, after: ["c1"] },
];

async function runTo(p: ReturnType<typeof workflowProject>, args: Record<string, unknown>) {
  const planned = await callService(runWorkflow, p.ctx(), args);
  expect(planned.started).toBeNull();
  const started = await callService(runWorkflow, p.ctx(), { workflow_id: args.workflow_id, plan_token: planned.plan_token, expected_plan_id: planned.plan_id });
  const op = await p.settle(started.started!.operation.operation_id);
  const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: started.started!.workflow_run.workflow_run_id, limit: 100 });
  return { planned, op, run };
}

describe("the workflow runtime", () => {
  it("refuses a write tool without a person's approval, runs it with one, and refuses unreviewed tools", async () => {
    const p = workflowProject();
    const wf = await p.compile(READ_THEN_WRITE);

    // Nothing reviewed: the plan says both would be refused, and the run starts nothing.
    const unreviewed = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(unreviewed.planned.plan.tools.map((t) => [t.tool, t.registered, t.review, t.refusal])).toEqual([
      ["lookup", true, "unreviewed", "TOOL_NOT_REVIEWED"],
      ["record", true, "unreviewed", "TOOL_NOT_REVIEWED"],
    ]);
    expect(unreviewed.op).toMatchObject({ state: "failed", error: { code: "TOOL_NOT_REVIEWED" } });
    expect(unreviewed.run.summary).toMatchObject({ nothing_ran: true });
    expect(existsSync(path.join(p.root, "written.txt"))).toBe(false);

    // Reviewed (by a person; the contract binds the registered code), but the write is not approved.
    await expect(callService(reviewTool, p.ctx("agent"), { tool: "lookup", side_effect: "read" })).rejects.toMatchObject({ code: "POLICY_DENIED" });
    await expect(callService(reviewTool, p.ctx(), { tool: "record", side_effect: "read" })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    const lookup = await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read" });
    expect(lookup).toMatchObject({ handler: "module:tools/test-tools.ts", binding: { timeout_ms: 5000, concurrency: 4 } });
    expect(lookup.handler_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    await callService(reviewTool, p.ctx(), { tool: "record", side_effect: "write" });
    const registered = (await callService(listToolContracts, p.ctx("agent"), {})).registered;
    expect(registered.filter((t) => ["lookup", "record", "slow"].includes(t.name)).map((t) => [t.name, t.review])).toEqual([
      ["lookup", "reviewed"],
      ["record", "reviewed"],
      ["slow", "unreviewed"],
    ]);
    const unapproved = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(unapproved.planned.plan.tools.find((t) => t.tool === "record")!.refusal).toBe("APPROVAL_REQUIRED");
    expect(unapproved.op).toMatchObject({ state: "failed", error: { code: "APPROVAL_REQUIRED", details: { tool: "record" } } });
    expect(existsSync(path.join(p.root, "written.txt"))).toBe(false);

    // Only a person approves; then the write runs, with the value the read returned.
    await expect(callService(approveWorkflowTool, p.ctx("agent"), { workflow_id: wf, tool: "record" })).rejects.toMatchObject({ code: "POLICY_DENIED" });
    await callService(approveWorkflowTool, p.ctx(), { workflow_id: wf, tool: "record", note: "writes a scratch file" });
    const approved = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(approved.op.state).toBe("succeeded");
    expect(readFileSync(path.join(p.root, "written.txt"), "utf8")).toBe("value-of-alpha-key\n");
    expect(approved.run.summary).toMatchObject({ state: "succeeded", counts: { succeeded: 2, failed: 0, skipped: 0 } });
    expect((approved.run.summary!.nodes as { matches_recorded: boolean }[]).map((n) => n.matches_recorded)).toEqual([true, true]);

    // Changed code is no longer what was reviewed.
    const module = path.join(p.root, "tools", "test-tools.ts");
    const { appendFileSync } = await import("node:fs");
    appendFileSync(module, "\n// changed\n");
    const stale = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(stale.op).toMatchObject({ state: "failed", error: { code: "TOOL_NOT_REVIEWED" } });
  });

  it("refuses arguments that fail the input schema and results that fail the output schema, with typed errors", async () => {
    const p = workflowProject();
    await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read" });
    await callService(reviewTool, p.ctx(), { tool: "misreport", side_effect: "read" });
    const badInput = await p.compile([{ id: "c1", tool: "lookup", arguments: { key: "", extra: 1 }, result: { value: "x" }, start: 0, end: 5 }]);
    const a = await runTo(p, { workflow_id: badInput, mode: "live" });
    expect(a.op).toMatchObject({ state: "failed", error: { code: "WORKFLOW_RUN_FAILED" } });
    const failedInput = (a.run.summary!.nodes as { error: { code: string; details: { issues: unknown[] } } }[])[0].error;
    expect(failedInput.code).toBe("TOOL_INPUT_INVALID");
    expect(failedInput.details.issues.length).toBeGreaterThan(0);

    const badOutput = await p.compile([{ id: "c1", tool: "misreport", arguments: { key: "abcd" }, result: { value: "x" }, start: 0, end: 5 }]);
    const b = await runTo(p, { workflow_id: badOutput, mode: "live" });
    expect((b.run.summary!.nodes as { error: { code: string; details: { issues: { path: string }[] } } }[])[0].error).toMatchObject({ code: "TOOL_OUTPUT_INVALID", details: { issues: [{ path: "value" }] } });
  });

  it("aborts a call past its contract's timeout with TOOL_TIMEOUT, even when the handler ignores its signal", async () => {
    const p = workflowProject();
    await callService(reviewTool, p.ctx(), { tool: "hang", side_effect: "read" });
    const wf = await p.compile([{ id: "h", tool: "hang", arguments: { key: "some-key" }, result: { value: "v" }, start: 0, end: 5 }]);
    const started = Date.now();
    const { op, run } = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(op).toMatchObject({ state: "failed", error: { code: "WORKFLOW_RUN_FAILED" } });
    expect((run.summary!.nodes as { error: { code: string; details: { timeout_ms: number } } }[])[0].error).toMatchObject({ code: "TOOL_TIMEOUT", details: { timeout_ms: 300 } });
    // The handler still runs (for 20 s) in the worker that called it: that worker retires, ending it.
    const pid = op.worker!.pid!;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await expect.poll(alive, { timeout: 10_000 }).toBe(false);
  });

  it("stops a failed node's dependants, finishes the rest and reports exactly what ran, failed and was skipped", async () => {
    const p = workflowProject();
    for (const tool of ["lookup", "broken", "slow"]) await callService(reviewTool, p.ctx(), { tool, side_effect: "read" });
    // broken → lookup(its value) → lookup(that value); beside them, an independent slow read.
    const wf = await p.compile([
      { id: "b", tool: "broken", arguments: { key: "first-key" }, result: { value: "from-broken" }, start: 0, end: 10 },
      { id: "d1", tool: "lookup", arguments: { key: "from-broken" }, result: { value: "value-of-from-broken" }, start: 20, end: 30, after: ["b"] },
      { id: "d2", tool: "lookup", arguments: { key: "value-of-from-broken" }, result: { value: "x" }, start: 40, end: 50, after: ["d1"] },
      { id: "s", tool: "slow", arguments: { ms: 300 }, result: { slept: 300 }, start: 0, end: 300 },
    ]);
    const { op, run } = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(op).toMatchObject({ state: "failed", error: { code: "WORKFLOW_RUN_FAILED", details: { counts: { succeeded: 1, failed: 1, skipped: 2, cancelled: 0 } } } });
    const nodes = run.summary!.nodes as { node: string; tool: string; state: string; blocked_by: string | null; error: { code: string } | null }[];
    const byTool = Object.fromEntries(nodes.map((n) => [`${n.tool}:${n.node}`, [n.state, n.blocked_by, n.error?.code ?? null]]));
    const broken = nodes.find((n) => n.tool === "broken")!;
    expect(byTool[`broken:${broken.node}`]).toEqual(["failed", null, "TOOL_FAILED"]);
    expect(nodes.filter((n) => n.tool === "lookup").map((n) => [n.state, n.blocked_by])).toEqual([
      ["skipped", broken.node],
      ["skipped", broken.node],
    ]);
    expect(nodes.find((n) => n.tool === "slow")!.state).toBe("succeeded");
    // What ran is in a new run as spans: the failed call and the slow read, not the skipped ones.
    const replay = await callService(showRun, p.ctx(), { run_id: run.workflow_run.replay_run_id! });
    expect(replay).toMatchObject({ status: "succeeded", details: { workflow_run_id: run.workflow_run.workflow_run_id } });
  });

  it("cancel stops every running call within a second", async () => {
    const p = workflowProject();
    await callService(reviewTool, p.ctx(), { tool: "slow", side_effect: "read" });
    const wf = await p.compile([0, 1, 2, 3].map((k) => ({ id: `s${k}`, tool: "slow", arguments: { ms: 30_000 + k * 1000 }, result: { slept: 30_000 + k * 1000 }, start: 0, end: 30_000 })));
    const planned = await callService(runWorkflow, p.ctx(), { workflow_id: wf, mode: "live" });
    const started = await callService(runWorkflow, p.ctx(), { workflow_id: wf, plan_token: planned.plan_token });
    const opId = started.started!.operation.operation_id;
    // Wait until the calls are running (the worker claimed it and the phase is nodes).
    for (let i = 0; i < 600; i++) {
      const view = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: started.started!.workflow_run.workflow_run_id });
      if (view.operation.phase === "nodes") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
    const asked = Date.now();
    await callService(cancelOperation, p.ctx(), { operation_id: opId });
    const op = await p.settle(opId, 5000);
    const took = Date.now() - asked;
    expect(op.state).toBe("cancelled");
    expect(took).toBeLessThan(1000);
    const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: started.started!.workflow_run.workflow_run_id });
    expect(run.summary).toMatchObject({ state: "cancelled", counts: { cancelled: 4, succeeded: 0 } });
  });

  it("overlaps independent reads in controlled replay: wall ≈ the critical path, not the sum", async () => {
    const p = workflowProject();
    // Four independent 300 ms reads, then one 100 ms read of all their results: sum 1300 ms, path 400 ms.
    const reads: TraceEvent[] = [0, 1, 2, 3].map((k) => ({ id: `r${k}`, tool: "Read", arguments: { file: `file-number-${k}` }, result: { text: `contents-${k}-xyz` }, start: k * 300, end: k * 300 + 300 }));
    const wf = await p.compile([...reads, { id: "sum", tool: "Grep", arguments: { texts: ["contents-0-xyz", "contents-1-xyz", "contents-2-xyz", "contents-3-xyz"] }, result: "done", start: 1200, end: 1300, after: reads.map((r) => r.id) }]);
    const bound = await callService(getCriticalPath, p.ctx(), { workflow_id: wf });
    expect([bound.sequential_ns / 1e6, bound.critical_path_ns / 1e6]).toEqual([1300, 400]);
    const started = await callService(benchmarkWorkflow, p.ctx(), { workflow_id: wf, mode: "controlled", repetitions: 3 });
    const op = await p.settle(started.operation.operation_id);
    expect(op.state).toBe("succeeded");
    const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: started.workflow_run.workflow_run_id });
    const bench = run.summary!.benchmark as { wall_ms: { median: number; each: number[] }; sequential_ms: number; critical_path_ms: number; achieved_speedup: number; speedup_bound: number };
    expect(bench).toMatchObject({ sequential_ms: 1300, critical_path_ms: 400, speedup_bound: 3.25 });
    expect(bench.wall_ms.each).toHaveLength(3);
    expect(bench.wall_ms.median).toBeGreaterThanOrEqual(399);
    expect(bench.wall_ms.median).toBeLessThan(400 + 150);
    expect(bench.achieved_speedup).toBeGreaterThan(2.4);
    // The median repetition is a new run: its spans' critical path is the replay's, beside the recording.
    const replayPath = await callService(getCriticalPath, p.ctx(), { run_id: run.workflow_run.replay_run_id! });
    expect(replayPath.kind).toBe("workflow");
    expect(replayPath.path.length).toBeGreaterThanOrEqual(2);
    const listed = await callService(listWorkflowRuns, p.ctx("agent"), { workflow_id: wf });
    expect(listed.items.map((r) => [r.kind, r.mode, r.state])).toEqual([["benchmark", "controlled", "succeeded"]]);
  });

  it("replays frozen without running any tool, reproducing the recorded outputs", async () => {
    const p = workflowProject();
    const wf = await p.compile(READ_THEN_WRITE);
    const { op, run } = await runTo(p, { workflow_id: wf, mode: "frozen" });
    expect(op.state).toBe("succeeded");
    expect(run.summary).toMatchObject({ state: "succeeded", reproduced: true, outputs: { n2: { written: true } } });
    expect(existsSync(path.join(p.root, "written.txt"))).toBe(false);
  });

  it("never resolves a trace's unregistered tool name to code, hostile names included", async () => {
    const p = workflowProject();
    const hostile = ["__proto__", "constructor", "toString", "../tools/test-tools.ts", "tools/test-tools.ts#lookup", "hasOwnProperty", "lookup "];
    const registry = await loadToolRegistry(p.root);
    for (const name of hostile) expect(registry.get(name)).toBeNull();
    const wf = await p.compile(hostile.map((tool, k) => ({ id: `h${k}`, tool, arguments: { key: `key-${k}` }, result: { value: "v" }, start: k, end: k + 1 })));
    const { planned, op } = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(planned.plan.tools.every((t) => !t.registered && t.refusal === "TOOL_NOT_REGISTERED")).toBe(true);
    expect(planned.plan.would_run).toBe(false);
    expect(op).toMatchObject({ state: "failed", error: { code: "TOOL_NOT_REGISTERED" } });
    // Even a person's review of such a name binds no code (it was not registered).
    const contract = await callService(reviewTool, p.ctx(), { tool: "__proto__", side_effect: "read" });
    expect(contract).toMatchObject({ handler: null, handler_digest: null });
    const again = await runTo(p, { workflow_id: wf, mode: "live" });
    expect(again.op).toMatchObject({ state: "failed", error: { code: "TOOL_NOT_REGISTERED" } });
  });

  it("refuses a reused plan token and a plan made stale by a review", async () => {
    const p = workflowProject();
    const wf = await p.compile(READ_THEN_WRITE);
    const planned = await callService(runWorkflow, p.ctx(), { workflow_id: wf, mode: "live" });
    await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read" });
    await expect(callService(runWorkflow, p.ctx(), { workflow_id: wf, plan_token: planned.plan_token })).rejects.toMatchObject({ code: "STALE_INTENT" });
    await expect(callService(runWorkflow, p.ctx(), { workflow_id: wf, plan_token: planned.plan_token })).rejects.toMatchObject({ code: "PLAN_CONSUMED" });
  });
});
