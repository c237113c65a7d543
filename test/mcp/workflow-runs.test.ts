// run_workflow and get_workflow_run through the real MCP SDK client (in memory), and the
// `workflows run|benchmark|runs|approve` commands as child processes: the same runs the services
// make, with a plan token an agent cannot skip and approvals only a person gives.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { callService, reviewTool } from "../../server/services";
import { runCli } from "../helpers/cli";
import { workflowProject, type TraceEvent } from "../helpers/workflow-project";
import { memoryClient } from "./clients";

const READ_THEN_WRITE: TraceEvent[] = [
  { id: "c1", tool: "lookup", arguments: { key: "alpha-key" }, result: { value: "value-of-alpha-key" }, start: 0, end: 20 },
  { id: "c2", tool: "record", side_effect: "write", arguments: { value: "value-of-alpha-key" }, result: { written: true }, start: 30, end: 40, after: ["c1"] },
];

describe("workflow runs over MCP and the CLI", () => {
  it("an agent plans, then starts with the token, polls get_workflow_run; a write waits for a person's approval", async () => {
    const p = workflowProject();
    const wf = await p.compile(READ_THEN_WRITE);
    for (const [tool, side_effect] of [["lookup", "read"], ["record", "write"]] as const) await callService(reviewTool, p.ctx(), { tool, side_effect });
    const agent = await memoryClient(p.root);
    try {
      const planned = await agent.call("run_workflow", { workflow_id: wf, mode: "live" });
      expect(planned.ok).toBe(true);
      if (!planned.ok) return;
      expect(planned.value).toMatchObject({ started: null, plan: { would_run: false, tools: [{ tool: "lookup", refusal: null }, { tool: "record", refusal: "APPROVAL_REQUIRED" }] } });
      expect(planned.text).toContain("would be refused: record (APPROVAL_REQUIRED)");
      // Unknown keys are refused (strict schema); a wrong token is a typed error.
      expect(await agent.call("run_workflow", { workflow_id: wf, plan_token: "ept_not-a-real-token" })).toMatchObject({ ok: false, error: { code: "PLAN_NOT_FOUND", recovery: { tool: "run_workflow" } } });
      expect(await agent.call("run_workflow", { workflow_id: wf, approve: true })).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });

      // The person approves on the CLI; the agent plans again and starts it.
      const approve = await runCli(["workflows", "approve", wf, "record", "--note", "scratch file", "--json"], { cwd: p.root });
      expect(approve.code).toBe(0);
      const again = await agent.call("run_workflow", { workflow_id: wf, mode: "live" });
      if (!again.ok) throw new Error(JSON.stringify(again.error));
      const started = await agent.call("run_workflow", { workflow_id: wf, plan_token: again.value.plan_token, expected_plan_id: again.value.plan_id });
      if (!started.ok) throw new Error(JSON.stringify(started.error));
      const runId = started.value.started.workflow_run.workflow_run_id as string;
      let view: { ok: boolean; value?: any } = { ok: false };
      for (let i = 0; i < 400; i++) {
        view = await agent.call("get_workflow_run", { workflow_run_id: runId, limit: 1 });
        if (view.ok && ["succeeded", "failed", "cancelled"].includes(view.value.workflow_run.state)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(view.value).toMatchObject({ workflow_run: { state: "succeeded" }, summary: { counts: { succeeded: 2 }, nodes_total: 2, nodes_shown: 1 } });
      expect(readFileSync(path.join(p.root, "written.txt"), "utf8")).toBe("value-of-alpha-key\n");
      // The token is single use.
      expect(await agent.call("run_workflow", { workflow_id: wf, plan_token: again.value.plan_token })).toMatchObject({ ok: false, error: { code: "PLAN_CONSUMED" } });
    } finally {
      await agent.close();
    }
  });

  it("`workflows run` waits and reports; `workflows benchmark` prints the figures; `workflows runs` lists both", async () => {
    const p = workflowProject();
    const reads: TraceEvent[] = [0, 1, 2].map((k) => ({ id: `r${k}`, tool: "Read", arguments: { file: `file-number-${k}` }, result: `line one ${k}\nline two ${k}`, start: k * 200, end: k * 200 + 200 }));
    const wf = await p.compile([...reads, { id: "e", tool: "Edit", side_effect: "write", arguments: { text: "line two 2" }, result: "ok", start: 600, end: 650, after: ["r0", "r1", "r2"] }]);
    const frozen = await runCli(["workflows", "run", wf, "--mode", "frozen", "--json"], { cwd: p.root });
    expect(frozen.code).toBe(0);
    expect(JSON.parse(frozen.stdout)).toMatchObject({ workflow_run: { state: "succeeded", mode: "frozen" }, summary: { reproduced: true } });
    const live = await runCli(["workflows", "run", wf, "--mode", "live"], { cwd: p.root });
    expect(live.code).not.toBe(0);
    expect(live.stdout + live.stderr).toContain("TOOL_NOT_REGISTERED");
    const bench = await runCli(["workflows", "benchmark", wf, "--repetitions", "2", "--mode", "controlled", "--json"], { cwd: p.root });
    expect(bench.code).toBe(0);
    const figures = JSON.parse(bench.stdout).summary.benchmark;
    expect(figures).toMatchObject({ repetitions: 2, sequential_ms: 650, critical_path_ms: 250 });
    expect(figures.wall_ms.median).toBeLessThan(250 + 150);
    const human = await runCli(["workflows", "runs", "--workflow", wf], { cwd: p.root });
    expect(human.stdout).toMatch(/benchmark\s+controlled\s+succeeded/);
    expect(human.stdout).toMatch(/run\s+live\s+failed/);
  });
});
