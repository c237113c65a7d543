import path from "node:path";
import { describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../../server/mcp/tools";
import { CLI, REPO_ROOT, runProcess } from "../helpers/cli";
import { suiteDemoProject } from "./project";

// The official MCP Inspector (pinned dev dependency) in CLI mode, launching `emberscope mcp serve`
// over stdio itself. Its package declares Node ≥ 22, but its CLI runs on this Node 20.
const INSPECTOR = path.join(REPO_ROOT, "node_modules", ".bin", "mcp-inspector");

async function inspect(root: string, method: string[]): Promise<{ code: number; json: any; stderr: string }> {
  const result = await runProcess(INSPECTOR, ["--cli", process.execPath, CLI, "mcp", "serve", "--project-root", root, "--method", ...method], { cwd: root });
  if (result.json === undefined) throw new Error(`the Inspector printed no JSON (exit ${result.code}): ${result.stdout}\n${result.stderr}`);
  return result;
}

describe("the official MCP Inspector (CLI mode) against `emberscope mcp serve`", () => {
  it("lists every tool and calls workspace_status", async () => {
    const { root, remove } = suiteDemoProject({ init: true });
    try {
      const listed = await inspect(root, ["tools/list"]);
      expect(listed.code).toBe(0);
      expect(listed.json.tools.map((t: { name: string }) => t.name).sort()).toEqual(MCP_TOOLS.map((t) => t.name).sort());
      for (const tool of listed.json.tools) {
        expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
        expect(tool.annotations).toHaveProperty("readOnlyHint");
      }

      const status = await inspect(root, ["tools/call", "--tool-name", "workspace_status"]);
      expect(status.code).toBe(0);
      expect(status.json.isError ?? false).toBe(false);
      expect(status.json.structuredContent).toMatchObject({ schema_version: expect.any(Number), project_root: ".", counts: { runs: 0 } });
      expect(status.json.structuredContent.head_commit_id).toMatch(/^cmt_/);
      expect(status.json.content[0].text).toContain("Workspace ws_");
    } finally {
      remove();
    }
  }, 60_000);

  it("shows a typed error with its recovery for a missing run", async () => {
    const { root, remove } = suiteDemoProject({ init: true });
    try {
      const missing = await inspect(root, ["tools/call", "--tool-name", "summarize_run", "--tool-arg", "run_id=run_nope"]);
      expect(missing.json.isError).toBe(true);
      const error = JSON.parse(missing.json.content[0].text);
      expect(error).toMatchObject({ code: "RUN_NOT_FOUND", retryable: false, recovery: { tool: "list_runs", safe_to_repeat: true } });
      expect(missing.json._meta["emberscope/error"]).toEqual(error);
    } finally {
      remove();
    }
  }, 60_000);
});
