import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { releaseHeldWorkspaces } from "../../server/mcp/held-workspace";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { CLI, runCli } from "../helpers/cli";
import { tempProject } from "../helpers/project";
import { startServer } from "../helpers/server";
import { memoryClient } from "./clients";

afterEach(() => releaseHeldWorkspaces());

const DEPTH = 20_000;

/**
 * A tool call's arguments with `{"a":…}` nested DEPTH deep under `argument`, as JSON text: a real
 * client cannot send it (JSON.stringify recurses), a hostile one writes the bytes itself.
 */
function deepCall(id: number, tool: string, argument: string, shallow: Record<string, unknown> = {}): string {
  const deep = `${'{"a":'.repeat(DEPTH)}1${"}".repeat(DEPTH)}`;
  const rest = JSON.stringify(shallow).slice(1, -1);
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{${rest ? `${rest},` : ""}"${argument}":${deep}}}}`;
}

const DEEP_CALLS: [string, string, Record<string, unknown>][] = [
  ["list_runs", "kind", {}],
  ["plan_capture", "parameters", { adapter: "node-cpu", workload: "x" }],
  ["workspace_status", "extra", {}],
];

function agentAudit(root: string): { action: string; result_code: string; arguments_digest: string | null }[] {
  const ws = openWorkspace({ cwd: root, projectRoot: root });
  try {
    return ws.db.prepare("SELECT action, result_code, arguments_digest FROM audit_events WHERE actor = 'agent' ORDER BY seq").all() as never;
  } finally {
    ws.close();
  }
}

type RawAnswer = { result?: { isError?: boolean; content: { text: string }[] } };

function expectDeepRefusals(answers: RawAnswer[], root: string) {
  for (const answer of answers) {
    expect(answer.result?.isError).toBe(true);
    expect(JSON.parse(answer.result!.content[0].text)).toMatchObject({ code: "INVALID_ARGUMENTS", details: { reason: "nested_too_deep", max_depth: 64 } });
  }
  const rows = agentAudit(root);
  expect(rows.map((r) => [r.action, r.result_code])).toEqual([...DEEP_CALLS.map(([tool]) => [`mcp.${tool}`, "INVALID_ARGUMENTS"]), ["mcp.workspace_status", "OK"]]);
  for (const row of rows) expect(row.arguments_digest).toMatch(/^[0-9a-f]{16}$/);
}

describe("no MCP call is answered without an audit row", () => {
  it("stdio (`emberscope mcp serve`): arguments nested 20,000 deep are refused with a typed error before the tool runs, and the refusal is audited", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const child = spawn(process.execPath, [CLI, "mcp", "serve", "--project-root", root], { cwd: root, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
    const answers = new Map<number, unknown>();
    let buffered = "";
    child.stdout.on("data", (d: Buffer) => {
      buffered += d.toString();
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, nl)) as { id?: number };
        buffered = buffered.slice(nl + 1);
        if (typeof message.id === "number") answers.set(message.id, message);
      }
    });
    const answer = async (id: number) => {
      for (const started = Date.now(); !answers.has(id); await new Promise((r) => setTimeout(r, 20))) if (Date.now() - started > 60_000) throw new Error(`no answer to ${id}`);
      return answers.get(id) as never;
    };
    try {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`);
      await answer(0);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      DEEP_CALLS.forEach(([tool, argument, shallow], i) => child.stdin.write(`${deepCall(i + 1, tool, argument, shallow)}\n`));
      const refusals: RawAnswer[] = [];
      for (let i = 1; i <= DEEP_CALLS.length; i++) refusals.push(await answer(i));
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "workspace_status", arguments: {} } })}\n`);
      expect((await answer(9)) as object).toMatchObject({ result: { structuredContent: { project_root: "." } } });
      expectDeepRefusals(refusals, root);
    } finally {
      child.kill();
    }
  });

  it("HTTP (`emberscope serve`, /api/mcp): the same calls are refused and audited", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const token = (await runCli(["mcp", "token", "--project-root", root], { cwd: root })).stdout.trim().split("\n").pop()!;
    const server = await startServer(root, ["--workers", "0"]);
    try {
      expect((await runCli(["agent-access", "on", "--project-root", root], { cwd: root })).code).toBe(0);
      const post = async (body: string) => {
        const response = await fetch(`${server.url}/api/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-06-18" },
          body,
        });
        expect(response.status).toBe(200);
        return (await response.json()) as never;
      };
      const refusals: RawAnswer[] = [];
      for (const [i, [tool, argument, shallow]] of DEEP_CALLS.entries()) refusals.push(await post(deepCall(i + 1, tool, argument, shallow)));
      expect(await post(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "workspace_status", arguments: {} } }))).toMatchObject({ result: { structuredContent: { project_root: "." } } });
      expectDeepRefusals(refusals, root);
    } finally {
      await server.stop();
    }
  });

  it("audits a call to a tool that does not exist", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const agent = await memoryClient(root, { held: true });
    try {
      const answer = await agent.call("purge_everything", { really: true });
      expect(!answer.ok && answer.error.code).toBe("INVALID_ARGUMENTS");
    } finally {
      await agent.close();
    }
    expect(agentAudit(root).map((r) => [r.action, r.result_code])).toEqual([["mcp.unknown_tool", "INVALID_ARGUMENTS"]]);
  });

  it("withholds the answer, and says why, when the audit log cannot be written", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    // The fault: the store refuses every insert into the audit log (as a full disk or a broken file would).
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    ws.db.exec("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;");
    ws.close();
    const agent = await memoryClient(root, { held: true });
    try {
      const answer = await agent.call("workspace_status");
      expect(answer.ok).toBe(false);
      if (!answer.ok) {
        expect(answer.error).toMatchObject({ code: "AUDIT_FAILED", retryable: true, details: { action: "mcp.workspace_status", outcome: "OK" } });
        expect(JSON.stringify(answer.raw)).not.toContain("workspace_id");
      }
    } finally {
      await agent.close();
    }
  });
});
