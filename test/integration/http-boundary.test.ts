import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentToken, callService, importArtifact, setAgentAccess, workspaceStatus } from "../../server/services";
import { CSRF_HEADER } from "../../server/http/header-names";
import { initWorkspace } from "../../server/store/workspace";
import { appRoutes, trpcProcedures, workspaceSnapshot, type AppRoute } from "../helpers/http-boundary";
import { csrfTokenOf, rawRequest, startServer, type RawAnswer, type RunningServer } from "../helpers/server";

/**
 * The trust boundary of a real `emberscope serve` (the built app), over real HTTP on loopback.
 * The routes and mutations come from the app/ tree and the tRPC router themselves, so a route or
 * mutation added later is held to the same rules without a change here.
 */

const MCP_ACCEPT = "application/json, text/event-stream";

describe("the HTTP trust boundary of `emberscope serve`", () => {
  let root: string;
  let server: RunningServer;
  let csrf: string;
  let token: string;
  let host: string;
  let facts: { workspaceId: string; runId: string; commitId: string; objectHex: string };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-boundary-"));
    initWorkspace(root).close();
    writeFileSync(path.join(root, "seed.folded"), "main;parse;tokenize 5\nmain;render 3\n");
    writeFileSync(path.join(root, "planted.folded"), "main;planted 1\n");
    const ctx = { locator: { cwd: root, projectRoot: root }, actor: "cli" as const };
    const imported = await callService(importArtifact, ctx, { path: "seed.folded" });
    const status = await callService(workspaceStatus, ctx, {});
    token = (await callService(agentToken, ctx, {})).token;
    server = await startServer(root, ["--workers", "0"]);
    // Agents are answered, so that an MCP call the boundary let through would really import.
    await callService(setAgentAccess, ctx, { enabled: true });
    csrf = await csrfTokenOf(server.url);
    host = new URL(server.url).host;
    const object = (await rawRequest(`${server.url}/api/trpc/corpus.files?input=${encodeURIComponent(JSON.stringify({}))}`)).body;
    const hex = /sha256:([0-9a-f]{64})/.exec(object)?.[1];
    expect(hex, object).toBeDefined();
    facts = { workspaceId: status.workspace_id, runId: imported.run_id, commitId: imported.commit_id, objectHex: hex! };
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** A request a page of another site, an opaque origin or a stale page could send, each otherwise valid (the CSRF token is there). */
  const hostile = (): { name: string; headers: Record<string, string>; reason: string }[] => [
    { name: "Origin: null", headers: { origin: "null", [CSRF_HEADER]: csrf }, reason: "origin_null" },
    { name: "a foreign Origin", headers: { origin: "http://evil.example", [CSRF_HEADER]: csrf }, reason: "origin_not_loopback" },
    { name: "another loopback port's page", headers: { origin: "http://127.0.0.1:1", [CSRF_HEADER]: csrf }, reason: "origin_not_same" },
    { name: "Sec-Fetch-Site: cross-site", headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", [CSRF_HEADER]: csrf }, reason: "cross_site" },
    { name: "a browser request without Origin", headers: { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", [CSRF_HEADER]: csrf }, reason: "origin_missing" },
    { name: "no CSRF token", headers: {}, reason: "csrf_token_missing" },
    { name: "another launch's CSRF token", headers: { [CSRF_HEADER]: "x".repeat(43) }, reason: "csrf_token_invalid" },
  ];

  function reasonOf(answer: RawAnswer): unknown {
    const body = JSON.parse(answer.body);
    return (body.error?.data?.error ?? body.error?.data ?? body.error)?.details?.reason;
  }

  /** What a mutation would change if it were let through: plausible inputs, so "nothing changed" means something. */
  const INPUTS: Record<string, unknown> = {
    "imports.import": { path: "planted.folded" },
    "agent.set_access": { enabled: false },
    "agent.set_detail": { detail: "full" },
  };

  it("finds the routes and mutations to hold to the rules in the app and the router", () => {
    const mutations = trpcProcedures().filter((p) => p.type === "mutation").map((p) => p.path);
    expect(mutations).toEqual(expect.arrayContaining(["imports.import", "agent.set_access", "agent.set_detail", "workspace.init"]));
    const routes = appRoutes();
    expect(routes).toEqual(
      expect.arrayContaining([
        { pattern: "/", kind: "page", methods: ["GET"] },
        { pattern: "/settings", kind: "page", methods: ["GET"] },
        { pattern: "/runs/[runId]", kind: "page", methods: ["GET"] },
        { pattern: "/api/imports", kind: "route", methods: ["POST"] },
        { pattern: "/api/mcp", kind: "route", methods: expect.arrayContaining(["GET", "POST", "DELETE"]) },
      ]),
    );
  });

  it("refuses every tRPC mutation from a null, foreign or cross-site origin, or without this launch's CSRF token, and changes nothing", async () => {
    const mutations = trpcProcedures().filter((p) => p.type === "mutation");
    const before = workspaceSnapshot(root);
    for (const m of mutations) {
      for (const attempt of hostile()) {
        const answer = await rawRequest(`${server.url}/api/trpc/${m.path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...attempt.headers },
          body: JSON.stringify(INPUTS[m.path] ?? {}),
        });
        expect(answer.status, `${m.path} with ${attempt.name}: ${answer.body}`).toBe(403);
        expect(JSON.parse(answer.body).error.data.error.code).toBe("UNAUTHORIZED");
        expect(reasonOf(answer), `${m.path} with ${attempt.name}`).toBe(attempt.reason);
      }
    }
    expect(workspaceSnapshot(root)).toEqual(before);
    // The same request from the workbench's own page goes through: the snapshot would have seen it.
    const own = await rawRequest(`${server.url}/api/trpc/imports.import`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", [CSRF_HEADER]: csrf },
      body: JSON.stringify(INPUTS["imports.import"]),
    });
    expect(own.status, own.body).toBe(200);
    expect((workspaceSnapshot(root).counts as Record<string, number>).runs).toBe((before.counts as Record<string, number>).runs + 1);
  }, 120_000);

  it("refuses every state-changing route handler of the app the same way, and changes nothing", async () => {
    const routes = appRoutes().filter((r) => r.kind === "route" && !r.pattern.startsWith("/api/trpc") && !r.pattern.startsWith("/api/mcp"));
    const changing = routes.flatMap((r) => r.methods.filter((m) => !["GET", "HEAD", "OPTIONS"].includes(m)).map((method) => ({ route: r, method })));
    expect(changing.map((c) => `${c.method} ${c.route.pattern}`)).toContain("POST /api/imports");
    const before = workspaceSnapshot(root);
    for (const { route, method } of changing) {
      for (const attempt of hostile()) {
        const answer = await rawRequest(`${server.url}${concrete(route)}?name=planted.folded`, { method, headers: attempt.headers, body: "main;planted 1\n" });
        expect(answer.status, `${method} ${route.pattern} with ${attempt.name}: ${answer.body}`).toBe(403);
        expect(reasonOf(answer)).toBe(attempt.reason);
      }
    }
    expect(workspaceSnapshot(root)).toEqual(before);
    const own = await rawRequest(`${server.url}/api/imports?name=planted.folded`, { method: "POST", headers: { origin: server.url, [CSRF_HEADER]: csrf }, body: "main;planted 1\n" });
    expect(own.status, own.body).toBe(200);
  }, 60_000);

  it("refuses /api/mcp from a null, foreign or cross-site origin even with the bearer token; a loopback client is answered", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "import_artifact", arguments: { path: "planted.folded" } } });
    const base = { "content-type": "application/json", accept: MCP_ACCEPT, authorization: `Bearer ${token}` };
    const attempts: { headers: Record<string, string>; reason: string }[] = [
      { headers: { origin: "null" }, reason: "origin_null" },
      { headers: { origin: "http://evil.example" }, reason: "origin_not_loopback" },
      { headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" }, reason: "cross_site" },
    ];
    const before = workspaceSnapshot(root);
    for (const method of ["POST", "GET", "DELETE"]) {
      for (const attempt of attempts) {
        const answer = await rawRequest(`${server.url}/api/mcp`, { method, headers: { ...base, ...attempt.headers }, body: method === "POST" ? call : undefined });
        expect(answer.status, `${method} with ${JSON.stringify(attempt.headers)}: ${answer.body}`).toBe(403);
        expect(JSON.parse(answer.body).error.data.details.reason).toBe(attempt.reason);
      }
    }
    expect(workspaceSnapshot(root)).toEqual(before);
    // A browser-based client on another loopback port may call it (it still needs the token).
    const local = await rawRequest(`${server.url}/api/mcp`, { method: "POST", headers: { ...base, origin: "http://localhost:6274", "sec-fetch-site": "same-site" }, body: call });
    expect(local.status, local.body).toBe(200);
    expect(JSON.parse(local.body).result.isError).toBeFalsy();
  }, 60_000);

  /** A route's URL with its dynamic segments filled with records that exist. */
  function concrete(route: AppRoute): string {
    return route.pattern
      .replace("[runId]", facts.runId)
      .replace("[hex]", facts.objectHex)
      .replace("[trpc]", "runs.list");
  }

  it("answers 403 with no workspace data to a rebinding Host on every page and route, whatever the method", async () => {
    const routes = appRoutes();
    const targets = routes.flatMap((r) => r.methods.map((method) => ({ path: concrete(r), method })));
    for (const p of trpcProcedures()) targets.push({ path: `/api/trpc/${p.path}`, method: p.type === "query" ? "GET" : "POST" });
    const secrets = [facts.workspaceId, facts.runId, facts.commitId, facts.objectHex, root, "tokenize"];
    const port = new URL(server.url).port;
    for (const rebound of [`rebind.evil.example:${port}`, "rebind.evil.example", `127.0.0.1.evil.example:${port}`, `localhost:${Number(port) + 1}`, `user@127.0.0.1:${port}`]) {
      for (const { path: target, method } of targets) {
        const answer = await rawRequest(`${server.url}${target}`, {
          method,
          headers: { host: rebound, [CSRF_HEADER]: csrf, authorization: `Bearer ${token}`, "content-type": "application/json", accept: MCP_ACCEPT },
          body: method === "GET" || method === "HEAD" ? undefined : "{}",
        });
        expect(answer.status, `${method} ${target} with Host ${rebound}`).toBe(403);
        for (const secret of secrets) expect(answer.body, `${method} ${target}`).not.toContain(secret);
      }
    }
    // The pages do hold that data: with this server's own Host they show it.
    const home = await rawRequest(`${server.url}/`, { headers: { host } });
    expect(home.status).toBe(200);
    expect(home.body).toContain(facts.commitId);
    const run = await rawRequest(`${server.url}/runs/${facts.runId}`, { headers: { host: `localhost:${port}` } });
    expect(run.status).toBe(200);
  }, 120_000);

  it("lets another site link to a page but not embed it or read the API, and forbids framing", async () => {
    const link = await rawRequest(`${server.url}/`, { headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" } });
    expect(link.status).toBe(200);
    expect(link.headers["x-frame-options"]).toBe("DENY");
    expect(link.headers["content-security-policy"]).toBe("frame-ancestors 'none'");
    const framed = await rawRequest(`${server.url}/settings`, { headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe" } });
    expect(framed.status).toBe(403);
    const read = await rawRequest(`${server.url}/api/session`, { headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty", origin: "http://evil.example" } });
    expect(read.status).toBe(403);
    expect(read.body).not.toContain(csrf);
  });
});
