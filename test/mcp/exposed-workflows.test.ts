// Compiled workflows as tools of Emberscope's own MCP server (issue 25, build item 5): a person
// exposes a reviewed read-only workflow (CLI, or the page with the person's session; never an
// agent), a real MCP SDK client over HTTP on loopback (`emberscope serve`) lists it with its input
// and output schemas and calls it — a live replay with the agent's runtime inputs, audited — and
// it is refused when not exposed, unreviewed, side-effecting, or changed since it was exposed.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../../server/mcp/tools";
import { agentToken, approveWorkflowTool, callService, exposeWorkflow, getWorkflow, listAuditEvents, listExposedWorkflows, reviewTool, setAgentAccess } from "../../server/services";
import { CSRF_HEADER } from "../../server/http/header-names";
import type { ObjectId } from "../../server/store/object-store";
import { openWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";
import { csrfTokenOf, rawRequest, startServer, type RunningServer } from "../helpers/server";
import { workflowProject } from "../helpers/workflow-project";
import { httpClient, memoryClient, type AgentClient } from "./clients";

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
    server = await startServer(p.root, ["--workers", "0"]);
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
    expect(answer.value).toMatchObject({ workflow_id: wf, tool: tool(), calls: 2, outputs: { n2: { value: "value-of-value-of-zulu" } } });
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
    expect(calls[2].details).toMatchObject({ transport: "http" });
    expect(audit.items.find((e) => e.action === "workflows.expose")).toMatchObject({ actor: "cli", target: wf, details: { tool: tool(), revision: 1 } });
  });

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
