// An OpenAI Chat Completions conversation written from the API's message format: assistant
// messages with tool_calls (arguments as JSON text), tool messages by tool_call_id; two parallel
// calls, a failed refund (is_error, an extension some harnesses write), a repeated read.
import { describe, expect, it } from "vitest";
import { agentTraceFixture, edgesByCallId, limitationCounts, toolSpans } from "../../test/helpers/tool-spans";
import { parseErrorOf } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { detectFormat } from "./index";
import { openaiChatImporter } from "./openai-chat";
import { importToMemory } from "./run";

const CHAT = agentTraceFixture("openai-chat.json");

describe("OpenAI-style chat transcript importer", () => {
  it("makes one span per tool call on the messages' order, with exact edges", async () => {
    const result = await importToMemory(openaiChatImporter, CHAT);
    expect(toolSpans(result).map((s) => [s.args.call_id, s.name, s.status, s.startMs, s.durMs, s.args.timing])).toEqual([
      ["call_1", "get_order", "ok", 0, 1, "logical"],
      ["call_2", "get_customer", "ok", 0, 2, "logical"],
      ["call_3", "refund", "error", 3, 1, "logical"],
      ["call_4", "get_order", "ok", 5, 1, "logical"],
    ]);
    expect(result.summary.rows).toMatchObject({ spans: 4, edges: 3, tracks: 1 });
    expect(edgesByCallId(result)).toEqual({ follows_from: ["call_1 → call_3", "call_2 → call_3", "call_3 → call_4"] });
    expect(limitationCounts(result)).toMatchObject({ TOOL_TIMES_LOGICAL: 4, TOOL_SIDE_EFFECT_UNKNOWN: 4 });
    const byId = new Map(toolSpans(result).map((s) => [s.args.call_id, s]));
    expect(JSON.parse(byId.get("call_3")!.args.arguments as string)).toEqual({ order_id: "A-17", amount: { value: 19.99, currency: "EUR" } });
    expect(byId.get("call_4")!.args.arguments).toBe(byId.get("call_1")!.args.arguments);
  });

  it("reads a bare array of messages and the legacy function_call pair", async () => {
    const messages = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, function_call: { name: "get_weather", arguments: '{"city": "Oslo"}' } },
      { role: "function", name: "get_weather", content: "3°C" },
      { role: "tool", tool_call_id: "nope", content: "stray" },
    ];
    const result = await importToMemory(openaiChatImporter, JSON.stringify(messages));
    expect(toolSpans(result).map((s) => [s.name, s.category, s.status, s.args.arguments])).toEqual([
      ["get_weather", "tool", "ok", '{"city":"Oslo"}'],
      ["(unknown tool)", "tool_result", "ok", undefined],
    ]);
    expect(limitationCounts(result)).toMatchObject({ TOOL_RESULT_WITHOUT_CALL: 1 });
  });

  it("fails on malformed input, and is detected without claiming session traces", async () => {
    expect((await parseErrorOf(openaiChatImporter, '{"messages": [{"role": "user", "content": "hi"},]}')).at.offset).toBeGreaterThan(0);
    expect((await parseErrorOf(openaiChatImporter, '{"messages": [42]}')).at.field).toBe("messages[0]");
    expect(detectFormat(CHAT, headText(CHAT), "conversation.json")?.id).toBe("openai-chat");
    const hf = agentTraceFixture("hf-session.jsonl");
    expect(openaiChatImporter.sniff(hf, headText(hf), "s.jsonl")).toBe(0);
  });
});
