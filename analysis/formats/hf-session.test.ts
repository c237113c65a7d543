// A Hugging Face session trace written from the Hub's STS-Format description: a session header,
// then message envelopes with toolCalls (arguments as JSON text) and tool messages by toolCallId,
// timestamps in ms: two parallel calls, a failed booking, a repeated weather read, a result
// without its call and a call without its result.
import { describe, expect, it } from "vitest";
import { agentTraceFixture, edgesByCallId, limitationCounts, toolSpans } from "../../test/helpers/tool-spans";
import { parseErrorOf } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { hfSessionImporter } from "./hf-session";
import { detectFormat } from "./index";
import { importToMemory } from "./run";

const SESSION = agentTraceFixture("hf-session.jsonl");

describe("Hugging Face session trace importer", () => {
  it("pairs toolCalls with tool messages: exact spans, times, statuses and edges", async () => {
    const result = await importToMemory(hfSessionImporter, SESSION, { chunkSize: 256 });
    expect(toolSpans(result).map((s) => [s.args.call_id, s.name, s.category, s.status, s.startMs, s.durMs])).toEqual([
      ["c1", "search_flights", "tool", "ok", 0, 1500],
      ["c2", "get_weather", "tool", "ok", 0, 400],
      ["c3", "book_flight", "tool", "error", 2000, 800],
      ["c4", "get_weather", "tool", "ok", 3000, 300],
      ["c9", "(unknown tool)", "tool_result", "ok", 3400, 0],
      ["c5", "send_email", "tool", "unfinished", 5000, 0],
    ]);
    expect(result.summary.rows).toMatchObject({ spans: 6, edges: 4, tracks: 1 });
    expect(edgesByCallId(result)).toEqual({ follows_from: ["c1 → c3", "c2 → c3", "c3 → c4", "c4 → c5"] });
    expect(limitationCounts(result)).toMatchObject({ TOOL_TIMES_APPROXIMATE: 6, TOOL_RESULT_WITHOUT_CALL: 1, TOOL_CALL_WITHOUT_RESULT: 1, TOOL_SIDE_EFFECT_UNKNOWN: 5 });
    expect(result.tables.tracks.map((t) => [t.process_id, t.process_name, t.thread_name])).toEqual([["b1a2c3", "llama.app", "main"]]);
  });

  it("keeps nested arguments as JSON text, and the repeated read with equal arguments", async () => {
    const byId = new Map(toolSpans(await importToMemory(hfSessionImporter, SESSION)).map((s) => [s.args.call_id, s]));
    expect(JSON.parse(byId.get("c1")!.args.arguments as string)).toEqual({ from: "CDG", to: "LIS", dates: { out: "2025-08-01", back: "2025-08-08" }, passengers: [{ type: "adult" }, { type: "child", age: 7 }] });
    expect(byId.get("c4")!.args.arguments).toBe(byId.get("c2")!.args.arguments);
    expect(byId.get("c3")!.args.result).toBe("payment declined");
  });

  it("places a session without timestamps on its message order, and says so", async () => {
    const lines = new TextDecoder().decode(SESSION).trim().split("\n").map((l) => JSON.parse(l));
    const untimed = lines.map(({ timestamp: _t, ...rest }) => JSON.stringify(rest)).join("\n");
    const result = await importToMemory(hfSessionImporter, untimed);
    expect(toolSpans(result).map((s) => [s.args.call_id, s.startMs, s.durMs, s.args.timing])).toEqual([
      ["c1", 0, 2, "logical"],
      ["c2", 0, 1, "logical"],
      ["c3", 3, 1, "logical"],
      ["c4", 5, 1, "logical"],
      ["c9", 7, 0, "logical"],
      ["c5", 9, 0, "logical"],
    ]);
    expect(limitationCounts(result)).toMatchObject({ TOOL_TIMES_LOGICAL: 6 });
  });

  it("fails without a session header or on a broken line, and is detected by its header", async () => {
    expect((await parseErrorOf(hfSessionImporter, '{"type":"message","message":{"role":"user","content":"hi"}}\n')).at.line).toBe(1);
    expect((await parseErrorOf(hfSessionImporter, '{"type":"session","harness":"x","id":"1"}\n{"type":"message",\n')).at.line).toBe(2);
    expect(detectFormat(SESSION, headText(SESSION), "session.jsonl")?.id).toBe("hf-session");
  });
});
