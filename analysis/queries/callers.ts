import { z } from "zod";
import { defineQuery } from "./define";
import { FRAME_INFO, METRIC, NODE_TOTALS } from "./fragments";
import { FrameColumns, GenerationList } from "./columns";

export const NeighbourRow = FrameColumns.extend({
  value: z.number().describe("The frame's inclusive value under this caller / this callee's inclusive value under the frame, each sample counted once."),
});
export type NeighbourRow = z.infer<typeof NeighbourRow>;

/** What a question about one frame takes (callers, callees, stack examples; also under transforms). */
export const NeighbourParams = z.object({
  generations: GenerationList,
  metric: z.string().min(1).max(128),
  frame_key: z.string().min(1).max(64),
  limit: z.number().int().min(1).max(1000),
});

/**
 * The frame's nodes with a value in the metric (`target`), and those of them that are calls
 * inside another call of the frame (`nested`, with `via_id` the node just below the nearest such
 * ancestor). When the frame's nodes add up to its total (counted once per sample), none is nested
 * and the walk is skipped. Else each node walks up until it meets the frame or passes a root.
 * The walk reads `stacks` itself, from a start DuckDB can tell is small, so that each step's join
 * is built on the walks and filters the stacks file's row groups (from the derived node totals,
 * four tables, it was built on the whole tree at every step: 20 s instead of 2 s on a tree of a
 * million nodes).
 */
const RECURSION = `target_frames AS (
  SELECT generation_id, frame_id FROM frames WHERE frame_key = $frame_key AND list_contains($generations, generation_id)
),
target AS MATERIALIZED (
  SELECT s.generation_id, s.stack_id, s.parent_stack_id, st.total
  FROM stacks s
  JOIN target_frames tf ON tf.generation_id = s.generation_id AND tf.frame_id = s.frame_id
  JOIN stack_totals st ON st.generation_id = s.generation_id AND st.stack_id = s.stack_id
  JOIN metric m ON m.generation_id = st.generation_id AND m.metric_id = st.metric_id
),
recurses AS (
  SELECT (SELECT coalesce(sum(total), 0) FROM target) > (
    SELECT coalesce(sum(ft.total), 0) FROM frame_totals ft
    JOIN target_frames tf ON tf.generation_id = ft.generation_id AND tf.frame_id = ft.frame_id
    JOIN metric m ON m.generation_id = ft.generation_id AND m.metric_id = ft.metric_id
  ) AS yes
),
climb AS (
  SELECT generation_id, stack_id AS from_id, stack_id AS via_id, parent_stack_id AS at_id FROM target WHERE (SELECT yes FROM recurses)
  UNION ALL
  SELECT c.generation_id, c.from_id, c.at_id, s.parent_stack_id
  FROM climb c
  JOIN stacks s ON s.generation_id = c.generation_id AND s.stack_id = c.at_id
  LEFT JOIN target_frames tf ON tf.generation_id = s.generation_id AND tf.frame_id = s.frame_id
  WHERE tf.frame_id IS NULL
),
nested AS MATERIALIZED (
  SELECT c.generation_id, c.from_id, c.via_id
  FROM climb c JOIN target t ON t.generation_id = c.generation_id AND t.stack_id = c.at_id
)`;

/**
 * Who calls the frame, each sample counted once: as Firefox Profiler's "collapse recursion"
 * does, a sample's stack keeps the frame's outermost call, so its caller is the frame above that
 * call (or none, at a root) and the callers' values add up to the frame's total.
 */
export const callersQuery = defineQuery({
  name: "callers",
  description: "Direct callers of a frame (of its outermost call under recursion), weighted by the frame's inclusive value under each; they add up to the frame's total.",
  params: NeighbourParams,
  row: NeighbourRow,
  sql: `WITH RECURSIVE
${METRIC},
${FRAME_INFO},
${RECURSION},
edges AS (
  SELECT coalesce(pf.frame_key, '(root)') AS frame_key, sum(t.total) AS value
  FROM target t
  LEFT JOIN stacks p ON p.generation_id = t.generation_id AND p.stack_id = t.parent_stack_id
  LEFT JOIN frames pf ON pf.generation_id = p.generation_id AND pf.frame_id = p.frame_id
  WHERE NOT EXISTS (SELECT 1 FROM nested n WHERE n.generation_id = t.generation_id AND n.from_id = t.stack_id)
  GROUP BY 1
)
SELECT e.frame_key, coalesce(fi.name, '(root)') AS name, fi.file, fi.line, fi.module, coalesce(fi.kind, 'program') AS kind, e.value::DOUBLE AS value
FROM edges e LEFT JOIN frame_info fi ON fi.frame_key = e.frame_key
ORDER BY value DESC, e.frame_key
LIMIT $limit`,
});

