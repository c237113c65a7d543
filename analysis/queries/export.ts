import { z } from "zod";
import { GenerationList } from "./columns";
import { defineQuery } from "./define";

/** The generations' positions in $generations (0-based): rows name their generation by it. */
const POSITIONS = `positions AS (
  SELECT unnest($generations) AS generation_id, generate_subscripts($generations, 1) - 1 AS g
)`;

/**
 * Every sample of one metric, track by track, in time order where samples carry a time (aggregate
 * formats have none: their rows come in file order). What an export writes out sample by sample.
 */
export const exportSamplesQuery = defineQuery({
  name: "export_samples",
  description: "Every sample of one metric by generation and track, in time order where timed (for exports).",
  params: z.object({ generations: GenerationList, metric: z.string().min(1).max(128) }),
  row: z.object({ g: z.number().int(), track_id: z.number().int().nullable(), stack_id: z.number().int(), time_ns: z.number().nullable(), value: z.number() }),
  sql: `WITH ${POSITIONS}
SELECT p.g::INTEGER AS g, s.track_id, s.stack_id, s.time_ns::DOUBLE AS time_ns, s.value::DOUBLE AS value
FROM samples s
JOIN positions p ON p.generation_id = s.generation_id
JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
WHERE m.name = $metric
ORDER BY g, s.track_id NULLS FIRST, s.time_ns NULLS FIRST`,
});

/** The tracks of the generations, by position: an export names its profiles after them. */
export const exportTracksQuery = defineQuery({
  name: "export_tracks",
  description: "Tracks of the generations by position (an export names its profiles after them).",
  params: z.object({ generations: GenerationList }),
  row: z.object({ g: z.number().int(), track_id: z.number().int(), process_name: z.string().nullable(), process_id: z.string().nullable(), thread_name: z.string().nullable(), thread_id: z.string().nullable() }),
  sql: `WITH ${POSITIONS}
SELECT p.g::INTEGER AS g, t.track_id, t.process_name, t.process_id, t.thread_name, t.thread_id
FROM tracks t JOIN positions p ON p.generation_id = t.generation_id
ORDER BY g, t.track_id`,
});
