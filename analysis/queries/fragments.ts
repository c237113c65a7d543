/**
 * SQL building blocks shared by the evidence queries. Each is a CTE body; the queries compose
 * them into one statement text, so server and browser run identical SQL.
 *
 * Whole-run questions read the derived totals written at extraction (stack_totals,
 * frame_totals); questions about a time range walk the raw samples (leaf, up).
 */

/** The chosen metric's id in each generation. */
export const METRIC = `metric AS (
  SELECT generation_id, metric_id FROM metrics
  WHERE name = $metric AND list_contains($generations, generation_id)
)`;

/** Per stack node: self and inclusive value of the metric (derived at extraction). */
export const NODE_TOTALS = `node_totals AS (
  SELECT st.generation_id, st.stack_id, s.parent_stack_id, s.depth, f.frame_key, st.self, st.total
  FROM stack_totals st
  JOIN metric m ON m.generation_id = st.generation_id AND m.metric_id = st.metric_id
  JOIN stacks s ON s.generation_id = st.generation_id AND s.stack_id = st.stack_id
  JOIN frames f ON f.generation_id = s.generation_id AND f.frame_id = s.frame_id
)`;

/** Per frame_key: self and inclusive value summed over generations (derived at extraction). */
export function frameValues(name = "frame_values", generations = "$generations", totals = "frame_totals"): string {
  return `${name} AS (
  SELECT f.frame_key, sum(ft.self)::DOUBLE AS self, sum(ft.total)::DOUBLE AS total
  FROM ${totals} ft
  JOIN metrics m ON m.generation_id = ft.generation_id AND m.metric_id = ft.metric_id
  JOIN frames f ON f.generation_id = ft.generation_id AND f.frame_id = ft.frame_id
  WHERE m.name = $metric AND list_contains(${generations}, ft.generation_id)
  GROUP BY f.frame_key
)`;
}

/**
 * Grand total of the metric: the sum of its samples' values, as derived at extraction into
 * metrics.total (schema 2, like stack_totals) — one row per generation instead of a scan of
 * every stack node.
 */
export function grandTotal(name = "grand", generations = "$generations", metrics = "metrics"): string {
  return `${name} AS (
  SELECT coalesce(sum(m.total), 0)::DOUBLE AS grand_total
  FROM ${metrics} m
  WHERE m.name = $metric AND list_contains(${generations}, m.generation_id)
)`;
}

/** Per sampled stack node in [start_ns, end_ns): the summed value of the metric. */
export const LEAF = `leaf AS (
  SELECT s.generation_id, s.stack_id, sum(s.value)::DOUBLE AS value
  FROM samples s
  JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
  WHERE m.name = $metric AND list_contains($generations, s.generation_id)
    AND ($start_ns IS NULL OR s.time_ns >= $start_ns)
    AND ($end_ns IS NULL OR s.time_ns < $end_ns)
  GROUP BY s.generation_id, s.stack_id
)`;

/** Every (leaf, ancestor-or-self) pair: the walk from each sampled leaf to its root. */
export const UP = `up AS (
  SELECT generation_id, stack_id AS leaf_id, stack_id FROM leaf
  UNION ALL
  SELECT up.generation_id, up.leaf_id, st.parent_stack_id
  FROM up
  JOIN stacks st ON st.generation_id = up.generation_id AND st.stack_id = up.stack_id
  WHERE st.parent_stack_id IS NOT NULL
)`;

/** Each stack node with its frame's stable key. */
export const NODE_FRAME = `node_frame AS (
  SELECT st.generation_id, st.stack_id, st.parent_stack_id, st.depth, f.frame_key
  FROM stacks st
  JOIN frames f ON f.generation_id = st.generation_id AND f.frame_id = st.frame_id
  WHERE list_contains($generations, st.generation_id)
)`;

export function frameInfo(generations = "$generations"): string {
  return `frame_info AS (
  SELECT frame_key, any_value(name) AS name, any_value(file) AS file, any_value(line) AS line,
         any_value(module) AS module, any_value(kind) AS kind
  FROM frames WHERE list_contains(${generations}, generation_id)
  GROUP BY frame_key
)`;
}
export const FRAME_INFO = frameInfo();
