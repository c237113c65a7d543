// Integrity is checked before every call of a run, not once at its start (issue 25: "per call, in
// this order and never skipped: workflow integrity …"): a workflow whose stored document is
// rewritten while a real pool worker runs it is refused at its next call, and nothing after runs.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { callService, getWorkflow, getWorkflowRun, reviewTool, runWorkflow } from "../../server/services";
import type { ObjectId } from "../../server/store/object-store";
import { openWorkspace } from "../../server/store/workspace";
import { workflowProject } from "../helpers/workflow-project";

describe("per-call workflow integrity", () => {
  it("refuses the next call of a live run once the workflow's stored document is tampered with mid-run", async () => {
    const p = workflowProject();
    await callService(reviewTool, p.ctx(), { tool: "slow", side_effect: "read" });
    await callService(reviewTool, p.ctx(), { tool: "emberscope.echo", side_effect: "read" });
    // n1 sleeps 1.5 s; n2 echoes its result (a reference, so it waits for n1): n2 starts after the rewrite.
    const wf = await p.compile([
      { id: "s1", tool: "slow", arguments: { ms: 1500 }, result: { slept: 1500 }, start: 0, end: 1500 },
      { id: "s2", tool: "emberscope.echo", arguments: { value: 1500 }, result: 1500, start: 1600, end: 1610 },
    ]);
    expect((await callService(getWorkflow, p.ctx(), { workflow_id: wf })).edges).toEqual([{ from: "n1", to: "n2", kind: "data_ref" }]);
    const digest = (await callService(getWorkflow, p.ctx(), { workflow_id: wf })).workflow.digest;
    const planned = await callService(runWorkflow, p.ctx(), { workflow_id: wf, mode: "live" });
    expect(planned.plan.would_run).toBe(true);
    const started = (await callService(runWorkflow, p.ctx(), { workflow_id: wf, plan_token: planned.plan_token })).started!;
    for (let i = 0; i < 600; i++) {
      const view = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: started.workflow_run.workflow_run_id });
      if (view.operation.phase === "nodes") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    // s1 is running now: an attacker with write access to the object store changes s2's arguments.
    const ws = openWorkspace({ cwd: p.root, projectRoot: p.root });
    const file = ws.objects.pathOf(digest as ObjectId);
    ws.close();
    const doc = JSON.parse(readFileSync(file, "utf8"));
    doc.nodes[1].arguments = { value: "planted" };
    chmodSync(file, 0o644);
    writeFileSync(file, JSON.stringify(doc));

    const op = await p.settle(started.operation.operation_id);
    expect(op.state).toBe("failed");
    const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: started.workflow_run.workflow_run_id, limit: 10 });
    const nodes = (run.summary!.nodes as { node: string; state: string; error: { code: string; details: { reason: string } } | null }[]).sort((a, b) => (a.node < b.node ? -1 : 1));
    expect(nodes.map((n) => [n.node, n.state])).toEqual([
      ["n1", "succeeded"],
      ["n2", "failed"],
    ]);
    expect(nodes[1].error).toMatchObject({ code: "WORKFLOW_INTEGRITY_FAILED", details: { reason: "its stored document changed during the run" } });
    // The planted argument never reached a handler: n2 was refused before its call.
    expect(JSON.stringify(run.summary!.outputs)).not.toContain("planted");
  }, 60_000);

  it("passes every call of a live run whose workflow is untouched", async () => {
    const p = workflowProject();
    await callService(reviewTool, p.ctx(), { tool: "slow", side_effect: "read" });
    const wf = await p.compile([0, 1, 2, 3, 4].map((k) => ({ id: `s${k}`, tool: "slow", arguments: { ms: 5 + k }, result: { slept: 5 + k }, start: k * 10, end: k * 10 + 5, after: k ? [`s${k - 1}`] : [] })));
    const planned = await callService(runWorkflow, p.ctx(), { workflow_id: wf, mode: "live" });
    const started = (await callService(runWorkflow, p.ctx(), { workflow_id: wf, plan_token: planned.plan_token })).started!;
    expect((await p.settle(started.operation.operation_id)).state).toBe("succeeded");
  }, 60_000);
});
