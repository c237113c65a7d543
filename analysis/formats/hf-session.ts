/**
 * Hugging Face Session Trace Simple Format (STS-Format, the Hub's trace viewer): JSON Lines, read
 * line by line — a `{"type": "session", "harness", "id", "name"}` header, then one line per
 * message, `{"type": "message", "message": {role, content, toolCalls, toolCallId}}` (the message's
 * fields are also read from the line itself), with `timestamp` in ms (or ISO) on the line or the
 * message. An assistant message's `toolCalls` [{id, function: {name, arguments}}] (arguments:
 * JSON text) are one batch of parallel calls; a `role: "tool"` message answers one by `toolCallId`.
 *
 * Each call is one span (tool-calls.ts, read through openai-chat.ts's ChatToolCalls): name = the
 * function, category "tool", args with call_id, side_effect unknown, timing approximate (issued →
 * result message; logical when no message has a timestamp), arguments (JSON text) and result.
 * A tool message with isError / is_error true is status error. `follows_from` edges link each
 * batch to the calls answered since the previous batch.
 */
import { jsonLines } from "../io/json-lines";
import { EvidenceParseError } from "./errors";
import { ChatToolCalls, chatTimeMs } from "./openai-chat";
import { ToolCallLog, writeToolCalls } from "./tool-calls";
import type { FormatImporter } from "./types";

const FORMAT = "hf-session";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export const hfSessionImporter: FormatImporter = {
  id: "hf-session",
  title: "Hugging Face Session Trace (STS-Format, JSONL)",
  extensions: ["jsonl"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    const newline = text.indexOf("\n");
    const first = newline < 0 ? text : text.slice(0, newline);
    if (!/^\{\s*"type"\s*:\s*"session"/.test(first)) return 0;
    if (/"harness"\s*:/.test(first)) return 0.95;
    return /"type"\s*:\s*"message"/.test(text) && /"toolCalls"\s*:|"toolCallId"\s*:/.test(text) ? 0.6 : 0;
  },

  async parse({ source, builder, limits }) {
    const log = new ToolCallLog(builder);
    const chat = new ChatToolCalls(log);
    let session: { id: string | null; name: string } | null = null;
    let lines = 0;
    for await (const { value, line, offset } of jsonLines(FORMAT, source.chunks(), limits.maxLineLength)) {
      if (!isRecord(value)) throw new EvidenceParseError(FORMAT, "expected a JSON object on each line", { line, offset });
      lines++;
      if (lines === 1) {
        if (value.type !== "session") throw new EvidenceParseError(FORMAT, "the first line is not a session header", { line, offset });
        session = { id: typeof value.id === "string" ? value.id : null, name: typeof value.harness === "string" && value.harness !== "" ? value.harness : "session trace" };
        continue;
      }
      if (value.type !== "message") {
        builder.limit("HF_SESSION_OTHER_LINES", "Some lines were neither the session header nor messages and were skipped.");
        continue;
      }
      const message = isRecord(value.message) ? value.message : value;
      if (typeof message.role !== "string") throw new EvidenceParseError(FORMAT, "a message has no role", { line, offset });
      chat.message(message, log.messageTime(chatTimeMs(value.timestamp ?? message.timestamp ?? null)));
      if (lines % 4096 === 0) await builder.checkpoint();
    }
    if (!session) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0, line: 1 });
    await writeToolCalls(builder, log.finish(), session);
  },
};
