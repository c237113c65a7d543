import { z } from "zod";
import { defineQuery } from "./define";
import { FRAME_INFO, LEAF, METRIC, NODE_FRAME, NODE_TOTALS, UP } from "./fragments";
import { FrameColumns, GenerationList } from "./columns";
import type { TreeRowKeys } from "./packed-rows";

export const FlameNode = FrameColumns.extend({
  node_id: z.string(),
  parent_id: z.string().nullable(),
  depth: z.number().int(),
  self: z.number(),
  total: z.number(),
});
export type FlameNode = z.infer<typeof FlameNode>;

/** Flame tree nodes in a transfer (`packTreeRows`): their ids are path hashes, kept as they are. */
export const FLAME_NODE_KEYS: TreeRowKeys = { id: "node_id", parent: "parent_id" };

const TAIL = `kept AS (
  SELECT * FROM node_values ORDER BY total DESC, depth ASC, path_key ASC LIMIT $budget
),
${FRAME_INFO}
SELECT k.path_key::VARCHAR AS node_id, k.parent_path_key::VARCHAR AS parent_id, k.frame_key,
       fi.name, fi.file, fi.line, fi.module, fi.kind, k.depth::INTEGER AS depth,
       k.self::DOUBLE AS self, k.total::DOUBLE AS total
FROM kept k JOIN frame_info fi ON fi.frame_key = k.frame_key
ORDER BY k.depth, k.total DESC, k.path_key`;

/**
 * The aggregated call tree (stacks merged by their frame_key path, across generations), pruned
 * to the `budget` largest nodes by inclusive value. Because a parent's total is never below a
 * child's, the kept set is closed under ancestors; addPrunedRemainders() accounts for the rest.
 */
export const flameTreeQuery = defineQuery({
  name: "flame_tree",
  description: "Aggregated call tree of one metric over the whole run, pruned to a node budget.",
  params: z.object({
    generations: GenerationList,
    metric: z.string().min(1).max(128),
    budget: z.number().int().min(1).max(200_000),
  }),
  row: FlameNode,
  sql: `WITH RECURSIVE
${METRIC},
${NODE_TOTALS},
paths AS (
  SELECT n.generation_id, n.stack_id, n.frame_key, hash(n.frame_key) AS path_key, NULL::UBIGINT AS parent_path_key, 0 AS depth, n.self, n.total
  FROM node_totals n WHERE n.parent_stack_id IS NULL
  UNION ALL
  SELECT n.generation_id, n.stack_id, n.frame_key, hash(p.path_key, n.frame_key), p.path_key, p.depth + 1, n.self, n.total
  FROM paths p JOIN node_totals n ON n.generation_id = p.generation_id AND n.parent_stack_id = p.stack_id
),
node_values AS (
  SELECT path_key, any_value(parent_path_key) AS parent_path_key, any_value(frame_key) AS frame_key,
         any_value(depth) AS depth, sum(total) AS total, sum(self) AS self
  FROM paths GROUP BY path_key
),
${TAIL}`,
});

/** The same tree built from the raw samples of a time range [start_ns, end_ns). */
export const flameTreeRangeQuery = defineQuery({
  name: "flame_tree_range",
  description: "Aggregated call tree of the samples in a time range, pruned to a node budget.",
  params: z.object({
    generations: GenerationList,
    metric: z.string().min(1).max(128),
    start_ns: z.number().int().nullable(),
    end_ns: z.number().int().nullable(),
    budget: z.number().int().min(1).max(200_000),
  }),
  row: FlameNode,
  sql: `WITH RECURSIVE
${LEAF},
${UP},
${NODE_FRAME},
paths AS (
  SELECT nf.generation_id, nf.stack_id, nf.frame_key, hash(nf.frame_key) AS path_key, NULL::UBIGINT AS parent_path_key, 0 AS depth
  FROM node_frame nf WHERE nf.parent_stack_id IS NULL
  UNION ALL
  SELECT nf.generation_id, nf.stack_id, nf.frame_key, hash(p.path_key, nf.frame_key), p.path_key, p.depth + 1
  FROM paths p JOIN node_frame nf ON nf.generation_id = p.generation_id AND nf.parent_stack_id = p.stack_id
),
node_values AS (
  SELECT p.path_key, any_value(p.parent_path_key) AS parent_path_key, any_value(p.frame_key) AS frame_key,
         any_value(p.depth) AS depth,
         sum(l.value) AS total,
         sum(CASE WHEN up.leaf_id = up.stack_id THEN l.value ELSE 0 END) AS self
  FROM up
  JOIN leaf l ON l.generation_id = up.generation_id AND l.stack_id = up.leaf_id
  JOIN paths p ON p.generation_id = up.generation_id AND p.stack_id = up.stack_id
  GROUP BY p.path_key
),
${TAIL}`,
});

export const PRUNED_FRAME_KEY = "(pruned)";

/**
 * Adds one explicit remainder node under each kept node whose children were pruned, so that
 * every node's total still equals self + children: nothing silently disappears.
 */
export function addPrunedRemainders(nodes: readonly FlameNode[]): { nodes: FlameNode[]; pruned_total: number } {
  const childTotals = new Map<string, number>();
  for (const node of nodes) {
    if (node.parent_id !== null) childTotals.set(node.parent_id, (childTotals.get(node.parent_id) ?? 0) + node.total);
  }
  const out = [...nodes];
  let prunedTotal = 0;
  for (const node of nodes) {
    const rest = node.total - node.self - (childTotals.get(node.node_id) ?? 0);
    if (rest > 1e-9 * Math.max(1, node.total)) {
      prunedTotal += rest;
      out.push({
        node_id: `${node.node_id}:pruned`,
        parent_id: node.node_id,
        frame_key: PRUNED_FRAME_KEY,
        name: "(pruned: smaller frames)",
        file: null,
        line: null,
        module: null,
        kind: "other",
        depth: node.depth + 1,
        self: rest,
        total: rest,
      });
    }
  }
  return { nodes: out, pruned_total: prunedTotal };
}
