import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { releaseHeldWorkspaces } from "../../server/mcp/held-workspace";
import { handleMcpHttpRequest } from "../../server/mcp/http";
import { handleMcpNodeRequest } from "../../server/mcp/node-http";
import { agentToken, callService, importArtifact, setAgentAccess } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";

interface Sent {
  headers?: Record<string, string>;
  /** A JSON-RPC message (or batch), or raw text sent as is. */
  body: unknown;
}

interface Answer {
  status: number;
  contentType: string | null;
  cacheControl: string | null;
  authenticate: string | null;
  body: unknown;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    cacheControl: response.headers.get("cache-control"),
    authenticate: response.headers.get("www-authenticate"),
    body: text ? JSON.parse(text) : null,
  };
}

/**
 * `emberscope serve` answers plain JSON POSTs itself (server/mcp/json-post.ts) instead of through
 * the SDK's Web-standard transport, which the app route still uses. Both must answer every request
 * alike: the same status, headers and body, successes and refusals.
 */
describe("MCP POSTs answered from the Node request (emberscope serve) and through the SDK's Web transport (app route)", () => {
  let root: string;
  let runId: string;
  let token: string;
  let node: Server;
  let nodeUrl: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-json-post-"));
    initWorkspace(root).close();
    const ctx = { locator: { cwd: root, projectRoot: root }, actor: "cli" as const };
    writeFileSync(path.join(root, "stacks.folded"), "main;parse;tokenize 30\nmain;parse 10\nmain;render;/home/mallory/app.js 25\n");
    runId = (await callService(importArtifact, ctx, { path: "stacks.folded" })).run_id;
    token = (await callService(agentToken, ctx, {})).token;
    await callService(setAgentAccess, ctx, { enabled: true });
    const locator = { cwd: root, projectRoot: root };
    node = createServer((req, res) => void handleMcpNodeRequest(req, res, locator));
    await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
    nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}/api/mcp`;
  });
  afterAll(async () => {
    await new Promise((resolve) => node.close(resolve));
    releaseHeldWorkspaces();
    rmSync(root, { recursive: true, force: true });
  });

  const base = () => ({
    host: new URL(nodeUrl).host,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
    authorization: `Bearer ${token}`,
  });

  async function both(sent: Sent): Promise<{ web: Answer; viaNode: Answer }> {
    const headers = { ...base(), ...sent.headers };
    for (const [k, v] of Object.entries(headers)) if (v === "") delete headers[k as keyof typeof headers];
    const body = typeof sent.body === "string" ? sent.body : JSON.stringify(sent.body);
    const web = await answerOf(await handleMcpHttpRequest(new Request(nodeUrl, { method: "POST", headers, body }), { cwd: root, projectRoot: root }));
    const viaNode = await answerOf(await fetch(nodeUrl, { method: "POST", headers, body }));
    return { web, viaNode };
  }

  const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
  const initialize = (id: number) => ({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  const notification = { jsonrpc: "2.0", method: "notifications/initialized" };

  const cases: [string, Sent, number][] = [
    ["initialize", { body: initialize(1), headers: { "mcp-protocol-version": "" } }, 200],
    ["a notification alone (202, no body)", { body: notification }, 202],
    ["a tool call (redacted hotspots)", { body: call(7, "analyze_hotspots", { run_id: "RUN" }) }, 200],
    ["a tool call answered with a typed error", { body: call(8, "summarize_run", { run_id: "run_missing" }) }, 200],
    ["invalid tool arguments", { body: call(9, "analyze_hotspots", { run_id: "RUN", limit: 0, extra: 1 }) }, 200],
    ["an unknown tool", { body: call(10, "no_such_tool") }, 200],
    ["tools/list", { body: { jsonrpc: "2.0", id: 11, method: "tools/list" } }, 200],
    ["an unknown method", { body: { jsonrpc: "2.0", id: 12, method: "no/such" } }, 200],
    ["a batch of calls and a notification", { body: [call(13, "workspace_status"), notification, call(14, "list_runs", { limit: 1 })] }, 200],
    ["a string id", { body: { ...call(0, "workspace_status"), id: "abc" } }, 200],
    ["two initializations in one batch", { body: [initialize(1), initialize(2)] }, 400],
    ["a batch over 100 messages", { body: Array.from({ length: 101 }, () => notification) }, 400],
    ["a message that is not JSON-RPC", { body: { hello: "world" } }, 400],
    ["a body that is not JSON", { body: "{not json" }, 400],
    ["an Accept without event streams", { body: call(15, "workspace_status"), headers: { accept: "application/json" } }, 406],
    ["a Content-Type that is not JSON", { body: call(16, "workspace_status"), headers: { "content-type": "text/plain" } }, 415],
    ["an unsupported MCP-Protocol-Version", { body: call(17, "workspace_status"), headers: { "mcp-protocol-version": "1999-01-01" } }, 400],
    ["no token", { body: call(18, "workspace_status"), headers: { authorization: "" } }, 401],
    ["a wrong token", { body: call(19, "workspace_status"), headers: { authorization: "Bearer es_wrong" } }, 401],
    ["a foreign Origin", { body: call(21, "workspace_status"), headers: { origin: "http://evil.example" } }, 403],
  ];

  it.each(cases)("%s: the same answer both ways", async (_name, sent, status) => {
    const body = JSON.parse(JSON.stringify(sent.body).replaceAll('"RUN"', JSON.stringify(runId)));
    const { web, viaNode } = await both({ ...sent, body: typeof sent.body === "string" ? sent.body : body });
    expect(web.status).toBe(status);
    expect(viaNode).toEqual(web);
  });

  it("refuses a request with two Authorization headers (as Web headers join them), even when the first is valid", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const headers = Object.entries(base()).flat();
      headers.push("authorization", "Bearer es_other");
      const req = request(nodeUrl, { method: "POST", headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify(call(20, "workspace_status")));
    });
    expect(status).toBe(401);
  });

  it("answers a tool call with a successful, redacted CallToolResult", async () => {
    const { viaNode } = await both({ body: call(30, "analyze_hotspots", { run_id: runId }) });
    const result = (viaNode.body as { result: { isError?: boolean; structuredContent: { rows: { name: string }[]; agent_view: { redacted: Record<string, number> } } } }).result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.rows.map((r) => r.name)).toContain("tokenize");
    expect(JSON.stringify(result)).not.toContain("mallory");
    expect(result.structuredContent.agent_view.redacted.PATH).toBeGreaterThan(0);
    expect(viaNode.cacheControl).toBe("no-store, no-transform");
  });
});
