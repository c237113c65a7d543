import { describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../../server/mcp/tools";
import { openWorkspace } from "../../server/store/workspace";
import { stdioClient } from "./clients";
import { suiteDemoProject } from "./project";
import { agentWalkthrough, expectDemoFindings } from "./walkthrough";

describe("MCP over stdio (`emberscope mcp serve`, the real CLI as a child process)", () => {
  it("an agent alone, following recovery hints, initializes the workspace, captures twice, finds countPrimes and compares", async () => {
    const { root, remove } = suiteDemoProject({ init: false });
    const agent = await stdioClient(root);
    try {
      const { tools } = await agent.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(MCP_TOOLS.map((t) => t.name).sort());
      const result = await agentWalkthrough(agent);
      expect(result.steps.slice(0, 3)).toEqual(["workspace_status:WORKSPACE_NOT_FOUND", "initialize_workspace:ok", "workspace_status:ok"]);
      expectDemoFindings(result);
      // Starting `mcp serve` was the consent: no AGENT_ACCESS_DISABLED, and every call after init is audited.
      expect(result.steps.join(" ")).not.toContain("AGENT_ACCESS_DISABLED");
      expect(agent.stderr()).toContain("serving on stdio");
    } finally {
      await agent.close();
    }
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const actions = (ws.db.prepare("SELECT action FROM audit_events WHERE actor = 'agent' ORDER BY seq").all() as { action: string }[]).map((r) => r.action);
      expect(actions).toEqual(expect.arrayContaining(["mcp.initialize_workspace", "mcp.plan_capture", "mcp.execute_capture_plan", "mcp.compare_runs"]));
    } finally {
      ws.close();
      remove();
    }
  }, 120_000);

  it("a typed error crosses stdio as isError with a tool recovery", async () => {
    const { root, remove } = suiteDemoProject({ init: true });
    const agent = await stdioClient(root);
    try {
      const missing = await agent.call("summarize_run", { run_id: "run_nope" });
      expect(!missing.ok && missing.error).toMatchObject({ code: "RUN_NOT_FOUND", retryable: false });
      const exists = await agent.call("initialize_workspace");
      expect(!exists.ok && exists.error.recovery).toEqual({ tool: "workspace_status", arguments: {}, safe_to_repeat: true });
    } finally {
      await agent.close();
      remove();
    }
  }, 60_000);
});
