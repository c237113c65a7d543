import { z } from "zod";
import { defineQuery } from "./define";
import { FRAME_INFO, LEAF, NODE_FRAME, NODE_TOTAL, UP } from "./fragments";
import { GenerationList } from "./hotspots";

export const NeighbourRow = z.object({
  frame_key: z.string(),
  name: z.string(),
  file: z.string().nullable(),
  line: z.number().int().nullable(),
  module: z.string().nullable(),
  kind: z.string(),
  value: z.number().describe("Inclusive value of the target frame along this caller / of this callee."),
});
export type NeighbourRow = z.infer<typeof NeighbourRow>;

const params = z.object({
  generations: GenerationList,
  metric: z.string().min(1).max(128),
  frame_key: z.string().min(1).max(64),
  start_ns: z.number().int().nullable().default(null),
  end_ns: z.number().int().nullable().default(null),
  limit: z.number().int().min(1).max(1000),
});

/** Who calls the frame: the parent frame of each node of it, weighted by that node's inclusive value. */
export const callersQuery = defineQuery({
  name: "callers",
  description: "Direct callers of a frame, weighted by the frame's inclusive value under each.",
  params,
  row: NeighbourRow,
  sql: `WITH RECURSIVE
${LEAF},
${UP},
${NODE_FRAME},
${NODE_TOTAL},
${FRAME_INFO},
edges AS (
  SELECT coalesce(parent.frame_key, '(root)') AS frame_key, sum(nt.total) AS value
  FROM node_frame target
  JOIN node_total nt ON nt.generation_id = target.generation_id AND nt.stack_id = target.stack_id
  LEFT JOIN node_frame parent ON parent.generation_id = target.generation_id AND parent.stack_id = target.parent_stack_id
  WHERE target.frame_key = $frame_key
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
  sql: `WITH RECURSIVE
${LEAF},
${UP},
${NODE_FRAME},
${NODE_TOTAL},
${FRAME_INFO},
edges AS (
  SELECT child.frame_key, sum(nt.total) AS value
  FROM node_frame target
  JOIN node_frame child ON child.generation_id = target.generation_id AND child.parent_stack_id = target.stack_id
  JOIN node_total nt ON nt.generation_id = child.generation_id AND nt.stack_id = child.stack_id
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
${LEAF},
${UP},
${NODE_FRAME},
${FRAME_INFO},
through AS (
  SELECT DISTINCT up.generation_id, up.leaf_id
  FROM up JOIN node_frame nf ON nf.generation_id = up.generation_id AND nf.stack_id = up.stack_id
  WHERE nf.frame_key = $frame_key
),
heaviest AS (
  SELECT t.generation_id, t.leaf_id, l.value
  FROM through t JOIN leaf l ON l.generation_id = t.generation_id AND l.stack_id = t.leaf_id
  ORDER BY l.value DESC, t.leaf_id LIMIT $limit
)
SELECT h.value::DOUBLE AS value, list(fi.name ORDER BY nf.depth) AS frames
FROM heaviest h
JOIN up ON up.generation_id = h.generation_id AND up.leaf_id = h.leaf_id
JOIN node_frame nf ON nf.generation_id = up.generation_id AND nf.stack_id = up.stack_id
JOIN frame_info fi ON fi.frame_key = nf.frame_key
GROUP BY h.generation_id, h.leaf_id, h.value
ORDER BY value DESC, h.leaf_id`,
});
