// Compiled workflows as tools of Emberscope's own MCP server (issue 25, build item 5): a person
// exposes a reviewed read-only workflow (CLI, or the page with the person's session; never an
// agent), a real MCP SDK client over HTTP on loopback (`emberscope serve` with one pool worker)
// lists it with its input and output schemas and calls it — a live replay with the agent's runtime
// inputs, run on the worker pool and published as a run the answer and the audit row cite — and it
// is refused when not exposed, unreviewed, side-effecting, or changed since it was exposed. A
// handler that ignores its signal is cut at its timeout and ends with its worker.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../../server/mcp/tools";
import { agentToken, approveWorkflowTool, callService, exposeWorkflow, getCriticalPath, getWorkflow, getWorkflowRun, listAuditEvents, listExposedWorkflows, listOperations, reviewTool, setAgentAccess } from "../../server/services";
import { CSRF_HEADER } from "../../server/http/header-names";
import type { ObjectId } from "../../server/store/object-store";
import { openWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";
import { csrfTokenOf, rawRequest, startServer, type RunningServer } from "../helpers/server";
import { workflowProject } from "../helpers/workflow-project";
import { httpClient, memoryClient, type AgentClient } from "./clients";

/** Whether a process is alive (signal 0), a zombie not counted: a killed child its parent has not reaped yet runs nothing. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

/** lookup(input key) → lookup(its value): two reads, the second fed by the first. */
const TWO_LOOKUPS = [
  { id: "l1", tool: "lookup", arguments: { key: "alpha-key" }, result: { value: "value-of-alpha-key" }, start: 0, end: 20 },
  { id: "l2", tool: "lookup", arguments: { key: "value-of-alpha-key" }, result: { value: "value-of-value-of-alpha-key" }, start: 30, end: 50 },
];

describe("workflows exposed as MCP tools, over Streamable HTTP on loopback", () => {
  let p: ReturnType<typeof workflowProject>;
  let server: RunningServer;
  let agent: AgentClient;
  let token: string;
  let wf: string;
  let writer: string;
  let unreviewed: string;
  const tool = () => `workflow_${wf.slice(3)}`;

  beforeAll(async () => {
    p = workflowProject({ shared: true });
    await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read" });
    await callService(reviewTool, p.ctx(), { tool: "record", side_effect: "write" });
    wf = await p.compile(TWO_LOOKUPS, { key: "alpha-key" });
    writer = await p.compile([
      { id: "c1", tool: "lookup", arguments: { key: "bravo-key" }, result: { value: "value-of-bravo-key" }, start: 0, end: 20 },
      { id: "c2", tool: "record", side_effect: "write", arguments: { value: "value-of-bravo-key" }, result: { written: true }, start: 30, end: 40, after: ["c1"] },
    ]);
    unreviewed = await p.compile([{ id: "s1", tool: "slow", arguments: { ms: 5 }, result: { slept: 5 }, start: 0, end: 5 }]);
    token = (await callService(agentToken, p.ctx(), {})).token;
    server = await startServer(p.root, ["--workers", "1"]);
    await callService(setAgentAccess, p.ctx(), { enabled: true });
    agent = await httpClient(server.url, token);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    p?.remove();
  });

  const workflowTools = async () => (await agent.client.listTools()).tools.filter((t) => t._meta?.["emberscope/workflow"] !== undefined);

  it("lists no workflow tool until a person exposes one, and refuses a call of one (WORKFLOW_NOT_EXPOSED)", async () => {
    const { tools } = await agent.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(MCP_TOOLS.map((t) => t.name).sort());
    const refused = await agent.call(tool(), {});
    expect(refused).toMatchObject({ ok: false, error: { code: "WORKFLOW_NOT_EXPOSED" } });
  });

  it("refuses to expose an unreviewed workflow (TOOL_NOT_REVIEWED) and a side-effecting one even with an approval (WORKFLOW_NOT_READ_ONLY)", async () => {
    const cli = await runCli(["workflows", "expose", unreviewed, "--json", "--project-root", p.root], { cwd: p.root });
    expect(cli.code).toBe(8);
    expect(cli.json).toMatchObject({ code: "TOOL_NOT_REVIEWED", details: { tools: [{ tool: "slow", refusal: "TOOL_NOT_REVIEWED" }] } });
    await callService(approveWorkflowTool, p.ctx(), { workflow_id: writer, tool: "record" });
    await expect(callService(exposeWorkflow, p.ctx(), { workflow_id: writer })).rejects.toMatchObject({ code: "WORKFLOW_NOT_READ_ONLY", details: { tools: [{ tool: "record", refusal: "WORKFLOW_NOT_READ_ONLY" }] } });
    expect(await workflowTools()).toEqual([]);
  });

  it("an agent cannot expose a workflow: no MCP tool does it, the service refuses actor agent, and tRPC refuses without the person's session", async () => {
    const { tools } = await agent.client.listTools();
    expect(tools.filter((t) => /expose/.test(t.name))).toEqual([]);
    expect(await agent.call("expose_workflow", { workflow_id: wf })).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });
    await expect(callService(exposeWorkflow, p.ctx("agent"), { workflow_id: wf })).rejects.toMatchObject({ code: "POLICY_DENIED" });
    const csrf = await csrfTokenOf(server.url);
    for (const headers of [{}, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const answer = await rawRequest(`${server.url}/api/trpc/workflows.expose`, {
        method: "POST",
        headers: { "content-type": "application/json", [CSRF_HEADER]: csrf, ...headers },
        body: JSON.stringify({ workflow_id: wf }),
      });
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.data.error.code).toBe("PERSON_SESSION_REQUIRED");
    }
    expect(await workflowTools()).toEqual([]);
    expect((await callService(listExposedWorkflows, p.ctx(), {})).exposures).toEqual([]);
  });

  it("once a person exposes it (CLI), agents list it with its runtime inputs and output schema and call it: a live replay with their inputs, audited", async () => {
    const cli = await runCli(["workflows", "expose", wf, "--note", "two reads", "--json", "--project-root", p.root], { cwd: p.root });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.json).toMatchObject({ exposure: { tool: tool(), state: "exposed", current: true, revision: 1, changed_by: "cli" } });

    const all = (await agent.client.listTools()).tools;
    expect(all.length).toBe(MCP_TOOLS.length + 1);
    // The built-in budget (≤ 28) counts built-ins only; the exposed workflow is listed beside them.
    expect(all.filter((t) => t._meta?.["emberscope/workflow"] === undefined).length).toBeLessThanOrEqual(28);
    const [listed] = await workflowTools();
    expect(listed.name).toBe(tool());
    expect(listed.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(listed.inputSchema).toMatchObject({ type: "object", additionalProperties: false, properties: { key: { type: "string" } } });
    expect(listed.inputSchema.required ?? []).toEqual([]);
    expect(listed.outputSchema).toMatchObject({ properties: { outputs: { properties: { n2: { properties: { value: { type: "string" } } } } }, agent_view: expect.any(Object) } });

    const answer = await agent.call(tool(), { key: "zulu" });
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.value).toMatchObject({ workflow_id: wf, tool: tool(), calls: 2, outputs: { n2: { value: "value-of-value-of-zulu" } }, workflow_run_id: expect.stringMatching(/^wfr_/), replay_run_id: expect.any(String) });
    // Without arguments: the recorded inputs, so the recorded result.
    const recorded = await agent.call(tool(), {});
    expect(recorded).toMatchObject({ ok: true, value: { outputs: { n2: { value: "value-of-value-of-alpha-key" } } } });
    // Arguments the tool does not take, or of the wrong type: typed refusals before anything runs.
    expect(await agent.call(tool(), { nope: 1 })).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS", details: { argument: "nope" } } });
    expect(await agent.call(tool(), { key: 5 })).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS", details: { argument: "key" } } });

    const audit = await callService(listAuditEvents, p.ctx(), { limit: 100 });
    const calls = audit.items.filter((e) => e.action === `mcp.${tool()}`);
    expect(calls.map((e) => [e.actor, e.target, e.result_code])).toEqual([
      ["agent", null, "INVALID_ARGUMENTS"],
      ["agent", null, "INVALID_ARGUMENTS"],
      ["agent", wf, "OK"],
      ["agent", wf, "OK"],
      ["agent", null, "WORKFLOW_NOT_EXPOSED"],
    ]);
    expect(calls[3].details).toMatchObject({ transport: "http", workflow_run_id: answer.value.workflow_run_id, replay_run_id: answer.value.replay_run_id });
    expect(audit.items.find((e) => e.action === "workflows.expose")).toMatchObject({ actor: "cli", target: wf, details: { tool: tool(), revision: 1 } });
  });

  it("runs each call on the worker pool as a live workflow run and publishes its replay as a run with a span per call, cited by the answer and its audit row", async () => {
    const answer = await agent.call(tool(), { key: "whiskey" });
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    const { workflow_run_id: runId, replay_run_id: replayId } = answer.value as { workflow_run_id: string; replay_run_id: string };
    expect(answer.text).toContain(runId);
    expect(answer.text).toContain(replayId);
    expect(answer.links).toContain(`emberscope://runs/${replayId}`);
    // The run is a workflow run of the agent's, whose operation a pool worker (not the server) held.
    const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: runId });
    expect(run.workflow_run).toMatchObject({ workflow_id: wf, kind: "run", mode: "live", state: "succeeded", created_by: "agent", replay_run_id: replayId });
    expect(run.operation).toMatchObject({ kind: "workflow_run", state: "succeeded" });
    expect(run.operation.worker?.pid).toEqual(expect.any(Number));
    expect([server.pid, process.pid]).not.toContain(run.operation.worker!.pid);
    expect(run.summary).toMatchObject({ state: "succeeded", counts: { succeeded: 2 }, outputs: { n2: { value: "value-of-value-of-whiskey" } } });
    // The replay's spans: both calls, the second after the first, as live replay publishes them.
    const replay = await callService(getCriticalPath, p.ctx(), { run_id: replayId });
    expect(replay.kind).toBe("workflow");
    expect(replay.path).toHaveLength(2);
    expect(replay.path[1].start_ns).toBeGreaterThanOrEqual(replay.path[0].end_ns);
    // An agent can follow the link.
    const resource = await agent.client.readResource({ uri: `emberscope://runs/${replayId}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ run_id: replayId, status: "succeeded", details: { workflow_run_id: runId, replay_mode: "live" } });
    const audit = (await callService(listAuditEvents, p.ctx(), { limit: 20 })).items.find((e) => e.action === `mcp.${tool()}`);
    expect(audit).toMatchObject({ actor: "agent", target: wf, result_code: "OK", details: { workflow_run_id: runId, replay_run_id: replayId } });
  });

  it("cuts a handler that ignores its signal at its contract's timeout (TOOL_TIMEOUT), and the worker it ran on retires with it", async () => {
    await callService(reviewTool, p.ctx(), { tool: "hang", side_effect: "read" });
    const hung = await p.compile([{ id: "h", tool: "hang", arguments: { key: "some-key" }, result: { value: "v" }, start: 0, end: 5 }]);
    await callService(exposeWorkflow, p.ctx(), { workflow_id: hung });
    // `hang` would resolve after 20 s, ignoring its signal; its timeout is 300 ms.
    const answer = await agent.call(`workflow_${hung.slice(3)}`, {});
    expect(answer).toMatchObject({ ok: false, error: { code: "TOOL_TIMEOUT", details: { timeout_ms: 300, node: "n1", workflow_run_id: expect.stringMatching(/^wfr_/), replay_run_id: expect.any(String) } } });
    if (answer.ok) return;
    const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: String(answer.error.details.workflow_run_id) });
    expect(run.operation).toMatchObject({ state: "failed", error: { code: "WORKFLOW_RUN_FAILED" } });
    // Its worker exits rather than keep the abandoned handler; the supervisor starts another.
    await expect.poll(() => alive(run.operation.worker!.pid!), { timeout: 10_000 }).toBe(false);
    const audit = (await callService(listAuditEvents, p.ctx(), { limit: 20 })).items.find((e) => e.action === `mcp.workflow_${hung.slice(3)}`);
    expect(audit).toMatchObject({ result_code: "TOOL_TIMEOUT", target: hung, details: { workflow_run_id: answer.error.details.workflow_run_id, replay_run_id: answer.error.details.replay_run_id } });
    await callService(exposeWorkflow, p.ctx(), { workflow_id: hung, withdraw: true });
  });

  it("a client's cancel of an exposed call cancels its workflow run on the worker pool", async () => {
    await callService(reviewTool, p.ctx(), { tool: "slow", side_effect: "read" });
    const long = await p.compile([{ id: "w", tool: "slow", arguments: { ms: 30_000 }, result: { slept: 30_000 }, start: 0, end: 30_000 }]);
    await callService(exposeWorkflow, p.ctx(), { workflow_id: long });
    const abort = new AbortController();
    const call = agent.client.callTool({ name: `workflow_${long.slice(3)}`, arguments: {} }, undefined, { signal: abort.signal, timeout: 120_000 });
    const running = async () => (await callService(listOperations, p.ctx(), { active: true })).items.find((o) => o.kind === "workflow_run" && o.phase === "nodes");
    await expect.poll(running, { timeout: 30_000 }).toBeTruthy();
    const op = (await running())!;
    abort.abort();
    await expect(call).rejects.toThrow();
    // The 30 s call is aborted on the worker, well before it would have ended.
    await expect.poll(async () => (await callService(listOperations, p.ctx(), { limit: 20 })).items.find((o) => o.operation_id === op.operation_id)?.state, { timeout: 10_000 }).toBe("cancelled");
    await callService(exposeWorkflow, p.ctx(), { workflow_id: long, withdraw: true });
  }, 60_000);

  it("stops a worker whose handler blocks it for ever: TOOL_TIMEOUT soon after the contract's timeout, other calls answered meanwhile, no worker left busy", async () => {
    await callService(reviewTool, p.ctx(), { tool: "spin", side_effect: "read" });
    const spun = await p.compile([{ id: "s", tool: "spin", arguments: { key: "spin-key" }, result: { value: "v" }, start: 0, end: 5 }]);
    await callService(exposeWorkflow, p.ctx(), { workflow_id: spun });
    let answered = false;
    const pending = agent.call(`workflow_${spun.slice(3)}`, {}).finally(() => (answered = true));
    // The worker is inside the handler's loop: its operation is at its calls and its lease stops being renewed.
    const spinning = async () => (await callService(listOperations, p.ctx(), { active: true })).items.find((o) => o.kind === "workflow_run" && o.phase === "nodes");
    await expect.poll(spinning, { timeout: 30_000 }).toBeTruthy();
    const callsStarted = Date.now();
    const status = await agent.call("workspace_status", {});
    expect(status.ok).toBe(true);
    expect(answered).toBe(false);
    const answer = await pending;
    const elapsed = Date.now() - callsStarted;
    expect(answer).toMatchObject({ ok: false, error: { code: "TOOL_TIMEOUT", details: { reason: "worker_stopped", timeout_ms: 400, workflow_run_id: expect.stringMatching(/^wfr_/) } } });
    // From its first call: the 400 ms timeout, the watchdog's grace (750 ms) and a second without a
    // lease renewal; well before the lease (15 s) would have expired and reconciliation ended it.
    expect(elapsed).toBeLessThan(8_000);
    if (answer.ok) return;
    const run = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: String(answer.error.details.workflow_run_id) });
    expect(run.workflow_run.state).toBe("failed");
    expect(run.operation).toMatchObject({ state: "failed", error: { code: "TOOL_TIMEOUT" } });
    const stopped = run.operation.worker!.pid!;
    await expect.poll(() => alive(stopped), { timeout: 5_000 }).toBe(false);
    expect(alive(server.pid)).toBe(true);
    expect((await callService(listOperations, p.ctx(), { active: true })).items).toEqual([]);
    await callService(exposeWorkflow, p.ctx(), { workflow_id: spun, withdraw: true });
    // The pool serves the next call on a fresh worker.
    const next = await agent.call(tool(), { key: "xray" });
    expect(next).toMatchObject({ ok: true, value: { outputs: { n2: { value: "value-of-value-of-xray" } } } });
    if (!next.ok) return;
    const again = await callService(getWorkflowRun, p.ctx(), { workflow_run_id: next.value.workflow_run_id });
    expect(again.operation.worker!.pid).not.toBe(stopped);
  }, 60_000);

  it("a run nobody waits on (the CLI's --detach) whose handler blocks its worker: the worker's watchdog ends it once its lease is lost, and another worker runs what comes next", async () => {
    const spun = await p.compile([{ id: "s", tool: "spin", arguments: { key: "spin-again" }, result: { value: "v" }, start: 0, end: 5 }]);
    const started = await runCli(["workflows", "run", spun, "--mode", "live", "--detach", "--json", "--project-root", p.root], { cwd: p.root });
    expect(started.code, started.stderr).toBe(0);
    const operationId = started.json.operation.operation_id as string;
    const worker = async () => (await callService(listOperations, p.ctx(), { limit: 20 })).items.find((o) => o.operation_id === operationId)?.worker?.pid ?? null;
    await expect.poll(worker, { timeout: 30_000 }).not.toBe(null);
    const blocked = (await worker())!;
    // Nobody waits on it: the worker (supervised, or a detached one ensureWorker started) ends itself a lease's length (15 s) into the block.
    await expect.poll(() => alive(blocked), { timeout: 30_000, interval: 500 }).toBe(false);
    expect(alive(server.pid)).toBe(true);
    await expect.poll(async () => (await callService(listOperations, p.ctx(), { active: true })).items.map((o) => o.operation_id), { timeout: 15_000 }).not.toContain(operationId);
    // A fresh worker runs what comes next.
    const next = await agent.call(tool(), { key: "whiskey" });
    expect(next).toMatchObject({ ok: true, value: { outputs: { n2: { value: "value-of-value-of-whiskey" } } } });
    if (!next.ok) return;
    expect((await callService(getWorkflowRun, p.ctx(), { workflow_run_id: next.value.workflow_run_id })).operation.worker!.pid).not.toBe(blocked);
  }, 90_000);

  it("refuses the tool once a contract changes (WORKFLOW_EXPOSURE_STALE) until a person exposes it again", async () => {
    await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read", note: "looked again" });
    expect(await agent.call(tool(), { key: "zulu" })).toMatchObject({ ok: false, error: { code: "WORKFLOW_EXPOSURE_STALE", details: { reason: "contract_changed", tool: "lookup" } } });
    expect((await callService(listExposedWorkflows, p.ctx(), { workflow_id: wf })).exposures[0]).toMatchObject({ current: false, stale_reason: "contract_changed" });
    const again = await callService(exposeWorkflow, p.ctx(), { workflow_id: wf, expected_revision: 1 });
    expect(again.exposure).toMatchObject({ revision: 2, current: true });
    expect(await agent.call(tool(), { key: "yankee" })).toMatchObject({ ok: true, value: { outputs: { n2: { value: "value-of-value-of-yankee" } } } });
  });

  it("withdrawing removes the tool from tools/list and its calls are refused (WORKFLOW_NOT_EXPOSED)", async () => {
    const cli = await runCli(["workflows", "expose", wf, "--withdraw", "--json", "--project-root", p.root], { cwd: p.root });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.json).toMatchObject({ exposure: { state: "withdrawn", revision: 3 } });
    expect(await workflowTools()).toEqual([]);
    expect(await agent.call(tool(), {})).toMatchObject({ ok: false, error: { code: "WORKFLOW_NOT_EXPOSED", details: { workflow_id: wf } } });
    await callService(exposeWorkflow, p.ctx(), { workflow_id: wf });
    expect((await workflowTools()).map((t) => t.name)).toEqual([tool()]);
  });

  it("refuses the tool once the workflow's stored content no longer hashes to what was exposed (WORKFLOW_EXPOSURE_STALE)", async () => {
    const digest = (await callService(getWorkflow, p.ctx(), { workflow_id: wf })).workflow.digest;
    const ws = openWorkspace({ cwd: p.root, projectRoot: p.root });
    const file = ws.objects.pathOf(digest as ObjectId);
    ws.close();
    const doc = JSON.parse(readFileSync(file, "utf8"));
    doc.nodes[0].tool = "record";
    chmodSync(file, 0o644);
    writeFileSync(file, JSON.stringify(doc));
    expect(await agent.call(tool(), {})).toMatchObject({ ok: false, error: { code: "WORKFLOW_EXPOSURE_STALE", details: { reason: "workflow_changed" } } });
  });
});

describe("a long-lived MCP server announces exposure changes", () => {
  it("sends notifications/tools/list_changed when a person exposes or withdraws a workflow", async () => {
    const p = workflowProject();
    await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read" });
    const wf = await p.compile(TWO_LOOKUPS, { key: "alpha-key" });
    const agent = await memoryClient(p.root);
    try {
      expect(agent.client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      let changes = 0;
      agent.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
      await callService(exposeWorkflow, p.ctx(), { workflow_id: wf });
      await expect.poll(() => changes, { timeout: 5000 }).toBe(1);
      expect((await agent.client.listTools()).tools.filter((t) => t.name.startsWith("workflow_")).map((t) => t.name)).toEqual([`workflow_${wf.slice(3)}`]);
      await callService(exposeWorkflow, p.ctx(), { workflow_id: wf, withdraw: true });
      await expect.poll(() => changes, { timeout: 5000 }).toBe(2);
      expect((await agent.client.listTools()).tools.filter((t) => t.name.startsWith("workflow_"))).toEqual([]);
    } finally {
      await agent.close();
    }
  }, 60_000);
});
