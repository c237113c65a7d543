import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CSRF_HEADER } from "../../server/http/header-names";
import { agentToken, callService } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";
import { workspaceSnapshot } from "../helpers/http-boundary";
import { csrfTokenOf, rawRequest, signIn, startServer, type RunningServer } from "../helpers/server";

/**
 * What only the person may do — switch agent access, choose the detail agents see — needs the
 * person's credential: the session cookie a one-time sign-in link gives a browser, or the CLI.
 * Neither a page of the workbench alone (the CSRF token) nor an agent's bearer token suffices.
 */

describe("the person's session on `emberscope serve`", () => {
  let root: string;
  let server: RunningServer;
  let csrf: string;
  let token: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-person-"));
    initWorkspace(root).close();
    token = (await callService(agentToken, { locator: { cwd: root, projectRoot: root }, actor: "cli" }, {})).token;
    server = await startServer(root, ["--workers", "0"]);
    csrf = await csrfTokenOf(server.url);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const mutate = (procedure: string, input: unknown, headers: Record<string, string> = {}) =>
    rawRequest(`${server.url}/api/trpc/${procedure}`, { method: "POST", headers: { "content-type": "application/json", [CSRF_HEADER]: csrf, ...headers }, body: JSON.stringify(input) });
  const errorOf = (body: string) => JSON.parse(body).error?.data?.error;
  const status = async () => (await runCli(["agent-access", "status", "--json", "--project-root", root], { cwd: root })).json;

  it("refuses agent.set_access and agent.set_detail over tRPC without the person's cookie — an agent's bearer token or a forged cookie neither — and changes nothing", async () => {
    const before = workspaceSnapshot(root);
    const port = new URL(server.url).port;
    for (const headers of [{}, { authorization: `Bearer ${token}` }, { cookie: `emberscope_person_${port}=${"A".repeat(43)}` }, { cookie: `emberscope_person_1=${"A".repeat(43)}` }] as Record<string, string>[]) {
      for (const [procedure, input] of [
        ["agent.set_access", { enabled: true }],
        ["agent.set_detail", { detail: "full" }],
      ] as const) {
        const answer = await mutate(procedure, input, headers);
        expect(answer.status, `${procedure} with ${JSON.stringify(headers)}`).toBe(403);
        expect(errorOf(answer.body)).toMatchObject({ code: "PERSON_SESSION_REQUIRED", details: { reason: "person_session_missing" } });
      }
    }
    expect(workspaceSnapshot(root)).toEqual(before);
    expect(await status()).toMatchObject({ enabled: false, detail: "redacted", servers: [{ pid: server.pid, url: server.url, agent_access: false }] });
    // The settings page explains how to get the credential, and its switches are locked.
    const settings = await rawRequest(`${server.url}/settings`);
    expect(settings.body).toContain('data-testid="sign-in-help"');
    expect(settings.body).toContain("emberscope serve link");
    expect(settings.body).toMatch(/data-testid="agent-access-toggle"[^>]*disabled|disabled[^>]*data-testid="agent-access-toggle"/);
    expect(JSON.parse((await rawRequest(`${server.url}/api/session`)).body).person).toBe(false);
  });

  it("the announced one-time link sets an HttpOnly SameSite=Strict cookie and redirects to the clean URL; with it the person's switches work, and the CLI status reports what the server does", async () => {
    const { cookie, answer } = await signIn(server.signInUrl);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe("/");
    expect(answer.headers["referrer-policy"]).toBe("no-referrer");
    const setCookie = String(answer.headers["set-cookie"]);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    expect(cookie).toMatch(new RegExp(`^emberscope_person_${new URL(server.url).port}=`));
    // One time only.
    const again = await signIn(server.signInUrl);
    expect(again.cookie).toBeNull();
    expect(again.answer.headers.location).toBe("/settings?sign_in=refused");

    expect(JSON.parse((await rawRequest(`${server.url}/api/session`, { headers: { cookie: cookie! } })).body).person).toBe(true);
    const on = await mutate("agent.set_access", { enabled: true }, { cookie: cookie! });
    expect(on.status, on.body).toBe(200);
    expect(JSON.parse(on.body).result.data).toMatchObject({ enabled: true });
    const full = await mutate("agent.set_detail", { detail: "full" }, { cookie: cookie! });
    expect(full.status, full.body).toBe(200);
    expect(await status()).toMatchObject({ enabled: true, detail: "full", servers: [{ pid: server.pid, agent_access: true }] });
    const settings = await rawRequest(`${server.url}/settings`, { headers: { cookie: cookie! } });
    expect(settings.body).not.toContain('data-testid="sign-in-help"');
    expect(settings.body).toContain("signed in as you");
    // The CLI's switch reaches the running server too (it is the person at this machine).
    const off = await runCli(["agent-access", "off", "--detail", "redacted", "--json", "--project-root", root], { cwd: root });
    expect(off.json).toMatchObject({ enabled: false, servers: [{ pid: server.pid, agent_access: false }] });
    const db = new Database(path.join(root, ".emberscope", "emberscope.sqlite"), { readonly: true });
    try {
      const actions = (db.prepare("SELECT actor || ' ' || action AS a FROM audit_events ORDER BY seq").all() as { a: string }[]).map((r) => r.a);
      expect(actions).toEqual(expect.arrayContaining(["web session.sign_in", "web agent.access_on", "web agent.set_detail", "cli agent.access_off"]));
    } finally {
      db.close();
    }
  });

  it("`emberscope serve link` makes a new one-time link for each running server", async () => {
    const made = await runCli(["serve", "link", "--json", "--project-root", root], { cwd: root });
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.servers).toHaveLength(1);
    const link = made.json.servers[0].sign_in_url as string;
    expect(link.startsWith(`${server.url}/sign-in?code=`)).toBe(true);
    const first = await signIn(link);
    expect(first.cookie).not.toBeNull();
    expect((await mutate("agent.set_detail", { detail: "redacted" }, { cookie: first.cookie! })).status).toBe(200);
    expect((await signIn(link)).cookie).toBeNull();
    // A made-up code is refused.
    expect((await signIn(`${server.url}/sign-in?code=${"B".repeat(43)}`)).cookie).toBeNull();
  });

  it("a cookie of an earlier launch no longer works; a killed server's registration is ignored, then removed by the next start", async () => {
    const { cookie } = await signIn((await runCli(["serve", "link", "--json", "--project-root", root], { cwd: root })).json.servers[0].sign_in_url);
    expect(cookie).not.toBeNull();
    const killed = server;
    await new Promise<void>((resolve) => {
      killed.process.once("exit", () => resolve());
      killed.process.kill("SIGKILL");
    });
    const afterKill = await status();
    expect(afterKill).toMatchObject({ enabled: false, servers: [] });
    const db = () => new Database(path.join(root, ".emberscope", "emberscope.sqlite"), { readonly: true });
    const rows = (d: Database.Database) => (d.prepare("SELECT pid FROM servers").all() as { pid: number }[]).map((r) => r.pid);
    let d = db();
    expect(rows(d)).toEqual([killed.pid]);
    d.close();

    server = await startServer(root, ["--workers", "0"]);
    csrf = await csrfTokenOf(server.url);
    d = db();
    expect(rows(d)).toEqual([server.pid]);
    d.close();
    const port = new URL(server.url).port;
    const stale = await mutate("agent.set_access", { enabled: true }, { cookie: `emberscope_person_${port}=${cookie!.split("=")[1]}` });
    expect(errorOf(stale.body).code).toBe("PERSON_SESSION_REQUIRED");
    expect(await status()).toMatchObject({ enabled: false, servers: [{ pid: server.pid, agent_access: false }] });
    // A clean stop removes the registration.
    await server.stop();
    d = db();
    expect(rows(d)).toEqual([]);
    d.close();
    const noServer = await runCli(["serve", "link", "--project-root", root], { cwd: root });
    expect(noServer.stdout).toContain("No server is running");
  }, 90_000);
});
