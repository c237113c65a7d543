/**
 * The normalized evidence schema (v1 tables of DESIGN.md §3, plus v2 derived totals and v3's
 * frames.mangled_name), written once as code. Parquet schemas (server), docs and
 * validators derive from TABLES; importers fill it through EvidenceBuilder.
 * Evolution is additive only: new nullable columns or new tables, with the version bumped.
 */
export const EVIDENCE_SCHEMA_VERSION = 4;

export type ColumnType = "INTEGER" | "BIGINT" | "DOUBLE" | "VARCHAR" | "BOOLEAN";

export interface ColumnSpec {
  name: string;
  type: ColumnType;
  nullable: boolean;
  description: string;
}

export const col = (name: string, type: ColumnType, nullable: boolean, description: string): ColumnSpec => ({ name, type, nullable, description });

export const FRAME_KINDS = ["js", "native", "python", "java", "kernel", "gc", "idle", "program", "other"] as const;
export type FrameKind = (typeof FRAME_KINDS)[number];

export const METRIC_KINDS = ["sampled", "counted", "temporal"] as const;
export type MetricKind = (typeof METRIC_KINDS)[number];

export const EDGE_KINDS = ["flow", "data_ref", "follows_from", "child"] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

/** Every table's columns, in Parquet order. `generation_id` is added by the writer to each. */
export const TABLES = {
  frames: [
    col("frame_id", "INTEGER", false, "Dense id within the generation."),
    col("frame_key", "VARCHAR", false, "Stable across runs: hash of name, file, line, module and kind."),
    col("name", "VARCHAR", false, "Function or symbol name."),
    col("file", "VARCHAR", true, "Source file or URL."),
    col("line", "INTEGER", true, "1-based line."),
    col("col", "INTEGER", true, "1-based column."),
    col("module", "VARCHAR", true, "Library, binary, package or script the frame belongs to."),
    col("kind", "VARCHAR", false, `One of ${FRAME_KINDS.join(", ")}.`),
    col("mangled_name", "VARCHAR", true, "The symbol as the profile named it, when `name` is its demangled form (C++, Rust); null otherwise. Added in schema v3."),
  ],
  stacks: [
    col("stack_id", "INTEGER", false, "Node of the stack prefix tree."),
    col("parent_stack_id", "INTEGER", true, "Null at a root."),
    col("frame_id", "INTEGER", false, "The frame at this node (the leaf of this prefix)."),
    col("depth", "INTEGER", false, "0 at a root."),
  ],
  metrics: [
    col("metric_id", "INTEGER", false, "Dense id within the generation."),
    col("name", "VARCHAR", false, "samples, cpu_ns, wall_ns, alloc_bytes, alloc_count, instructions, …"),
    col("unit", "VARCHAR", false, "count, ns, bytes, instructions, …"),
    col("kind", "VARCHAR", false, `One of ${METRIC_KINDS.join(", ")}.`),
    col("total", "DOUBLE", true, "Derived: the sum of this metric's sample values."),
    col("sample_count", "BIGINT", true, "Derived: how many sample rows carry this metric."),
    col("first_ns", "BIGINT", true, "Derived: earliest time_ns of its samples (null when untimed)."),
    col("last_ns", "BIGINT", true, "Derived: latest time_ns of its samples."),
  ],
  samples: [
    col("stack_id", "INTEGER", false, "The leaf stack node."),
    col("track_id", "INTEGER", true, "The thread/process track, when known."),
    col("time_ns", "BIGINT", true, "Null for aggregate formats."),
    col("metric_id", "INTEGER", false, "What `value` measures."),
    col("value", "BIGINT", false, "Weight of the sample in the metric's unit."),
  ],
  tracks: [
    col("track_id", "INTEGER", false, "Dense id within the generation."),
    col("process_id", "VARCHAR", true, "Process id as text (pid, service name, …)."),
    col("process_name", "VARCHAR", true, "Process name."),
    col("thread_id", "VARCHAR", true, "Thread id as text."),
    col("thread_name", "VARCHAR", true, "Thread name."),
    col("kind", "VARCHAR", false, "thread, process, async, counter, service, …"),
  ],
  spans: [
    col("span_id", "BIGINT", false, "Dense id within the generation."),
    col("track_id", "INTEGER", false, "The track the span is drawn on."),
    col("parent_span_id", "BIGINT", true, "Enclosing span."),
    col("name", "VARCHAR", false, "Span name."),
    col("category", "VARCHAR", true, "Category or kind."),
    col("start_ns", "BIGINT", false, "Start, relative to the generation's time origin."),
    col("dur_ns", "BIGINT", false, "Duration (0 for instants)."),
    col("depth", "INTEGER", false, "Nesting depth on its track."),
    col("status", "VARCHAR", true, "ok, error, unset, …"),
    col("args", "VARCHAR", true, "Bounded JSON text of the span's arguments/attributes."),
  ],
  edges: [
    col("from_span_id", "BIGINT", false, "Source span."),
    col("to_span_id", "BIGINT", false, "Target span."),
    col("kind", "VARCHAR", false, `One of ${EDGE_KINDS.join(", ")}.`),
  ],
  measurements: [
    col("name", "VARCHAR", false, "What was measured (a counter name, wall_ns, max_rss_bytes, …)."),
    col("value", "DOUBLE", false, "The value."),
    col("unit", "VARCHAR", true, "Its unit."),
    col("aggregation", "VARCHAR", true, "sample, sum, max, mean, …"),
    col("trial_id", "VARCHAR", true, "Trial or counter series it belongs to."),
    col("is_warmup", "BOOLEAN", false, "Warm-up runs are kept but excluded from summaries."),
    col("dimensions", "VARCHAR", true, "JSON object of further dimensions (time_ns, track, …)."),
  ],
  // Derived at extraction (additive to v1): per-metric totals, so that hotspots, callers and
  // compare over millions of samples read a few rows instead of walking every stack.
  stack_totals: [
    col("stack_id", "INTEGER", false, "A stack node that has weight in the metric."),
    col("metric_id", "INTEGER", false, "The metric."),
    col("self", "DOUBLE", false, "Value of samples whose leaf is this node."),
    col("total", "DOUBLE", false, "Value of samples at or below this node."),
  ],
  frame_totals: [
    col("frame_id", "INTEGER", false, "A frame that has weight in the metric."),
    col("metric_id", "INTEGER", false, "The metric."),
    col("self", "DOUBLE", false, "Value of samples whose leaf frame is this frame."),
    col("total", "DOUBLE", false, "Value of samples with this frame anywhere on the stack, counted once per sample under recursion."),
  ],
  // Added in schema v4: what every track filter starts from (which tracks have samples, and how
  // many), read from a few rows instead of a scan of every sample (about a second at 10 M).
  track_totals: [
    col("track_id", "INTEGER", true, "The track; null for samples on no track."),
    col("metric_id", "INTEGER", false, "The metric."),
    col("samples", "BIGINT", false, "Sample rows of the metric on the track."),
    col("value", "DOUBLE", false, "Their summed value."),
  ],
} as const satisfies Record<string, ColumnSpec[]>;

export type TableName = keyof typeof TABLES;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/** Bounds on observed strings: longer values are cut and the cut is reported as a limitation. */
export const FIELD_LIMITS = {
  name: 4096,
  file: 4096,
  module: 1024,
  category: 512,
  args: 16384,
  other: 1024,
};
