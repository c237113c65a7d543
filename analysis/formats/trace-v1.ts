/**
 * Trace v1 (analysis/workflow/trace-v1.ts): Emberscope's own tool-call trace, one JSON document,
 * validated whole by its zod schema. Each event is one span (tool-calls.ts: name = tool, category
 * "tool", args with call_id, side_effect, timing, agent, arguments as JSON text and result, both
 * bounded), one track per agent; parent_id → parent and a `child` edge, after → `follows_from`
 * edges. Times in ms become ns from the earliest start; a trace without times is placed in order,
 * one millisecond apart (timing logical). The runtime inputs are kept as metadata trace_inputs.
 */
import { FIELD_LIMITS } from "../evidence/schema";
import { parseJsonDocument, readBounded } from "../io/json-documents";
import { timeMs, TRACE_V1_FORMAT, TraceV1, ToolEventV1 } from "../workflow/trace-v1";
import { EvidenceParseError } from "./errors";
import { writeToolCalls, type ToolCall } from "./tool-calls";
import type { FormatImporter } from "./types";

const FORMAT = "trace-v1";

/** Field names of the schema: a path into the input names these, and nothing of the input's own keys. */
const KNOWN_KEYS = new Set([...Object.keys(TraceV1.shape), ...Object.keys(ToolEventV1.shape)]);

function fieldOf(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : typeof p === "string" && KNOWN_KEYS.has(p) ? `.${p}` : ".*")).join("").replace(/^\./, "");
}

export const traceV1Importer: FormatImporter = {
  id: "trace-v1",
  title: "Emberscope tool-call trace (trace v1)",
  extensions: ["trace.json", "json"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{")) return 0;
    return /"format"\s*:\s*"emberscope\.trace"/.test(text) ? 0.98 : 0;
  },

  async parse({ source, builder }) {
    const document = parseJsonDocument(FORMAT, await readBounded(source.chunks()));
    const parsed = TraceV1.safeParse(document);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = fieldOf(issue.path);
      // zod's messages name expected types and options, never the input's values.
      throw new EvidenceParseError(FORMAT, `not a valid ${TRACE_V1_FORMAT} v1 document: ${issue.message}${field ? ` at ${field}` : ""}`, { offset: 0, field: field || undefined });
    }
    const trace = parsed.data;
    const logical = trace.events.length > 0 && trace.events[0].start === undefined;
    const calls: ToolCall[] = trace.events.map((event, i) => {
      const startMs = logical ? i + 1 : timeMs(event.start!);
      let endMs = startMs;
      if (event.end !== undefined) endMs = timeMs(event.end);
      else if (event.duration_ms !== undefined) endMs = startMs + event.duration_ms;
      else if (!logical && event.status !== "unfinished") builder.limit("TRACE_V1_NO_END", "Some finished events have a start but no end or duration; they were given a duration of 0.");
      return {
        id: event.id,
        tool: event.tool,
        category: "tool",
        argumentsText: event.arguments === undefined ? null : JSON.stringify(event.arguments),
        resultText: event.result === undefined ? null : typeof event.result === "string" ? event.result : JSON.stringify(event.result),
        status: event.status,
        error: event.error ?? null,
        sideEffect: event.side_effect,
        startMs,
        endMs,
        timing: logical ? "logical" : event.timing,
        agent: event.agent,
        parentId: event.parent_id ?? null,
        after: event.after,
        extra: {},
      };
    });
    const inputs = JSON.stringify(trace.inputs);
    if (inputs.length > FIELD_LIMITS.args) builder.limit("TRACE_V1_INPUTS_TRUNCATED", `The runtime inputs exceed ${FIELD_LIMITS.args} characters of JSON; metadata trace_inputs holds their names only.`);
    builder.metadata.trace_inputs = inputs.length > FIELD_LIMITS.args ? JSON.stringify(Object.keys(trace.inputs).slice(0, 256)) : inputs;
    if (trace.id !== undefined) builder.metadata.trace_id = trace.id;
    await writeToolCalls(builder, calls, { id: trace.id ?? null, name: trace.source ?? "trace v1" });
  },
};
