import { z } from "zod";

/**
 * Zod models of workflows, reviewed tool contracts and critical-path answers: what every
 * transport returns. The shapes mirror analysis/workflow/compile.ts and
 * analysis/critical-path/report.ts (pure code, no zod); services/workflows.ts maps those values
 * onto these schemas, so the compiler checks each field there.
 */

/** A tool's name as traces give it (the span's name). */
export const ToolName = z.string().min(1).max(512);

export const ToolContract = z.object({
  tool: z.string(),
  side_effect: z.enum(["read", "write"]).describe("What a person reviewed the tool to do: read (only reads; may be merged and reordered) or write."),
  note: z.string(),
  reviewed_by: z.string().describe("Who reviewed it: cli or web (a person; agents cannot review tools)."),
  handler: z.string().nullable().describe("The registered code the review binds: `builtin` or `module:<file under the tools folder>`; null when the tool was not registered at review (then it never runs)."),
  handler_digest: z.string().nullable().describe("sha256 of that code and what it declares; a changed module no longer matches (TOOL_NOT_REVIEWED until reviewed again)."),
  binding: z
    .object({
      input_schema: z.unknown().describe("The tool's input, as JSON Schema."),
      output_schema: z.unknown().describe("The tool's output, as JSON Schema."),
      timeout_ms: z.number().int(),
      concurrency: z.number().int().describe("At most this many calls of the tool at once in one run."),
    })
    .nullable(),
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ToolContract = z.infer<typeof ToolContract>;
export type ToolBinding = NonNullable<ToolContract["binding"]>;

/** The longest list a stored compile report keeps (the rest is counted). */
export const REPORT_LIST_LIMIT = 200;

const Listed = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), total: z.number().int() });

export const CompileReportSummary = z.object({
  notice: z.string(),
  events: z.number().int(),
  filtered: Listed(z.object({ call_id: z.string(), tool: z.string(), status: z.string(), error: z.string().nullable() })),
  deduplicated: Listed(z.object({ node: z.string(), call_id: z.string() })),
  not_deduplicated: Listed(z.object({ node: z.string(), call_id: z.string(), same_as: z.string() })),
  references: z.object({ data_ref: z.number().int(), input: z.number().int() }),
  ties: Listed(z.object({ node: z.string(), argument: z.string(), chosen: z.unknown(), others: z.array(z.unknown()) })),
  unreadable: Listed(z.object({ call_id: z.string(), part: z.string() })),
  read_links_dropped: z.number().int(),
  edges: z.object({ data_ref: z.number().int(), follows_from: z.number().int(), child: z.number().int() }),
});
export type CompileReportSummary = z.infer<typeof CompileReportSummary>;

export const WorkflowStatus = z.enum(["ready", "blocked"]);

export const WorkflowRecord = z.object({
  workflow_id: z.string(),
  digest: z.string().describe("sha256 of the workflow document's canonical JSON: its content address."),
  size_bytes: z.number().int(),
  run_id: z.string(),
  commit_id: z.string().describe("The commit whose evidence it was compiled from."),
  version: z.number().int().describe("1, 2, … per run: each compile that gave new content."),
  status: WorkflowStatus.describe("blocked while a tool's side effect is unknown: a person reviews it (`tools review TOOL --read-only`)."),
  blocked_tools: z.array(z.string()),
  node_count: z.number().int(),
  edge_count: z.number().int(),
  report: CompileReportSummary,
  created_by: z.string(),
  created_at: z.string(),
});
export type WorkflowRecord = z.infer<typeof WorkflowRecord>;

export const WorkflowNodeView = z.object({
  id: z.string(),
  tool: z.string(),
  side_effect: z.string(),
  side_effect_reviewed: z.boolean(),
  agent: z.string(),
  arguments: z.unknown().describe("The arguments with {$ref, path|line} for earlier results and {$input, path} for runtime inputs."),
  call_ids: z.array(z.string()),
  start_ns: z.number(),
  duration_ns: z.number(),
  own_ns: z.number(),
  result: z.string().nullable(),
  result_truncated: z.boolean(),
});

export const WorkflowEdgeView = z.object({ from: z.string(), to: z.string(), kind: z.enum(["data_ref", "follows_from", "child"]) });

const PathEntry = z.object({ id: z.string(), name: z.string(), service: z.string(), start_ns: z.number(), end_ns: z.number(), critical_ns: z.number() });
const OperationEntry = z.object({
  service: z.string(),
  operation: z.string(),
  critical_ns: z.number(),
  count: z.number().int(),
  traces: z.number().int().optional(),
  p50_ns: z.number().optional(),
  p95_ns: z.number().optional(),
});

export const CriticalPathAnswer = z.object({
  run_id: z.string(),
  commit_id: z.string(),
  kind: z.enum(["workflow", "spans"]).describe("workflow: the run's tool calls compiled (recorded-duration model); spans: Jaeger's walk over its span traces."),
  workflow_status: WorkflowStatus.nullable().describe("For tool calls: blocked while a tool's side effect is unknown (the path is still computed)."),
  sequential_ns: z.number().describe("Everything one at a time: the sum of recorded (own) durations."),
  critical_path_ns: z.number().describe("The longest dependent chain: the time with unbounded concurrency."),
  speedup_bound: z.number().describe("sequential / critical path: how much faster concurrency alone can make it."),
  path: z.array(PathEntry).describe("The critical path in order (bounded; see path_total)."),
  path_total: z.number().int(),
  operations: z.array(OperationEntry).describe("Per operation (service + name): its time on the critical path(s), heaviest first (bounded)."),
  operations_total: z.number().int(),
  nodes: z
    .array(z.object({ id: z.string(), name: z.string(), service: z.string(), duration_ns: z.number(), earliest_start_ns: z.number(), slack_ns: z.number(), on_path: z.boolean() }))
    .optional()
    .describe("Workflow: each node's timing and slack, by slack then id (bounded; see nodes_total)."),
  nodes_total: z.number().int().optional(),
  traces: z.array(z.object({ trace_id: z.string(), root_span_id: z.string(), name: z.string(), critical_path_ns: z.number() })).optional(),
  traces_total: z.number().int().optional(),
  trace: z.string().optional().describe("Spans: the trace `path` shows."),
  what_if: z.object({ node: z.string(), duration_ns: z.number(), recorded_ns: z.number() }).optional(),
});
export type CriticalPathAnswer = z.infer<typeof CriticalPathAnswer>;
