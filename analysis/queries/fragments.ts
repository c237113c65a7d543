/**
 * SQL building blocks shared by the evidence queries. Each is a CTE body; the queries compose
 * them into one statement text, so server and browser run identical SQL.
 *
 * leaf:       per sampled stack node, the summed value of the chosen metric (optionally in a time range)
 * up:         every (leaf, ancestor-or-self) pair — the walk from each sampled leaf to its root
 * node_frame: each stack node with its frame's stable key
 */
export const LEAF = `leaf AS (
  SELECT s.generation_id, s.stack_id, sum(s.value)::DOUBLE AS value
  FROM samples s
  JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
  WHERE m.name = $metric AND list_contains($generations, s.generation_id)
    AND ($start_ns IS NULL OR s.time_ns >= $start_ns)
    AND ($end_ns IS NULL OR s.time_ns < $end_ns)
  GROUP BY s.generation_id, s.stack_id
)`;

export const UP = `up AS (
  SELECT generation_id, stack_id AS leaf_id, stack_id FROM leaf
  UNION ALL
  SELECT up.generation_id, up.leaf_id, st.parent_stack_id
  FROM up
  JOIN stacks st ON st.generation_id = up.generation_id AND st.stack_id = up.stack_id
  WHERE st.parent_stack_id IS NOT NULL
)`;

export const NODE_FRAME = `node_frame AS (
  SELECT st.generation_id, st.stack_id, st.parent_stack_id, st.depth, f.frame_key
  FROM stacks st
  JOIN frames f ON f.generation_id = st.generation_id AND f.frame_id = st.frame_id
  WHERE list_contains($generations, st.generation_id)
)`;

export const FRAME_INFO = `frame_info AS (
  SELECT frame_key, any_value(name) AS name, any_value(file) AS file, any_value(line) AS line,
         any_value(module) AS module, any_value(kind) AS kind
  FROM frames WHERE list_contains($generations, generation_id)
  GROUP BY frame_key
)`;

/** Inclusive value per stack node: the sum of the leaves below (or at) it. */
export const NODE_TOTAL = `node_total AS (
  SELECT up.generation_id, up.stack_id, sum(l.value) AS total
  FROM up JOIN leaf l ON l.generation_id = up.generation_id AND l.stack_id = up.leaf_id
  GROUP BY up.generation_id, up.stack_id
)`;

/** Per frame: self (leaf) value and inclusive value counted once per leaf even under recursion. */
export const FRAME_TOTALS = `on_path AS (
  SELECT DISTINCT up.generation_id, up.leaf_id, nf.frame_key
  FROM up JOIN node_frame nf ON nf.generation_id = up.generation_id AND nf.stack_id = up.stack_id
),
totals AS (
  SELECT op.frame_key, sum(l.value) AS total
  FROM on_path op JOIN leaf l ON l.generation_id = op.generation_id AND l.stack_id = op.leaf_id
  GROUP BY op.frame_key
),
selfs AS (
  SELECT nf.frame_key, sum(l.value) AS self
  FROM leaf l JOIN node_frame nf ON nf.generation_id = l.generation_id AND nf.stack_id = l.stack_id
  GROUP BY nf.frame_key
),
grand AS (SELECT coalesce(sum(value), 0)::DOUBLE AS grand_total FROM leaf)`;
