// `workflows codegen`: a compiled workflow written as a standalone TypeScript MCP server project,
// "installed" offline from the app's own node_modules (a symlink: the versions its package.json
// pins are the app's), then its own `npm test` run as a child process: it builds with tsc and
// calls the tool through the SDK client in frozen mode, expecting the recorded results.
import { readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { callService, codegenWorkflow } from "../../server/services";
import { REPO_ROOT, runCli, runProcess } from "../helpers/cli";
import { workflowProject } from "../helpers/workflow-project";

describe("workflows codegen", () => {
  it("writes a project whose own test passes: the tool over the SDK client in frozen mode gives the recorded result", async () => {
    const p = workflowProject();
    const wf = await p.compile(
      [
        { id: "c1", tool: "lookup", arguments: { key: "alpha-key" }, result: { value: "value-of-alpha-key" }, start: 0, end: 20 },
        { id: "c2", tool: "Read", arguments: { path: "notes/alpha-key.md" }, result: "first line\nvalue-of-alpha-key: done", start: 0, end: 25 },
        { id: "c3", tool: "record", side_effect: "write", arguments: { value: "value-of-alpha-key", line: "value-of-alpha-key: done" }, result: { written: true }, start: 30, end: 40, after: ["c1", "c2"] },
      ],
      { ticket: "alpha-key" },
    );
    const out = await runCli(["workflows", "codegen", wf, "--out", "generated", "--json"], { cwd: p.root });
    expect(out.code).toBe(0);
    const result = JSON.parse(out.stdout);
    expect(result.files).toEqual(["README.md", "package.json", "src/handlers.ts", "src/main.ts", "src/runtime.ts", "src/server.ts", "src/workflow.ts", "test/workflow.test.ts", "tsconfig.json"]);
    const dir = path.join(p.root, "generated");
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    const appPkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    expect(pkg.dependencies["@modelcontextprotocol/sdk"]).toBe(appPkg.dependencies["@modelcontextprotocol/sdk"]);
    // The references survived: the write's arguments come from the two reads.
    expect(readFileSync(path.join(dir, "src", "workflow.ts"), "utf8")).toContain('"$ref": "n1"');

    // Again into the same (now not empty) folder: refused; by an agent: refused.
    await expect(callService(codegenWorkflow, p.ctx(), { workflow_id: wf, out: dir })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    await expect(callService(codegenWorkflow, p.ctx("agent"), { workflow_id: wf, out: path.join(p.root, "other") })).rejects.toMatchObject({ code: "POLICY_DENIED" });

    symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
    const test = await runProcess("npm", ["test", "--silent"], { cwd: dir });
    expect(test.stderr + test.stdout).toMatch(/pass 3/);
    expect(test.code).toBe(0);
  }, 180_000);
});
