import { z } from "zod";
import { defineQuery } from "./define";
import { GenerationList } from "./columns";

export const FlowRow = z.object({
  generation_id: z.string(),
  from_span_id: z.number().int(),
  to_span_id: z.number().int(),
  from_track_id: z.number().int(),
  to_track_id: z.number().int(),
  from_end_ns: z.number(),
  to_start_ns: z.number(),
  from_depth: z.number().int(),
  to_depth: z.number().int(),
});
export type FlowRow = z.infer<typeof FlowRow>;

/**
 * Flow edges (arrows between spans, often across threads) with at least one end inside
 * [start_ns, end_ns): the trace window draws them from the end of one span to the start of the other.
 */
export const traceFlowsQuery = defineQuery({
  name: "trace_flows",
  description: "Flow edges with an end in a time window, with both spans' tracks, times and depths.",
  params: z.object({
    generations: GenerationList,
    start_ns: z.number().int(),
    end_ns: z.number().int(),
    limit: z.number().int().min(1).max(10_000),
  }),
  row: FlowRow,
  sql: `SELECT e.generation_id, e.from_span_id::BIGINT AS from_span_id, e.to_span_id::BIGINT AS to_span_id,
       a.track_id AS from_track_id, b.track_id AS to_track_id,
       (a.start_ns + a.dur_ns)::DOUBLE AS from_end_ns, b.start_ns::DOUBLE AS to_start_ns,
       a.depth AS from_depth, b.depth AS to_depth
FROM edges e
JOIN spans a ON a.generation_id = e.generation_id AND a.span_id = e.from_span_id
JOIN spans b ON b.generation_id = e.generation_id AND b.span_id = e.to_span_id
WHERE list_contains($generations, e.generation_id) AND e.kind = 'flow'
  AND ((a.start_ns + a.dur_ns >= $start_ns AND a.start_ns < $end_ns) OR (b.start_ns + b.dur_ns >= $start_ns AND b.start_ns < $end_ns))
ORDER BY e.generation_id, e.from_span_id, e.to_span_id
LIMIT $limit`,
});
