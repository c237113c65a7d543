import { z } from "zod";
import { defineQuery } from "./define";
import { WindowSpan } from "./trace-window";

const Generation = z.string().regex(/^gen_[0-9a-z]+$/);

/** A span as the trace window reads it, less generation and depth, with its trace id. */
export const CriticalPathSpanRow = WindowSpan.omit({ generation_id: true, depth: true }).extend({ trace_id: z.string().nullable() });

/**
 * Every span of one generation, with its args: what the workflow compiler (tool calls) and the
 * span critical path read (analysis/workflow/from-spans.ts, analysis/critical-path/report.ts).
 * Args are read only for tool calls; other spans give the trace id OTLP and Jaeger imports keep in them.
 */
export const criticalPathSpansQuery = defineQuery({
  name: "critical_path_spans",
  description: "Every span of a generation with what the critical path and the workflow compiler read (tool calls' args, other spans' trace ids).",
  params: z.object({ generation: Generation, limit: z.number().int().min(1).max(2_000_001) }),
  row: CriticalPathSpanRow,
  sql: `SELECT span_id::BIGINT AS span_id, track_id, parent_span_id::BIGINT AS parent_span_id, name, category,
       start_ns::DOUBLE AS start_ns, dur_ns::DOUBLE AS dur_ns, status,
       CASE WHEN category IN ('tool', 'tool_result') THEN args END AS args,
       nullif(regexp_extract(args, '"(?:otel|jaeger)\\.trace_id": ?"([^"]*)"', 1), '') AS trace_id
FROM spans
WHERE generation_id = $generation
ORDER BY span_id
LIMIT $limit`,
});

export const CriticalPathEdgeRow = z.object({ from_span_id: z.number().int(), to_span_id: z.number().int(), kind: z.string() });

export const criticalPathEdgesQuery = defineQuery({
  name: "critical_path_edges",
  description: "A generation's follows_from and child edges (causal links the critical path and the workflow compiler follow).",
  params: z.object({ generation: Generation, limit: z.number().int().min(1).max(8_000_001) }),
  row: CriticalPathEdgeRow,
  sql: `SELECT from_span_id::BIGINT AS from_span_id, to_span_id::BIGINT AS to_span_id, kind
FROM edges
WHERE generation_id = $generation AND kind IN ('follows_from', 'child')
ORDER BY to_span_id, from_span_id
LIMIT $limit`,
});
