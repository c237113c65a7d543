import { z } from "zod";
import { defineQuery } from "./define";
import { FRAME_INFO, METRIC, NODE_TOTALS } from "./fragments";
import { FrameColumns, GenerationList } from "./columns";

export const NeighbourRow = FrameColumns.extend({
  value: z.number().describe("Inclusive value of the target frame along this caller / of this callee."),
});
export type NeighbourRow = z.infer<typeof NeighbourRow>;

const params = z.object({
  generations: GenerationList,
  metric: z.string().min(1).max(128),
  frame_key: z.string().min(1).max(64),
  limit: z.number().int().min(1).max(1000),
});

/** Who calls the frame: the parent frame of each node of it, weighted by that node's inclusive value. */
export const callersQuery = defineQuery({
  name: "callers",
  description: "Direct callers of a frame, weighted by the frame's inclusive value under each.",
  params,
  row: NeighbourRow,
  sql: `WITH
${METRIC},
${NODE_TOTALS},
${FRAME_INFO},
parent_frame AS (
  SELECT s.generation_id, s.stack_id, f.frame_key
  FROM stacks s JOIN frames f ON f.generation_id = s.generation_id AND f.frame_id = s.frame_id
  WHERE list_contains($generations, s.generation_id)
),
edges AS (
  SELECT coalesce(p.frame_key, '(root)') AS frame_key, sum(t.total) AS value
  FROM node_totals t
  LEFT JOIN parent_frame p ON p.generation_id = t.generation_id AND p.stack_id = t.parent_stack_id
  WHERE t.frame_key = $frame_key
  GROUP BY 1
)
SELECT e.frame_key, coalesce(fi.name, '(root)') AS name, fi.file, fi.line, fi.module, coalesce(fi.kind, 'program') AS kind, e.value::DOUBLE AS value
FROM edges e LEFT JOIN frame_info fi ON fi.frame_key = e.frame_key
ORDER BY value DESC, e.frame_key
LIMIT $limit`,
});

/** What the frame calls: the child frames of each node of it, weighted by the child's inclusive value. */
export const calleesQuery = defineQuery({
  name: "callees",
  description: "Direct callees of a frame, weighted by each callee's inclusive value under it.",
  params,
  row: NeighbourRow,
  sql: `WITH
${METRIC},
${NODE_TOTALS},
${FRAME_INFO},
edges AS (
  SELECT child.frame_key, sum(child.total) AS value
  FROM node_totals target
  JOIN node_totals child ON child.generation_id = target.generation_id AND child.parent_stack_id = target.stack_id
  WHERE target.frame_key = $frame_key
  GROUP BY 1
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
  params,
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
