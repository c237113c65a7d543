/**
 * Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): one JSON object per line,
 * read line by line: `{timestamp, type, payload}` with types session_meta, turn_context,
 * response_item and event_msg (older rollouts write the response items bare, without timestamps).
 *
 * A `function_call` (name, arguments as JSON text, call_id) or `custom_tool_call` (name, input
 * text, call_id) is one span (tool-calls.ts): name = the tool, category "tool", args with call_id,
 * side_effect unknown (the rollout does not say), timing approximate (issued → output line),
 * arguments (JSON text; a custom tool's input as a JSON string), result (the output text) and
 * exit_code when the output reports one. `function_call_output` / `custom_tool_call_output`
 * answer by call_id. A non-zero exit code (the output's metadata.exit_code, its "Exit code: N"
 * line, or an event_msg exec_command_end) → status error. Calls with no message, reasoning-free
 * output or user input between them are one batch (parallel calls). `follows_from` edges link a
 * batch to the calls whose outputs came in since the previous batch. An answered call's span text
 * goes to the builder CODEX_END_WINDOW_LINES lines after its output (an exec_command_end may still
 * come in between), so a long rollout's texts do not wait in memory for its end; a failure
 * reported later than that is counted in a limitation (CODEX_EXIT_CODE_LATE).
 */
import { jsonLines } from "../io/json-lines";
import { isoMs } from "./claude-code";
import { EvidenceParseError } from "./errors";
import { ToolCallLog, writeToolCalls, type ToolCall } from "./tool-calls";
import type { FormatImporter } from "./types";

const FORMAT = "codex-rollout";
const MAIN = "main";
/**
 * Lines after its output that an answered call waits for an exec_command_end (which may come just
 * after the output) before its span text goes to the builder and is let go.
 */
export const CODEX_END_WINDOW_LINES = 1024;
const ITEM_TYPES = new Set(["message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call", "web_search_call"]);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** The exit code an output reports: JSON {metadata: {exit_code}} (older) or a first line "Exit code: N". */
function exitCodeOf(output: string): number | null {
  const line = /^Exit code: (-?\d+)/.exec(output);
  if (line) return Number(line[1]);
  if (!output.startsWith("{")) return null;
  try {
    const parsed: unknown = JSON.parse(output);
    const code = isRecord(parsed) && isRecord(parsed.metadata) ? parsed.metadata.exit_code : null;
    return typeof code === "number" ? code : null;
  } catch {
    return null;
  }
}

/** An output payload's text: a string, or {content} / content items as older rollouts write it. */
function outputText(output: unknown): string | null {
  if (typeof output === "string") return output;
  if (isRecord(output) && typeof output.content === "string") return output.content;
  return output === undefined || output === null ? null : JSON.stringify(output);
}

