import { describe, expect, it } from "vitest";
import { MCP_TOOL_NAMES, MCP_TOOLS, SERVED_BY, toolForOperation } from "../../server/mcp/tools";
import { SERVICES } from "../../server/services";

describe("recovery hints name a tool an agent has", () => {
  it("maps each tool's own operation to it, and operations served through another tool to that tool", () => {
    for (const t of MCP_TOOLS) expect(toolForOperation(t.service.name)).toBe(t.name);
    expect(toolForOperation("workflows.get")).toBe("get_workflow");
    expect(toolForOperation("workflows.compile")).toBe("get_workflow");
    expect(toolForOperation("evidence.stack_examples")).toBe("get_frame_neighbours");
    expect(toolForOperation("experiments.get")).toBe("get_experiment");
    expect(toolForOperation("tools.review")).toBeUndefined(); // a person's act: no tool
  });

  it("serves only real operations, through registered tools that take the operation's identifying argument", () => {
    const operations = new Set(SERVICES.map((s) => s.name));
    for (const [operation, tool] of Object.entries(SERVED_BY)) {
      expect(operations).toContain(operation);
      expect(MCP_TOOL_NAMES).toContain(tool);
      const service = SERVICES.find((s) => s.name === operation)!;
      const target = MCP_TOOLS.find((t) => t.name === tool)!;
      const wanted = Object.keys((service.input as unknown as { shape: Record<string, unknown> }).shape).filter((k) => k.endsWith("_id") && k !== "commit_id");
      const offered = Object.keys((target.service.input as unknown as { shape: Record<string, unknown> }).shape);
      for (const key of wanted) expect(offered, `${operation} → ${tool}`).toContain(key);
    }
  });
});
