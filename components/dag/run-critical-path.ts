import { CriticalPathInputError, CycleError } from "../../analysis/critical-path/errors";
import { runHoldsToolCalls, spanCriticalPathReport, spanInputsFromRows } from "../../analysis/critical-path/report";
import type { FollowsFromLink, SpanInput } from "../../analysis/critical-path/spans";
import { compileWorkflow, type CompileReport, type ToolContracts, type Workflow } from "../../analysis/workflow/compile";
import { WorkflowCompileError } from "../../analysis/workflow/errors";
import { compileEventsFromSpans, traceInputs } from "../../analysis/workflow/from-spans";
import type { ErrorDocument } from "../../server/domain/errors";
import type { CriticalPathRows } from "./critical-path-rows";

/**
 * What the page computes a run's critical path from, as the server's critical_path.get does
 * (server/services/workflows.ts): a run holding tool calls compiles into a workflow with the
 * reviewed contracts and the import's runtime inputs; any other run with spans walks its traces.
 * The report itself (what-if, chosen trace) is computed from this by the views.
 */
export type RunCriticalPath =
  | { kind: "workflow"; workflow: Workflow; compile: CompileReport; spansOfNode: Map<string, number[]> }
  | { kind: "spans"; spans: SpanInput[]; links: FollowsFromLink[] }
  | { kind: "empty" };

export interface ReviewedTool {
  tool: string;
  side_effect: "read" | "write";
}

export function prepareRunCriticalPath(rows: CriticalPathRows, options: { runId: string; contracts: readonly ReviewedTool[]; metadata: Readonly<Record<string, string>> }): RunCriticalPath {
  if (rows.spans.length === 0) return { kind: "empty" };
  if (!runHoldsToolCalls(rows.spans)) return { kind: "spans", ...spanInputsFromRows(rows.spans, rows.tracks, rows.edges) };
  const events = compileEventsFromSpans(rows.spans, rows.edges);
  const contracts: ToolContracts = new Map(options.contracts.map((c) => [c.tool, c.side_effect]));
  const { workflow, report } = compileWorkflow({
    source: { run_id: options.runId, commit_id: rows.commitId, trace_id: options.metadata.trace_id ?? null },
    inputs: traceInputs(options.metadata),
    events,
    contracts,
  });
  // A node stands for its call ids; each call is a span (several for merged reads).
  const spanOfCall = new Map<string, number>();
  for (const e of events) if (!spanOfCall.has(e.callId)) spanOfCall.set(e.callId, Number(e.key));
  const spansOfNode = new Map(workflow.nodes.map((n) => [n.id, n.recorded.call_ids.map((c) => spanOfCall.get(c)!).filter((s) => s !== undefined)]));
  return { kind: "workflow", workflow, compile: report, spansOfNode };
}

/** The span ids on the critical path: a workflow's path nodes' calls, or every walked root's path (spans with time on it). */
export function criticalSpanIds(prepared: RunCriticalPath, workflowPath: readonly string[] = []): Set<number> {
  const out = new Set<number>();
  if (prepared.kind === "workflow") {
    for (const id of workflowPath) for (const span of prepared.spansOfNode.get(id) ?? []) out.add(span);
  } else if (prepared.kind === "spans") {
    const { result } = spanCriticalPathReport(prepared.spans, prepared.links);
    for (const path of result.paths) {
      for (const on of path.spans) {
        const span = prepared.spans[on.span_index];
        if (on.critical_ns > 0 || span.dur_ns === 0) out.add(Number(span.span_id));
      }
    }
  }
  return out;
}

/** An analysis failure as the typed error the server's services answer with (same code and details). */
export function analysisErrorDocument(error: unknown): ErrorDocument {
  if (error instanceof WorkflowCompileError) return { code: error.code, message: error.message, retryable: false, details: error.details };
  if (error instanceof CycleError) return { code: "CYCLE_DETECTED", message: error.message, retryable: false, details: { cycle: error.cycle } };
  if (error instanceof CriticalPathInputError) return { code: "INVALID_ARGUMENTS", message: error.message, retryable: false, details: { reason: error.reason, ...error.at } };
  const message = error instanceof Error ? error.message : String(error);
  return { code: "INTERNAL_ERROR", message: `The critical path could not be computed in the page: ${message}`, retryable: false, details: {} };
}