/**
 * What the frame calls, each sample counted once: a sample's stack keeps the frame's innermost
 * call (the frames between its outermost and innermost calls are collapsed), so its callee is
 * the frame below that call, never the frame itself, and the callees' values add up to the
 * frame's total minus its self value. A child of a node of the frame counts its total, less the
 * calls of the frame further down through it (their samples belong to those calls' callees).
 */
export const calleesQuery = defineQuery({
  name: "callees",
  description: "Direct callees of a frame (of its innermost call under recursion), weighted by each callee's inclusive value under it; they add up to the frame's total minus its self value.",
  params: NeighbourParams,
  row: NeighbourRow,
  sql: `WITH RECURSIVE
${METRIC},
${FRAME_INFO},
${RECURSION},
parts AS (
  SELECT cf.frame_key, st.total AS value
  FROM target t
  JOIN stacks c ON c.generation_id = t.generation_id AND c.parent_stack_id = t.stack_id
  JOIN frames cf ON cf.generation_id = c.generation_id AND cf.frame_id = c.frame_id
  JOIN stack_totals st ON st.generation_id = c.generation_id AND st.stack_id = c.stack_id
  JOIN metric m ON m.generation_id = st.generation_id AND m.metric_id = st.metric_id
  WHERE cf.frame_key <> $frame_key
  UNION ALL
  SELECT vf.frame_key, -t.total
  FROM nested n
  JOIN target t ON t.generation_id = n.generation_id AND t.stack_id = n.from_id
  -- Only the via nodes' rows of stacks: joined whole, the stacks file was read and hashed in full
  -- even when nothing is nested (9 s for a 90,000-line folded file, against 0.1 s for callers).
  JOIN (SELECT * FROM stacks WHERE list_contains($generations, generation_id) AND stack_id IN (SELECT via_id FROM nested)) v
    ON v.generation_id = n.generation_id AND v.stack_id = n.via_id
  JOIN frames vf ON vf.generation_id = v.generation_id AND vf.frame_id = v.frame_id
  WHERE vf.frame_key <> $frame_key
),
edges AS (
  SELECT frame_key, sum(value) AS value FROM parts GROUP BY 1 HAVING sum(value) > 0
)
SELECT e.frame_key, fi.name, fi.file, fi.line, fi.module, fi.kind, e.value::DOUBLE AS value
FROM edges e JOIN frame_info fi ON fi.frame_key = e.frame_key
ORDER BY value DESC, e.frame_key
LIMIT $limit`,
});

export const StackExampleRow = z.object({
  value: z.number(),
  frames: z.array(z.string()).describe("Frame names, root first."),
});

/** The heaviest complete stacks that pass through the frame. */
export const stackExamplesQuery = defineQuery({
  name: "stack_examples",
  description: "Heaviest complete stacks (root first) that contain a frame.",
  params: NeighbourParams,
  row: StackExampleRow,
  sql: `WITH RECURSIVE
${METRIC},
${NODE_TOTALS},
${FRAME_INFO},
below AS (
  SELECT generation_id, stack_id FROM node_totals WHERE frame_key = $frame_key
  UNION
  SELECT n.generation_id, n.stack_id
  FROM below b JOIN node_totals n ON n.generation_id = b.generation_id AND n.parent_stack_id = b.stack_id
),
heaviest AS (
  SELECT n.generation_id, n.stack_id, n.self AS value
  FROM below b JOIN node_totals n ON n.generation_id = b.generation_id AND n.stack_id = b.stack_id
  WHERE n.self > 0
  ORDER BY n.self DESC, n.stack_id LIMIT $limit
),
path AS (
  SELECT h.generation_id, h.stack_id AS leaf_id, h.stack_id, h.value FROM heaviest h
  UNION ALL
  SELECT p.generation_id, p.leaf_id, s.parent_stack_id, p.value
  FROM path p JOIN stacks s ON s.generation_id = p.generation_id AND s.stack_id = p.stack_id
  WHERE s.parent_stack_id IS NOT NULL
)
SELECT p.value::DOUBLE AS value, list(f.name ORDER BY s.depth) AS frames
FROM path p
JOIN stacks s ON s.generation_id = p.generation_id AND s.stack_id = p.stack_id
JOIN frames f ON f.generation_id = s.generation_id AND f.frame_id = s.frame_id
GROUP BY p.generation_id, p.leaf_id, p.value
ORDER BY value DESC, p.leaf_id`,
});
