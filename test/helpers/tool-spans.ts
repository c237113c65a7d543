// Reading tool-call evidence back in tests: spans with their args parsed, edges by call id.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { MemoryImport } from "../../analysis/formats/run";

export interface ToolSpan {
  spanId: number;
  track: number;
  parent: number | null;
  name: string;
  category: string;
  startMs: number;
  durMs: number;
  depth: number;
  status: string;
  args: Record<string, unknown>;
}

export function toolSpans(result: MemoryImport): ToolSpan[] {
  return result.tables.spans.map((s) => ({
    spanId: s.span_id as number,
    track: s.track_id as number,
    parent: s.parent_span_id as number | null,
    name: s.name as string,
    category: s.category as string,
    startMs: (s.start_ns as number) / 1e6,
    durMs: (s.dur_ns as number) / 1e6,
    depth: s.depth as number,
    status: s.status as string,
    args: JSON.parse(s.args as string) as Record<string, unknown>,
  }));
}

/** Edges as "from → to" by the spans' call ids, sorted, per kind. */
export function edgesByCallId(result: MemoryImport, key = "call_id"): Record<string, string[]> {
  const idOf = new Map(toolSpans(result).map((s) => [s.spanId, String(s.args[key])]));
  const out: Record<string, string[]> = {};
  for (const e of result.tables.edges) (out[e.kind as string] ??= []).push(`${idOf.get(e.from_span_id as number)} → ${idOf.get(e.to_span_id as number)}`);
  for (const list of Object.values(out)) list.sort();
  return out;
}

export function limitationCounts(result: MemoryImport): Record<string, number> {
  return Object.fromEntries(result.summary.limitations.map((l) => [l.code, l.count]));
}

/** A file of test/fixtures/agent-traces. */
export function agentTraceFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(import.meta.dirname, "..", "fixtures", "agent-traces", name)));
}
