// A project whose emberscope.toml declares a tools folder holding test/fixtures/workflow-tools,
// and trace v1 documents imported and compiled into stored workflows through the services.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { callService, compileRunWorkflow, importArtifact, showOperation, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { REPO_ROOT } from "./cli";
import { tempProject } from "./project";

export interface TraceEvent {
  id: string;
  tool: string;
  arguments?: unknown;
  result?: unknown;
  start: number;
  end: number;
  side_effect?: "read" | "write" | "unknown";
  after?: string[];
}

/** `shared`: kept across the tests of a suite (removed by the returned `remove`), not after each test. */
export function workflowProject(options: { shared?: boolean } = {}) {
  const root = options.shared ? mkdtempSync(path.join(tmpdir(), "emberscope-wf-")) : tempProject("emberscope-wf-");
  const remove = () => rmSync(root, { recursive: true, force: true });
  initWorkspace(root).close();
  // The tools module imports zod as a project's own would: from the project's node_modules.
  symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
  mkdirSync(path.join(root, "tools"));
  copyFileSync(path.join(REPO_ROOT, "test", "fixtures", "workflow-tools", "test-tools.ts"), path.join(root, "tools", "test-tools.ts"));
  writeFileSync(path.join(root, "emberscope.toml"), '[tools]\nfolder = "tools"\nconcurrency = 8\n');
  const locator = { cwd: root, projectRoot: root };
  const ctx = (actor: ServiceContext["actor"] = "cli"): ServiceContext => ({ locator, actor });
  let traces = 0;
  /** Imports a trace v1 document of these events and compiles it: the stored workflow's id. */
  const compile = async (events: TraceEvent[], inputs: Record<string, unknown> = {}) => {
    const file = `trace-${++traces}.json`;
    const trace = { format: "emberscope.trace", version: 1, inputs, events: events.map((e) => ({ status: "ok", side_effect: "read", after: [], ...e })) };
    writeFileSync(path.join(root, file), JSON.stringify(trace));
    const { run_id } = await callService(importArtifact, ctx("test"), { path: file });
    const { workflow } = await callService(compileRunWorkflow, ctx(), { run_id });
    return workflow.workflow_id;
  };
  /** Polls the operation until it ends. */
  const settle = async (operationId: string, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const op = await callService(showOperation, ctx(), { operation_id: operationId });
      if (["succeeded", "failed", "cancelled"].includes(op.state)) return op;
      if (Date.now() > deadline) throw new Error(`operation ${operationId} still ${op.state}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { root, ctx, compile, settle, remove };
}
