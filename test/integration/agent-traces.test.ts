// Agent tool-call traces and Jaeger traces end to end: each fixture (test/fixtures/agent-traces)
// detected, imported by the import service into a real workspace (SQLite, Parquet, DuckDB) and its
// spans read back through the trace window, with counts written out from the file by hand.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { callService, importArtifact, traceWindow, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-traces");

function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
  const copy = (fixture: string, name = fixture) => {
    writeFileSync(path.join(root, name), readFileSync(path.join(FIXTURES, fixture)));
    return name;
  };
  return { ctx, copy };
}

const HOUR_NS = 3600 * 1e9;

describe("agent and service traces through the import service", () => {
  it("imports a Claude Code session: its tool calls as spans of category tool, the subagent on its own track", async () => {
    const { ctx, copy } = setup();
    const result = await callService(importArtifact, ctx, { path: copy("claude-code-session.jsonl", "7d1c3b9e.jsonl") });
    expect(result).toMatchObject({ format: "claude-code", rows: expect.objectContaining({ spans: 10, edges: 11, tracks: 2 }) });
    expect(result.limitations.map((l) => l.code)).toEqual(expect.arrayContaining(["TOOL_TIMES_APPROXIMATE", "TOOL_RESULT_WITHOUT_CALL", "TOOL_CALL_WITHOUT_RESULT", "TOOL_SIDE_EFFECT_UNKNOWN"]));
    const window = await callService(traceWindow, ctx, { run_id: result.run_id, start_ns: 0, end_ns: HOUR_NS });
    expect(window.tracks.map((t) => t.thread_name)).toEqual(["main", "subagent 1"]);
    const calls = window.spans.filter((s) => s.category === "tool");
    expect(calls).toHaveLength(9);
    const bash = calls.find((s) => JSON.parse(s.args!).call_id === "toolu_03")!;
    expect(bash).toMatchObject({ name: "Bash", status: "error", start_ns: 3_000_000_000, dur_ns: 4_000_000_000 });
    expect(JSON.parse(bash.args!)).toMatchObject({ side_effect: "unknown", timing: "approximate", arguments: '{"command":"npm test -- sum","description":"Run the sum test"}' });
  });

  it("imports a Jaeger trace: one track per service, parents from CHILD_OF", async () => {
    const { ctx, copy } = setup();
    const result = await callService(importArtifact, ctx, { path: copy("jaeger-checkout.json", "checkout.json") });
    expect(result).toMatchObject({ format: "jaeger-json", rows: expect.objectContaining({ spans: 7, edges: 6, tracks: 3 }) });
    const window = await callService(traceWindow, ctx, { run_id: result.run_id, start_ns: 0, end_ns: HOUR_NS });
    expect(window.tracks.map((t) => t.process_name)).toEqual(["frontend", "cartservice", "paymentservice"]);
    expect(window.spans.filter((s) => s.status === "error").map((s) => s.name)).toEqual(["Charge", "Charge"]);
    const root = window.spans.find((s) => s.name === "HTTP GET /checkout")!;
    expect(window.spans.filter((s) => s.parent_span_id === root.span_id).map((s) => s.name).sort()).toEqual(["Charge", "GetCart"]);
  });
});
