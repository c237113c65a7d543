import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../../server/mcp/tools";
import { REPO_ROOT, runCli } from "../helpers/cli";
import { demoProject } from "../helpers/demo";
import { tempProject } from "../helpers/project";

describe("MCP commands of the CLI", () => {
  it("`mcp inspect --json` prints the catalog from the tool registry, and docs/mcp.md lists the same tools", async () => {
    const r = await runCli(["mcp", "inspect", "--json"], { cwd: REPO_ROOT });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tools.map((t: { name: string }) => t.name)).toEqual(MCP_TOOLS.map((t) => t.name));
    expect(r.json.prompts).toEqual([]);
    expect(r.json.resource_templates).toHaveLength(7);
    const importTool = r.json.tools.find((t: { name: string }) => t.name === "import_artifact");
    expect(importTool.inputSchema.required).toEqual(["path"]);
    expect(importTool.inputSchema.additionalProperties).toBe(false);
    const doc = readFileSync(path.join(REPO_ROOT, "docs", "mcp.md"), "utf8");
    for (const t of MCP_TOOLS) expect(doc).toContain(`| \`${t.name}\` | \`${t.service.name}\` |`);
  });

  it("`agent-access on|off|status` switches access for running servers and records each change in the audit log", async () => {
    const root = demoProject();
    const status = await runCli(["agent-access", "status", "--json"], { cwd: root });
    expect(status.json).toMatchObject({ enabled: false, detail: "redacted", token_generation: 0 });
    const on = await runCli(["agent-access", "on", "--detail", "full", "--json"], { cwd: root });
    // No server runs for this project, so none answers agents (a server launched later starts off).
    expect(on.json).toMatchObject({ enabled: false, enabled_at: expect.any(String), detail: "full", servers: [] });
    const off = await runCli(["agent-access", "off"], { cwd: root });
    expect(off.stdout).toMatch(/agent access\s+off/);
    const bad = await runCli(["agent-access", "maybe", "--json"], { cwd: root });
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "ACTION" } });
    const { openWorkspace } = await import("../../server/store/workspace");
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const actions = (ws.db.prepare("SELECT action FROM audit_events WHERE actor = 'cli' ORDER BY seq").all() as { action: string }[]).map((a) => a.action);
      expect(actions).toEqual(expect.arrayContaining(["agent.set_detail", "agent.access_on", "agent.access_off"]));
    } finally {
      ws.close();
    }
  });

  it("`mcp token` shows the same token until `--rotate` replaces it; the token is alone on the last line", async () => {
    const root = demoProject();
    const first = await runCli(["mcp", "token"], { cwd: root });
    const last = (s: string) => s.trimEnd().split("\n").pop()!;
    expect(last(first.stdout)).toMatch(/^es_[A-Za-z0-9_-]+$/);
    expect(last((await runCli(["mcp", "token"], { cwd: root })).stdout)).toBe(last(first.stdout));
    const rotated = await runCli(["mcp", "token", "--rotate"], { cwd: root });
    expect(rotated.stdout).toContain("Rotated");
    expect(last(rotated.stdout)).not.toBe(last(first.stdout));
    const missing = await runCli(["mcp", "token", "--json", "--project-root", tempProject()], { cwd: root });
    expect(missing.code).toBe(3);
    expect(missing.json.code).toBe("WORKSPACE_NOT_FOUND");
  });
});
