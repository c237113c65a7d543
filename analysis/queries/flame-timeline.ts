import { z } from "zod";
import { FrameColumns, GenerationList } from "./columns";
import { defineQuery } from "./define";
import { FRAME_INFO, METRIC, NODE_FRAME } from "./fragments";

export const TimelineCell = FrameColumns.extend({
  cell_id: z.string(),
  parent_id: z.string().nullable(),
  depth: z.number().int(),
  start_ns: z.number(),
  end_ns: z.number(),
  /** Summed metric value of the samples under this cell, and of those whose leaf is this frame. */
  total: z.number(),
  self: z.number(),
  /** Cells left out (narrower than the minimum width, each with all under it, or over the budget); the same on every row. */
  dropped_cells: z.number().int(),
  /** The metric's summed value over every sample in the window (drawn or not); the same on every row. */
  window_total: z.number(),
});
export type TimelineCell = z.infer<typeof TimelineCell>;

/**
 * Time-order flame graph (a flame chart): samples in time order, each lasting until the next
 * sample (the last one for the median interval); consecutive samples whose stacks share a
 * prefix merge into one cell per frame of that prefix (gaps and islands per call path).
 *
 * Pruning happens while merging, level by level: only cells at least `min_width_ns` long are
 * expanded (a child never outlasts its parent), so the work follows what can be seen, not the
 * sample count times the stack depth. Then the `budget` longest cells remain; ties keep the
 * shallower cell, so the kept set is closed under ancestors. `dropped_cells` counts the rest
 * (when nothing is kept, a single row at depth -1 carries it).
 */
