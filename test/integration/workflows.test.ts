// Workflows and critical paths through the services, on a real workspace (SQLite, object store,
// Parquet, DuckDB): an imported Claude Code session compiled, stored once per content, blocked
// until a person reviews its tools; its critical path and a Jaeger trace's, with every figure
// worked out by hand from the fixtures' timestamps (test/fixtures/agent-traces).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { workflowDigest, type Workflow } from "../../analysis/workflow/compile";
import {
  callService,
  compileRunWorkflow,
  getCriticalPath,
  getWorkflow,
  importArtifact,
  listToolContracts,
  listWorkflows,
  reviewTool,
  type ServiceContext,
} from "../../server/services";
import { referencedObjects } from "../../server/store/reachability";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-traces");
const MS = 1e6;

function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const locator = { cwd: root, projectRoot: root };
  const ctx = (actor: ServiceContext["actor"], extra: Partial<ServiceContext> = {}): ServiceContext => ({ locator, actor, ...extra });
  const importFixture = async (fixture: string) => {
    writeFileSync(path.join(root, fixture), readFileSync(path.join(FIXTURES, fixture)));
    return (await callService(importArtifact, ctx("test"), { path: fixture })).run_id;
  };
  return { root, ctx, importFixture };
}

describe("workflows from an imported agent session", () => {
  it("compiles, stores the document content-addressed once, and blocks until a person reviews its tools", async () => {
    const { root, ctx, importFixture } = setup();
    const run = await importFixture("claude-code-session.jsonl");
    const first = await callService(compileRunWorkflow, ctx("cli"), { run_id: run });
    expect(first.created).toBe(true);
    expect(first.workflow).toMatchObject({ run_id: run, version: 1, status: "blocked", blocked_tools: ["Grep", "MultiEdit", "Read", "Task"], node_count: 7, edge_count: 16 });
    expect(first.workflow.report.filtered.total).toBe(3);
    // Compiling the same evidence with the same contracts gives the same content: nothing new stored.
    const again = await callService(compileRunWorkflow, ctx("agent"), { run_id: run });
    expect(again).toMatchObject({ created: false, workflow: { workflow_id: first.workflow.workflow_id } });

    // The stored document's address is the sha256 of its canonical JSON, recomputed here.
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const doc = JSON.parse((await ws.objects.read(first.workflow.digest as `sha256:${string}`, first.workflow.size_bytes)).toString("utf8")) as Workflow;
      expect(await workflowDigest(doc)).toBe(first.workflow.digest);
      expect(referencedObjects(ws.db).find((o) => o.id === first.workflow.digest)?.referrer).toBe(`workflow ${first.workflow.workflow_id}`);
    } finally {
      ws.close();
    }

    // Only a person reviews tools: an agent is refused, a web request without the person's session too.
    await expect(callService(reviewTool, ctx("agent"), { tool: "Read", side_effect: "read" })).rejects.toMatchObject({ code: "POLICY_DENIED" });
    await expect(callService(reviewTool, ctx("web"), { tool: "Read", side_effect: "read" })).rejects.toMatchObject({ code: "PERSON_SESSION_REQUIRED" });
    expect((await callService(reviewTool, ctx("cli"), { tool: "Read", side_effect: "read", note: "reads a file" })).revision).toBe(1);
    expect((await callService(reviewTool, ctx("web", { person: true }), { tool: "Grep", side_effect: "read" })).reviewed_by).toBe("web");
    await expect(callService(reviewTool, ctx("cli"), { tool: "Grep", side_effect: "write", expected_revision: 0 })).rejects.toMatchObject({ code: "REVISION_CONFLICT" });
    expect((await callService(listToolContracts, ctx("agent"), {})).tools.map((t) => [t.tool, t.side_effect])).toEqual([
      ["Grep", "read"],
      ["Read", "read"],
    ]);

    const reviewed = await callService(compileRunWorkflow, ctx("cli"), { run_id: run });
    expect(reviewed.workflow).toMatchObject({ version: 2, blocked_tools: ["MultiEdit", "Task"], node_count: 6 });
    expect(reviewed.workflow.report.deduplicated.items).toEqual([{ node: "n1", call_id: "toolu_04" }]);
    const listed = await callService(listWorkflows, ctx("agent"), { run_id: run, limit: 1 });
    expect(listed.items.map((w) => w.version)).toEqual([2]);
    expect((await callService(listWorkflows, ctx("agent"), { run_id: run, limit: 1, cursor: listed.next_cursor! })).items.map((w) => w.version)).toEqual([1]);

    const view = await callService(getWorkflow, ctx("agent"), { workflow_id: reviewed.workflow.workflow_id, limit: 10 });
    const multiEdit = view.nodes.find((n) => n.tool === "MultiEdit")!;
    expect(multiEdit.arguments).toMatchObject({ file_path: { $ref: "n2", line: 1 } });
    expect(view.edges.filter((e) => e.to === multiEdit.id)).toEqual([
      { from: "n2", to: "n6", kind: "data_ref" },
      { from: "n3", to: "n6", kind: "follows_from" },
    ]);
    await expect(callService(getWorkflow, ctx("agent"), { workflow_id: "wf_nope" })).rejects.toMatchObject({ code: "WORKFLOW_NOT_FOUND" });
  });

  it("gives the critical path worked out by hand, before and after review, and what-ifs", async () => {
    const { ctx, importFixture } = setup();
    const run = await importFixture("claude-code-session.jsonl");
    // Unreviewed: Read 01 0–500, Grep 02 0–1000, Read 04 (150) after both, the Task (4000 ms, its
    // own 3500 after its subagent's Grep 400 and Read 100) after all three, MultiEdit 300 last.
    const blocked = await callService(getCriticalPath, ctx("agent"), { run_id: run });
    expect(blocked).toMatchObject({ kind: "workflow", workflow_status: "blocked", sequential_ns: 5950 * MS, critical_path_ns: 5450 * MS });
    expect(blocked.speedup_bound).toBeCloseTo(5950 / 5450, 10);
    expect(blocked.path.map((p) => [p.id, p.name, p.critical_ns / MS])).toEqual([
      ["n2", "Grep", 1000],
      ["n3", "Read", 150],
      ["n5", "Grep", 400],
      ["n6", "Read", 100],
      ["n4", "Task", 3500],
      ["n7", "MultiEdit", 300],
    ]);
    expect(blocked.nodes!.find((n) => n.id === "n1")).toMatchObject({ slack_ns: 500 * MS, on_path: false });

    await callService(reviewTool, ctx("cli"), { tool: "Read", side_effect: "read" });
    await callService(reviewTool, ctx("cli"), { tool: "Grep", side_effect: "read" });
    // Reviewed: the repeated Read merges into n1; reads no longer wait for reads, so the subagent's
    // reads start at 0 and the Task waits only for Grep's 1000 ms: 1000 + 3500 + 300.
    const reviewed = await callService(getCriticalPath, ctx("agent"), { run_id: run });
    expect(reviewed).toMatchObject({ sequential_ns: 5800 * MS, critical_path_ns: 4800 * MS });
    expect(reviewed.path.map((p) => p.id)).toEqual(["n2", "n3", "n6"]);
    // If the Grep took 100 ms, the 500 ms Read becomes the Task's last dependency.
    const faster = await callService(getCriticalPath, ctx("agent"), { run_id: run, what_if: { node: "n2", duration_ms: 100 } });
    expect(faster).toMatchObject({ critical_path_ns: 4300 * MS, sequential_ns: 4900 * MS, what_if: { node: "n2", duration_ns: 100 * MS, recorded_ns: 1000 * MS } });
    expect(faster.path.map((p) => p.id)).toEqual(["n1", "n3", "n6"]);
    await expect(callService(getCriticalPath, ctx("agent"), { run_id: run, what_if: { node: "n99", duration_ms: 1 } })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });

    // A stored workflow answers the same as the run compiled now.
    const stored = await callService(compileRunWorkflow, ctx("cli"), { run_id: run });
    const fromStored = await callService(getCriticalPath, ctx("agent"), { workflow_id: stored.workflow.workflow_id });
    expect(fromStored).toEqual({ ...reviewed });
  });

  it("walks a Jaeger trace's critical path: exclusive times on the path and per operation", async () => {
    const { ctx, importFixture } = setup();
    const run = await importFixture("jaeger-checkout.json");
    const answer = await callService(getCriticalPath, ctx("agent"), { run_id: run });
    // a1 0–120 with b2 5–35 (c3 8–28 (d4 10–15)) and e5 40–100 (f6 41–51); g7 follows a1 at 130–145.
    expect(answer).toMatchObject({ kind: "spans", trace: "4bf92f3577b34da6a3ce929d0e0e4736", critical_path_ns: 120 * MS, sequential_ns: 135 * MS, speedup_bound: 1.125 });
    expect(answer.path.map((p) => [p.name, p.service, p.critical_ns / MS])).toEqual([
      ["HTTP GET /checkout", "frontend", 30],
      ["GetCart", "frontend", 10],
      ["GetCart", "cartservice", 15],
      ["redis GET", "cartservice", 5],
      ["Charge", "frontend", 50],
      ["Charge", "paymentservice", 10],
    ]);
    expect(answer.operations.find((o) => o.operation === "SendReceipt")).toMatchObject({ service: "paymentservice", critical_ns: 15 * MS, count: 1, traces: 1 });
    await expect(callService(compileRunWorkflow, ctx("agent"), { run_id: run })).rejects.toMatchObject({ code: "NO_TOOL_CALLS" });
    await expect(callService(getCriticalPath, ctx("agent"), { run_id: run, trace_id: "nope" })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    await expect(callService(getCriticalPath, ctx("agent"), { run_id: run, what_if: { node: "n1", duration_ms: 1 } })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
  });

  it("refuses a run without spans, a missing run, and a cycle in a trace v1 file with CYCLE_DETECTED naming its calls", async () => {
    const { root, ctx } = setup();
    writeFileSync(path.join(root, "stacks.folded"), "main;work 10\nmain;idle 5\n");
    const folded = (await callService(importArtifact, ctx("test"), { path: "stacks.folded" })).run_id;
    await expect(callService(getCriticalPath, ctx("agent"), { run_id: folded })).rejects.toMatchObject({ code: "NO_SPANS" });
    await expect(callService(getCriticalPath, ctx("agent"), { run_id: "run_missing" })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    await expect(callService(getCriticalPath, ctx("agent"), {})).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    const trace = {
      format: "emberscope.trace",
      version: 1,
      events: [
        { id: "a", tool: "write_a", status: "ok", side_effect: "write", start: 0, duration_ms: 1, after: ["b"] },
        { id: "b", tool: "write_b", status: "ok", side_effect: "write", start: 2, duration_ms: 1, after: ["a"] },
      ],
    };
    writeFileSync(path.join(root, "cycle.trace.json"), JSON.stringify(trace));
    const cyclic = (await callService(importArtifact, ctx("test"), { path: "cycle.trace.json" })).run_id;
    await expect(callService(compileRunWorkflow, ctx("agent"), { run_id: cyclic })).rejects.toMatchObject({
      code: "CYCLE_DETECTED",
      details: { cycle: [{ call_id: "a", tool: "write_a" }, { call_id: "b", tool: "write_b" }] },
    });
  });
});
