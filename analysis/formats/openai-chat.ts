/**
 * OpenAI-style chat transcripts: one JSON document, `{"messages": [...]}` (a Chat Completions
 * request or a saved conversation) or the array of messages alone. An assistant message's
 * `tool_calls` [{id, function: {name, arguments}}] (arguments: JSON text) are one batch of
 * parallel calls; a `role: "tool"` message answers one by `tool_call_id`. The legacy
 * `function_call` / `role: "function"` pair is read too (answered by name, in order).
 *
 * Each call is one span (tool-calls.ts): name = the function, category "tool", args with call_id,
 * side_effect unknown, arguments (JSON text) and result (the tool message's content). Transcripts
 * carry no clock, so calls are placed on the messages' order, one millisecond apart (timing
 * logical, and a limitation says so), unless messages carry a `timestamp` (ms or ISO) or
 * `created_at`. A tool message with `is_error`/`isError` true is status error. `follows_from`
 * edges link each batch to the calls answered since the previous batch.
 */
import { parseJsonDocument, readBounded } from "../io/json-documents";
import { isoMs } from "./claude-code";
import { EvidenceParseError } from "./errors";
import { ToolCallLog, writeToolCalls, type MessageTime } from "./tool-calls";
import type { FormatImporter } from "./types";

const FORMAT = "openai-chat";
const MAIN = "main";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** A message time: epoch ms (seconds when below 1e11, as `created` fields write them) or ISO text. */
export function chatTimeMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value < 1e11 ? value * 1000 : value;
  return isoMs(value);
}

/**
 * One chat message into the log: an assistant's tool calls (`tool_calls` or `toolCalls`) as a
 * batch, a tool message (`tool_call_id` or `toolCallId`) as a result. Shared with hf-session.ts.
 */
export class ChatToolCalls {
  private messages = 0;
  /** Legacy function calls waiting for their answer, by function name. */
  private readonly legacy = new Map<string, string[]>();
  private legacyCount = 0;

  constructor(readonly log: ToolCallLog) {}

  message(message: Record<string, unknown>, at: MessageTime): void {
    const batch = `message ${++this.messages}`;
    const role = message.role;
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls : Array.isArray(message.toolCalls) ? message.toolCalls : null;
    if (role === "assistant" && calls) {
      for (const call of calls) {
        if (!isRecord(call)) continue;
        const fn = isRecord(call.function) ? call.function : call;
        this.log.call({ id: text(call.id), tool: text(fn.name) ?? "(unnamed tool)", arguments: fn.arguments ?? null, at, agent: MAIN, batch });
      }
    }
    if (role === "assistant" && isRecord(message.function_call)) {
      const name = text(message.function_call.name) ?? "(unnamed tool)";
      const id = `function-call-${++this.legacyCount}`;
      (this.legacy.get(name) ?? this.legacy.set(name, []).get(name)!).push(id);
      this.log.call({ id, tool: name, arguments: message.function_call.arguments ?? null, at, agent: MAIN, batch });
    }
    const isError = message.is_error === true || message.isError === true;
    if (role === "tool") {
      const id = text(message.tool_call_id) ?? text(message.toolCallId);
      this.log.result({ id, result: message.content ?? null, isError, at, agent: MAIN });
    } else if (role === "function") {
      const id = this.legacy.get(text(message.name) ?? "")?.shift() ?? null;
      this.log.result({ id, result: message.content ?? null, isError, at, agent: MAIN });
    }
  }
}

export const openaiChatImporter: FormatImporter = {
  id: "openai-chat",
  title: "OpenAI-style chat transcript with tool calls (JSON)",
  extensions: ["json"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    const tools = /"tool_calls"\s*:|"tool_call_id"\s*:|"function_call"\s*:/.test(text);
    if (text.startsWith("{")) {
      if (!/"messages"\s*:\s*\[/.test(text) || !/"role"\s*:/.test(text)) return 0;
      // A session-trace (JSONL) line also has messages-like fields: a chat is one document.
      if (/^\{\s*"type"\s*:\s*"(session|message)"/.test(text)) return 0;
      return tools ? 0.85 : 0.5;
    }
    if (text.startsWith("[")) return /^\[\s*\{\s*"role"\s*:/.test(text) && tools ? 0.8 : 0;
    return 0;
  },

  async parse({ source, builder }) {
    const document = parseJsonDocument(FORMAT, await readBounded(source.chunks()));
    const messages = Array.isArray(document) ? document : isRecord(document) ? document.messages : null;
    if (!Array.isArray(messages)) throw new EvidenceParseError(FORMAT, "expected an object with a messages array, or an array of messages", { offset: 0, field: "messages" });
    const log = new ToolCallLog(builder);
    const chat = new ChatToolCalls(log);
    messages.forEach((message, i) => {
      if (!isRecord(message) || typeof message.role !== "string") throw new EvidenceParseError(FORMAT, "a message is not an object with a role", { offset: 0, field: `messages[${i}]` });
      chat.message(message, log.messageTime(chatTimeMs(message.timestamp ?? message.created_at ?? null)));
    });
    const session = isRecord(document) ? text(document.id) : null;
    await writeToolCalls(builder, log.finish(), { id: session, name: "chat transcript" });
  },
};
