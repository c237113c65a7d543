// Trace v1 documents written by hand from the schema (analysis/workflow/trace-v1.ts).
import { describe, expect, it } from "vitest";
import { edgesByCallId, limitationCounts, toolSpans } from "../../test/helpers/tool-spans";
import { parseErrorOf } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { TraceV1 } from "../workflow/trace-v1";
import { detectFormat } from "./index";
import { importToMemory } from "./run";
import { traceV1Importer } from "./trace-v1";

const TRACE = {
  format: "emberscope.trace",
  version: 1,
  id: "run-42",
  source: "my-agent",
  inputs: { repo: "calc", issue: 7 },
  events: [
    { id: "e1", tool: "search", arguments: { query: "sum", filters: { path: ["src", "test"] } }, result: { files: ["src/sum.ts"] }, status: "ok", side_effect: "read", start: "2025-07-14T09:30:00.000Z", end: "2025-07-14T09:30:00.250Z" },
    { id: "e2", tool: "read_file", arguments: { path: "src/sum.ts" }, result: "export const sum = (a, b) => a - b;", status: "ok", side_effect: "read", start: "2025-07-14T09:30:00.300Z", duration_ms: 20, after: ["e1"] },
    { id: "e3", tool: "read_file", arguments: { path: "src/sum.ts" }, result: "export const sum = (a, b) => a - b;", status: "ok", side_effect: "read", start: "2025-07-14T09:30:00.300Z", duration_ms: 25, after: ["e1"] },
    { id: "e4", tool: "delegate", arguments: { task: "fix" }, status: "ok", start: "2025-07-14T09:30:01.000Z", end: "2025-07-14T09:30:03.000Z", after: ["e2", "e3"] },
    { id: "e5", tool: "write_file", arguments: { path: "src/sum.ts", content: "…" }, status: "error", error: "read-only file system", side_effect: "write", start: "2025-07-14T09:30:01.500Z", end: "2025-07-14T09:30:01.600Z", agent: "fixer", parent_id: "e4" },
  ],
};

describe("trace v1 importer", () => {
  it("writes each event as a span with its recorded times, parents as child edges and after as follows_from", async () => {
    const result = await importToMemory(traceV1Importer, JSON.stringify(TRACE));
    const spans = toolSpans(result);
    expect(spans.map((s) => [s.name, s.category, s.status, s.startMs, s.durMs, s.track, s.depth, s.args.side_effect, s.args.timing])).toEqual([
      ["search", "tool", "ok", 0, 250, 0, 0, "read", "recorded"],
      ["read_file", "tool", "ok", 300, 20, 0, 0, "read", "recorded"],
      ["read_file", "tool", "ok", 300, 25, 0, 0, "read", "recorded"],
      ["delegate", "tool", "ok", 1000, 2000, 0, 0, "unknown", "recorded"],
      ["write_file", "tool", "error", 1500, 100, 1, 0, "write", "recorded"],
    ]);
    expect(spans[4].parent).toBe(spans[3].spanId);
    expect(spans[4].args.error).toBe("read-only file system");
    expect(JSON.parse(spans[0].args.arguments as string)).toEqual({ query: "sum", filters: { path: ["src", "test"] } });
    expect(spans[0].args.result).toBe('{"files":["src/sum.ts"]}');
    expect(result.summary.rows).toMatchObject({ spans: 5, edges: 5, tracks: 2 });
    expect(edgesByCallId(result)).toEqual({
      child: ["e4 → e5"],
      follows_from: ["e1 → e2", "e1 → e3", "e2 → e4", "e3 → e4"],
    });
    expect(result.summary.metadata).toMatchObject({ trace_inputs: '{"repo":"calc","issue":7}', trace_id: "run-42" });
    expect(limitationCounts(result)).toMatchObject({ TOOL_SIDE_EFFECT_UNKNOWN: 1 });
    expect(Object.keys(limitationCounts(result)).filter((code) => code.startsWith("TOOL_"))).toEqual(["TOOL_SIDE_EFFECT_UNKNOWN"]);
  });

  it("places a trace without times in order, one millisecond apart, and says so", async () => {
    const events = TRACE.events.map(({ start: _s, end: _e, duration_ms: _d, ...rest }: Record<string, unknown>) => rest);
    const result = await importToMemory(traceV1Importer, JSON.stringify({ ...TRACE, events }));
    expect(toolSpans(result).map((s) => [s.startMs, s.durMs, s.args.timing])).toEqual([1, 2, 3, 4, 5].map((ms) => [ms - 1, 0, "logical"]));
    expect(limitationCounts(result)).toMatchObject({ TOOL_TIMES_LOGICAL: 5 });
  });

  it("refuses documents the schema refuses, naming the field and never an input key", async () => {
    const bad = (patch: Record<string, unknown>) => JSON.stringify({ ...TRACE, ...patch });
    expect((await parseErrorOf(traceV1Importer, bad({ version: 2 }))).at.field).toBe("version");
    expect((await parseErrorOf(traceV1Importer, bad({ events: [{ ...TRACE.events[0], side_effect: "delete" }] }))).at.field).toBe("events[0].side_effect");
    expect((await parseErrorOf(traceV1Importer, bad({ events: [TRACE.events[0], { ...TRACE.events[1], after: ["nope"] }] }))).at.field).toBe("events[1].after[0]");
    expect((await parseErrorOf(traceV1Importer, bad({ events: [TRACE.events[0], TRACE.events[0]] }))).at.field).toBe("events[1].id");
    expect((await parseErrorOf(traceV1Importer, '{"format": "emberscope.trace", "version": 1, "events": [')).at.offset).toBeGreaterThan(0);
    expect(TraceV1.safeParse(TRACE).success).toBe(true);
  });

  it("is detected by its format field, and claims no other JSON", () => {
    const bytes = new TextEncoder().encode(JSON.stringify(TRACE, null, 2));
    expect(detectFormat(bytes, headText(bytes), "session.json")?.id).toBe("trace-v1");
    const other = new TextEncoder().encode('{"traceEvents": [], "format": "other"}');
    expect(traceV1Importer.sniff(other, headText(other), "x.json")).toBe(0);
  });
});