export const codexRolloutImporter: FormatImporter = {
  id: "codex-rollout",
  title: "Codex CLI session rollout (JSONL)",
  extensions: ["jsonl"],
  version: "1",

  sniff(_head, headText, fileName) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{")) return 0;
    if (/"type"\s*:\s*"session_meta"/.test(text) && /"payload"\s*:/.test(text)) return 0.95;
    if (/"type"\s*:\s*"response_item"/.test(text) && /"payload"\s*:/.test(text)) return 0.9;
    // Older rollouts: a header {id, timestamp, instructions} then bare items.
    if (/^rollout-.*\.jsonl$/.test(fileName ?? "") && /"type"\s*:\s*"(function_call|message|reasoning)"/.test(text)) return 0.8;
    return 0;
  },

  async parse({ source, builder, limits }) {
    const log = new ToolCallLog(builder);
    let sessionId: string | null = null;
    let lines = 0;
    let batch = 0;
    /** Whether the last item could end a batch: the next call starts a new one. */
    let batchOpen = false;
    const callsById = new Map<string, ToolCall>();
    const failedByEvent = new Set<string>();
    /** Answered calls not yet drafted, in the order answered, with the line their output was on. */
    const answered: { call: ToolCall; line: number }[] = [];
    let drafted = 0;
    const draftAnswered = (beforeLine: number) => {
      while (drafted < answered.length && answered[drafted].line < beforeLine) {
        // A call that cannot be drafted yet (the rollout has shown no timestamp) is left whole for writeToolCalls.
        log.draft(answered[drafted].call);
        drafted++;
      }
      if (drafted > 4096 && drafted * 2 > answered.length) {
        answered.splice(0, drafted);
        drafted = 0;
      }
    };

    const finishOutput = (callId: string | null, output: string | null) => {
      const code = output === null ? null : exitCodeOf(output);
      return { isError: (code !== null && code !== 0) || (callId !== null && failedByEvent.has(callId)), extra: code === null ? {} : { exit_code: code } };
    };

    for await (const { value, line, offset } of jsonLines(FORMAT, source.chunks(), limits.maxLineLength)) {
      if (!isRecord(value)) throw new EvidenceParseError(FORMAT, "expected a JSON object on each line", { line, offset });
      lines++;
      const wrapped = isRecord(value.payload);
      const payload = wrapped ? (value.payload as Record<string, unknown>) : value;
      const kind = wrapped ? value.type : ITEM_TYPES.has(String(value.type)) ? "response_item" : null;
      if (kind === "session_meta") {
        sessionId ??= text(payload.id);
        continue;
      }
      if (kind === "event_msg") {
        // exec_command_end tells a command's exit code, also where the output does not.
        const callId = text(payload.call_id);
        if (payload.type === "exec_command_end" && callId && typeof payload.exit_code === "number" && payload.exit_code !== 0) {
          failedByEvent.add(callId);
          const call = callsById.get(callId);
          if (call?.draftId !== undefined && call.status === "ok") {
            builder.limit("CODEX_EXIT_CODE_LATE", `Some exec_command_end events reporting a failure came more than ${CODEX_END_WINDOW_LINES} lines after their call's output; those calls keep status ok.`);
          } else if (call && call.status === "ok") call.status = "error";
        }
        continue;
      }
      if (kind !== "response_item") {
        if (lines === 1 && !wrapped && (typeof value.id === "string" || "instructions" in value)) continue;
        if (typeof value.type !== "string" && typeof value.record_type !== "string") throw new EvidenceParseError(FORMAT, "a line has no type: not a Codex rollout", { line, offset });
        continue;
      }
      const at = log.messageTime(isoMs(value.timestamp));
      const type = payload.type;
      if (type === "function_call" || type === "custom_tool_call") {
        if (!batchOpen) {
          batch++;
          batchOpen = true;
        }
        const callId = text(payload.call_id) ?? text(payload.id);
        const call = log.call({
          id: callId,
          tool: text(payload.name) ?? "(unnamed tool)",
          // A custom tool's input is free text: kept as a JSON string.
          arguments: type === "function_call" ? (payload.arguments ?? null) : JSON.stringify(payload.input ?? ""),
          at,
          agent: MAIN,
          batch: `batch ${batch}`,
          extra: { item: type },
        });
        if (callId) callsById.set(callId, call);
      } else if (type === "function_call_output" || type === "custom_tool_call_output") {
        batchOpen = false;
        const callId = text(payload.call_id);
        const output = outputText(payload.output);
        const { isError, extra } = finishOutput(callId, output);
        log.result({ id: callId, result: output, isError, at, agent: MAIN, extra });
        const call = callId === null ? undefined : callsById.get(callId);
        if (call && call.status !== "unfinished") answered.push({ call, line: lines });
      } else if (type === "message") {
        batchOpen = false;
      }
      if (lines % 256 === 0) draftAnswered(lines - CODEX_END_WINDOW_LINES);
      if (lines % 4096 === 0) await builder.checkpoint();
    }
    if (lines === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0, line: 1 });
    // A rollout without tool calls yields no spans: the import then fails as empty (ARTIFACT_EMPTY).
    await writeToolCalls(builder, log.finish(), { id: sessionId, name: "Codex session" });
  },
};
