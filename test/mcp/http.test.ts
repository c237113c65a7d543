import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli";
import { waitFor } from "../helpers/demo";
import { launchChromium, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";
import { httpClient } from "./clients";
import { suiteDemoProject } from "./project";
import { agentWalkthrough, expectDemoFindings } from "./walkthrough";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

function post(url: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${url}/api/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(INITIALIZE),
  });
}

async function tokenOf(root: string, rotate = false): Promise<string> {
  const r = await runCli(["mcp", "token", "--project-root", root, ...(rotate ? ["--rotate"] : [])], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split("\n");
  return lines[lines.length - 1];
}

// The workspace exists before the server starts: the endpoint's token belongs to a workspace.
describe("MCP over Streamable HTTP at /api/mcp (the built app via `emberscope serve`)", () => {
  let root: string;
  let remove: () => void;
  let server: RunningServer;
  let token: string;

  beforeAll(async () => {
    ({ root, remove } = suiteDemoProject({ init: true }));
    token = await tokenOf(root);
    server = await startServer(root, ["--workers", "0"]);
  });
  afterAll(async () => {
    await server?.stop();
    remove?.();
  });

  it("`mcp token` prints the usable token alone on its last line and stores only its hash", async () => {
    expect(token).toMatch(/^es_[A-Za-z0-9_-]{40,}$/);
    expect(await tokenOf(root)).toBe(token);
    const { openWorkspace } = await import("../../server/store/workspace");
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const stored = (ws.db.prepare("SELECT group_concat(value, ' ') AS v FROM workspace_meta").get() as { v: string }).v;
      expect(stored).not.toContain(token);
    } finally {
      ws.close();
    }
  });

  it("refuses a request without a token (401), with a wrong token (401) and from a foreign Origin (403)", async () => {
    const none = await post(server.url, {});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await none.json()).error.data.code).toBe("UNAUTHORIZED");
    expect((await post(server.url, { authorization: "Bearer es_wrong" })).status).toBe(401);
    const foreign = await post(server.url, { authorization: `Bearer ${token}`, origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.data.details.reason).toBe("origin_not_loopback");
    // fetch() cannot set Host; a DNS-rebinding page's request arrives with the attacker's host name.
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/api/mcp`, { method: "POST", headers: { host: "evil.example:80", authorization: `Bearer ${token}`, "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify(INITIALIZE));
    });
    expect(rebound).toBe(403);
    const local = await post(server.url, { authorization: `Bearer ${token}`, origin: server.url });
    expect(local.status).toBe(200);
  });

  it("answers uncompressed and uncached, and refuses a body over 4 MB with 413 before parsing it", async () => {
    const ok = await post(server.url, { authorization: `Bearer ${token}`, "accept-encoding": "gzip, br" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-encoding")).toBeNull();
    expect(ok.headers.get("cache-control")).toBe("no-store, no-transform");
    const huge = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, padding: "x".repeat(5 * 1024 * 1024) } }),
    });
    expect(huge.status).toBe(413);
    expect((await huge.json()).error.message).toMatch(/exceeds/);
    // Without a token the body is never read either: its declared size is refused first, and a small one gets 401.
    const anonymous = await fetch(`${server.url}/api/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(5 * 1024 * 1024) });
    expect(anonymous.status).toBe(413);
    const small = await fetch(`${server.url}/api/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(1024) });
    expect(small.status).toBe(401);
  });

  it("answers AGENT_ACCESS_DISABLED until a person switches access on, then the agent walkthrough succeeds", async () => {
    const agent = await httpClient(server.url, token);
    try {
      const refused = await agent.call("workspace_status");
      expect(!refused.ok && refused.error).toMatchObject({ code: "AGENT_ACCESS_DISABLED", retryable: true });
      expect(!refused.ok && refused.error.recovery).toBeUndefined();
      const on = await runCli(["agent-access", "on", "--json", "--project-root", root], { cwd: root });
      expect(on.json).toMatchObject({ enabled: true, detail: "redacted" });
      // Over HTTP the workspace exists already; the agent still follows recovery hints from there.
      const exists = await agent.call("initialize_workspace");
      expect(!exists.ok && exists.error.recovery?.tool).toBe("workspace_status");
      const result = await agentWalkthrough(agent);
      expect(result.steps[0]).toBe("workspace_status:ok");
      expectDemoFindings(result);
    } finally {
      await agent.close();
    }
  }, 120_000);

  it("streams progress for execute_capture_plan and a client's cancellation (a separate stateless request) cancels its operation", async () => {
    const agent = await httpClient(server.url, token);
    try {
      const plan = await agent.call("plan_capture", { adapter: "measure", workload: "slow" });
      expect(plan.ok).toBe(true);
      if (!plan.ok) return;
      const progress: string[] = [];
      const abort = new AbortController();
      const call = agent.client.callTool({ name: "execute_capture_plan", arguments: { plan_token: plan.value.plan_token } }, undefined, {
        signal: abort.signal,
        onprogress: (p) => progress.push(p.message ?? ""),
        timeout: 60_000,
      });
      await waitFor(() => progress.length, (n) => n > 0);
      expect(progress[0]).toMatch(/running/);
      abort.abort("stop");
      await expect(call).rejects.toThrow();
      const runs = await waitFor(
        () => agent.call("list_runs", { limit: 1 }),
        (r) => r.ok && r.value.items[0]?.status === "cancelled",
      );
      expect(runs.ok && runs.value.items[0].title).toContain("slow");
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("lists agent calls in the settings page's audit log, where a person can switch access off", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      await page.goto(`${server.url}/settings`);
      // Until this browser is signed in as the person, the switches are locked and the page says how.
      await page.getByTestId("sign-in-help").waitFor();
      expect(await page.getByTestId("agent-access-toggle").isDisabled()).toBe(true);
      // The way a person gets the credential: the one-time link `emberscope serve` announced.
      await page.goto(server.signInUrl);
      expect(new URL(page.url()).search).toBe("");
      await page.goto(`${server.url}/settings`);
      expect(await page.getByTestId("person-session").textContent()).toBe("signed in as you");
      await page.getByTestId("audit-table").waitFor();
      expect(await page.getByTestId("agent-access-state").textContent()).toBe("on");
      const text = await page.getByTestId("audit-table").textContent();
      expect(text).toContain("mcp.analyze_hotspots");
      expect(text).toContain("AGENT_ACCESS_DISABLED");
      await page.screenshot({ path: screenshotPath("mcp-settings-audit"), fullPage: true });
      await page.getByTestId("agent-access-toggle").click();
      await page.waitForFunction(() => document.querySelector('[data-testid="agent-access-state"]')?.textContent === "off");
      await page.screenshot({ path: screenshotPath("mcp-settings-off") });
    } finally {
      await browser.close();
    }
    const agent = await httpClient(server.url, token);
    try {
      const refused = await agent.call("list_runs");
      expect(!refused.ok && refused.error.code).toBe("AGENT_ACCESS_DISABLED");
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("a rotated token replaces the old one at once; access is off again after a server restart", async () => {
    const fresh = await tokenOf(root, true);
    expect(fresh).not.toBe(token);
    expect((await post(server.url, { authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await post(server.url, { authorization: `Bearer ${fresh}` })).status).toBe(200);
    token = fresh;
    await runCli(["agent-access", "on", "--project-root", root], { cwd: root });
    const before = await httpClient(server.url, token);
    expect((await before.call("list_runs")).ok).toBe(true);
    await before.close();
    await server.stop();
    server = await startServer(root, ["--workers", "0"]);
    const after = await httpClient(server.url, token);
    try {
      const refused = await after.call("list_runs");
      expect(!refused.ok && refused.error.code).toBe("AGENT_ACCESS_DISABLED");
    } finally {
      await after.close();
    }
  }, 60_000);
});
