/**
 * The compiler's events read back from evidence: the spans (and `follows_from` edges) that
 * analysis/formats/tool-calls.ts wrote for an agent session, as the server reads them with DuckDB
 * and the page with DuckDB-WASM. Pure: the rows come from the caller.
 */
import { SIDE_EFFECTS, TOOL_CALL_STATUSES, type SideEffect, type ToolCallStatus } from "./trace-v1";
import type { CompileEvent, Json } from "./compile";

/** A row of the `spans` table (BIGINT columns as numbers: ids and ns stay below 2^53). */
export interface SpanRow {
  span_id: number;
  track_id: number;
  parent_span_id: number | null;
  name: string;
  category: string | null;
  start_ns: number;
  dur_ns: number;
  status: string | null;
  args: string | null;
  /** The trace the span belongs to, where the format records one (OTLP, Jaeger); else read from args. */
  trace_id?: string | null;
}

export interface EdgeRow {
  from_span_id: number;
  to_span_id: number;
  kind: string;
}

/** The categories tool-calls.ts writes: a call, or a result whose call is not in the file. */
export const TOOL_CATEGORIES = ["tool", "tool_result"] as const;

export function isToolSpan(row: Pick<SpanRow, "category">): boolean {
  return row.category === "tool" || row.category === "tool_result";
}

/** Compiler events for a run's tool-call spans, in span order; other spans are ignored. */
export function compileEventsFromSpans(rows: readonly SpanRow[], edges: readonly EdgeRow[]): CompileEvent[] {
  const tools = rows.filter(isToolSpan).sort((a, b) => a.span_id - b.span_id);
  const keys = new Set(tools.map((r) => String(r.span_id)));
  const after = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.kind !== "follows_from") continue;
    const from = String(edge.from_span_id);
    const to = String(edge.to_span_id);
    if (!keys.has(from) || !keys.has(to)) continue;
    const list = after.get(to) ?? [];
    list.push(from);
    after.set(to, list);
  }
  return tools.map((row) => {
    const args = parseArgs(row.args);
    const parent = row.parent_span_id === null ? null : String(row.parent_span_id);
    return {
      key: String(row.span_id),
      callId: typeof args.call_id === "string" ? args.call_id : String(row.span_id),
      tool: row.name,
      isCall: row.category === "tool",
      argumentsText: typeof args.arguments === "string" ? args.arguments : null,
      argumentsTruncated: args.arguments_truncated === true,
      resultText: typeof args.result === "string" ? args.result : null,
      resultTruncated: args.result_truncated === true,
      status: oneOf<ToolCallStatus>(row.status, TOOL_CALL_STATUSES, "ok"),
      error: typeof args.error === "string" ? args.error : null,
      sideEffect: oneOf<SideEffect>(args.side_effect, SIDE_EFFECTS, "unknown"),
      startNs: row.start_ns,
      durNs: row.dur_ns,
      agent: typeof args.agent === "string" ? args.agent : "main",
      parent: parent !== null && keys.has(parent) ? parent : null,
      after: after.get(String(row.span_id)) ?? [],
    };
  });
}

/** The runtime inputs an import kept (run metadata `trace_inputs`, JSON of an object), or none. */
export function traceInputs(metadata: Readonly<Record<string, unknown>>): Record<string, Json> {
  const text = metadata.trace_inputs;
  if (typeof text !== "string") return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, Json>) : {};
  } catch {
    return {};
  }
}

function parseArgs(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}