export const flameTimelineQuery = defineQuery({
  name: "flame_timeline",
  description: "Time-order flame graph: consecutive samples sharing a stack prefix merged into cells, pruned to a cell budget.",
  params: z.object({
    generations: GenerationList,
    metric: z.string().min(1).max(128),
    start_ns: z.number().int().nullable(),
    end_ns: z.number().int().nullable(),
    track_id: z.number().int().nullable(),
    min_width_ns: z.number().min(0),
    budget: z.number().int().min(1).max(200_000),
  }),
  row: TimelineCell,
  sql: `WITH RECURSIVE
${METRIC},
timed AS (
  SELECT s.generation_id, s.stack_id, s.time_ns, s.value::DOUBLE AS value
  FROM samples s JOIN metric m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
  WHERE s.time_ns IS NOT NULL
    AND ($start_ns IS NULL OR s.time_ns >= $start_ns)
    AND ($end_ns IS NULL OR s.time_ns < $end_ns)
    AND ($track_id IS NULL OR s.track_id = $track_id)
),
ordered AS (
  SELECT generation_id, stack_id, time_ns, value,
         row_number() OVER w AS seq, lead(time_ns) OVER w AS next_ns
  FROM timed WINDOW w AS (ORDER BY time_ns, generation_id, stack_id)
),
step AS (
  SELECT coalesce(median(next_ns - time_ns), 1)::DOUBLE AS dt FROM ordered WHERE next_ns IS NOT NULL
),
-- Consecutive samples of the very same stack first become one run (cheap, and common).
run_marks AS (
  SELECT generation_id, stack_id, seq, time_ns, value,
         coalesce(next_ns, time_ns + (SELECT dt FROM step)) AS end_ns,
         seq - row_number() OVER (PARTITION BY generation_id, stack_id ORDER BY seq) AS grp
  FROM ordered
),
runs AS MATERIALIZED (
  SELECT generation_id, stack_id, row_number() OVER (ORDER BY min(seq)) AS rseq,
         min(time_ns)::DOUBLE AS start_ns, max(end_ns)::DOUBLE AS end_ns, sum(value) AS value
  FROM run_marks GROUP BY generation_id, stack_id, grp
),
${NODE_FRAME},
-- Every stack node with the call path's keys and frames from the root down (index = depth + 1).
paths AS (
  SELECT nf.generation_id, nf.stack_id, 0 AS depth, [hash(nf.frame_key)] AS keys, [nf.frame_key] AS frames
  FROM node_frame nf WHERE nf.parent_stack_id IS NULL
  UNION ALL
  SELECT nf.generation_id, nf.stack_id, p.depth + 1, list_append(p.keys, hash(p.keys[-1], nf.frame_key)), list_append(p.frames, nf.frame_key)
  FROM paths p JOIN node_frame nf ON nf.generation_id = p.generation_id AND nf.parent_stack_id = p.stack_id
),
paths_m AS MATERIALIZED (SELECT * FROM paths),
sampled AS MATERIALIZED (
  SELECT r.*, p.depth AS leaf_depth
  FROM runs r JOIN paths_m p ON p.generation_id = r.generation_id AND p.stack_id = r.stack_id
),
-- Level by level from a virtual root: inside each wide cell, the runs' frames one level down
-- form islands (consecutive runs with the same call path). Wide islands become cells and are
-- expanded next; the narrow ones under one parent collapse into one 'narrow' row with a count.
cells AS (
  SELECT 'root' AS kind, -1 AS depth, 1::BIGINT AS a, (SELECT max(rseq) FROM runs)::BIGINT AS b, NULL::BIGINT AS parent_a,
         NULL::UBIGINT AS path_key, NULL::VARCHAR AS frame_key, NULL::DOUBLE AS start_ns, NULL::DOUBLE AS end_ns,
         NULL::DOUBLE AS total, NULL::DOUBLE AS self, 0::BIGINT AS n
  UNION ALL
  SELECT CASE WHEN wide THEN 'cell' ELSE 'narrow' END, any_value(depth), min(a), max(b), parent_a,
         any_value(path_key), any_value(frame_key), min(start_ns), max(end_ns), sum(total), sum(self), count(*)
  FROM (
    SELECT parent_a, depth, path_key, grp, min(rseq) AS a, max(rseq) AS b, any_value(frame_key) AS frame_key,
           min(start_ns) AS start_ns, max(end_ns) AS end_ns, sum(value) AS total,
           sum(CASE WHEN leaf_depth = depth THEN value ELSE 0 END) AS self,
           max(end_ns) - min(start_ns) >= $min_width_ns AS wide
    FROM (
      SELECT c.a AS parent_a, c.depth + 1 AS depth, p.keys[c.depth + 2] AS path_key, p.frames[c.depth + 2] AS frame_key,
             r.rseq, r.start_ns, r.end_ns, r.value, r.leaf_depth,
             r.rseq - row_number() OVER (PARTITION BY c.a, p.keys[c.depth + 2] ORDER BY r.rseq) AS grp
      FROM cells c
      JOIN sampled r ON r.rseq >= c.a AND r.rseq <= c.b AND r.leaf_depth > c.depth
      JOIN paths_m p ON p.generation_id = r.generation_id AND p.stack_id = r.stack_id
      WHERE c.kind <> 'narrow'
    ) islands
    GROUP BY parent_a, depth, path_key, grp
  ) grouped
  GROUP BY wide, parent_a, CASE WHEN wide THEN path_key END, CASE WHEN wide THEN a END
),
wide_cells AS MATERIALIZED (SELECT * FROM cells WHERE kind = 'cell'),
kept AS MATERIALIZED (
  SELECT * FROM wide_cells ORDER BY end_ns - start_ns DESC, depth ASC, start_ns ASC LIMIT $budget
),
dropped AS (
  SELECT coalesce((SELECT sum(n) FROM cells WHERE kind = 'narrow'), 0)
         + (SELECT count(*) FROM wide_cells) - (SELECT count(*) FROM kept) AS dropped_cells,
         coalesce((SELECT sum(value) FROM runs), 0)::DOUBLE AS window_total
),
named AS MATERIALIZED (
  SELECT *, depth::VARCHAR || '@' || start_ns::BIGINT::VARCHAR
         || CASE WHEN row_number() OVER (PARTITION BY depth, start_ns ORDER BY a) > 1
                 THEN '.' || row_number() OVER (PARTITION BY depth, start_ns ORDER BY a)::VARCHAR ELSE '' END AS cell_id
  FROM kept
),
${FRAME_INFO}
SELECT c.cell_id, p.cell_id AS parent_id, c.frame_key, fi.name, fi.file, fi.line, fi.module, fi.kind,
       c.depth::INTEGER AS depth, c.start_ns::DOUBLE AS start_ns, c.end_ns::DOUBLE AS end_ns,
       c.total::DOUBLE AS total, c.self::DOUBLE AS self, (SELECT dropped_cells FROM dropped)::BIGINT AS dropped_cells,
       (SELECT window_total FROM dropped) AS window_total
FROM named c
LEFT JOIN named p ON p.depth = c.depth - 1 AND p.a = c.parent_a
JOIN frame_info fi ON fi.frame_key = c.frame_key
-- When no cell is wide enough, one row at depth -1 still carries the count of dropped cells.
UNION ALL
SELECT '', NULL, '', '', NULL, NULL, NULL, 'other', -1, 0, 0, 0, 0, dropped_cells::BIGINT, window_total FROM dropped WHERE NOT EXISTS (SELECT 1 FROM kept)
ORDER BY depth, start_ns, cell_id`,
});

/**
 * The value the kept cells leave undrawn: the window's total minus what the top-level cells hold,
 * plus under each cell its total minus its self value and its kept children's totals (the
 * samples of pruned, narrower cells).
 */
export function timelineRemainder(cells: readonly Pick<TimelineCell, "cell_id" | "parent_id" | "self" | "total">[], windowTotal: number): number {
  const childTotals = new Map<string, number>();
  for (const c of cells) if (c.parent_id !== null) childTotals.set(c.parent_id, (childTotals.get(c.parent_id) ?? 0) + c.total);
  let rest = windowTotal;
  for (const c of cells) if (c.parent_id === null) rest -= c.total;
  if (rest <= 1e-9 * Math.max(1, windowTotal)) rest = 0;
  for (const c of cells) {
    const r = c.total - c.self - (childTotals.get(c.cell_id) ?? 0);
    if (r > 1e-9 * Math.max(1, c.total)) rest += r;
  }
  return rest;
}
