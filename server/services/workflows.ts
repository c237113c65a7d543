import { z } from "zod";
import { CriticalPathInputError, CycleError } from "../../analysis/critical-path/errors";
import { runHoldsToolCalls, spanCriticalPathReport, spanInputsFromRows, workflowCriticalPathReport, type CriticalPathReport } from "../../analysis/critical-path/report";
import { canonicalJson } from "../../analysis/notebook/digest";
import { criticalPathEdgesQuery, criticalPathSpansQuery, tracksQuery } from "../../analysis/queries";
import { compileWorkflow, type CompileReport, type Workflow } from "../../analysis/workflow/compile";
import { WorkflowCompileError } from "../../analysis/workflow/errors";
import { compileEventsFromSpans, traceInputs, type EdgeRow, type SpanRow } from "../../analysis/workflow/from-spans";
import { EmberscopeError } from "../domain/errors";
import { newId } from "../domain/ids";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { CompileReportSummary, CriticalPathAnswer, REPORT_LIST_LIMIT, ToolContract, ToolName, WorkflowEdgeView, WorkflowNodeView, WorkflowRecord } from "../domain/workflow";
import { recordAudit } from "../store/audit";
import { writeTransaction } from "../store/control-store";
import type { ObjectId } from "../store/object-store";
import { contractSideEffects, findWorkflow, getWorkflowRow, insertWorkflow, listContractRows, listWorkflowRows, upsertContract } from "../store/workflows";
import type { Workspace } from "../store/workspace";
import { requirePerson } from "./agent-access";
import { runEvidence } from "./evidence";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

/**
 * Workflows compiled from agent tool-call traces, the tool contracts people review, and the
 * critical path of any run with spans. The numbers come from analysis/ (compile.ts, report.ts),
 * the same code the page runs over DuckDB-WASM; this file only reads rows and stores results.
 */

const RunId = z.string().min(1).max(128);
const CommitArg = z.string().min(1).max(128).default("HEAD").describe('The commit to read; "HEAD" by default.');
const WorkflowId = z.string().regex(/^wf_[0-9a-z]{1,120}$/, "expected an id starting wf_");

/** The most spans (and causal edges) one critical path or compile reads. */
export const MAX_CRITICAL_PATH_SPANS = 1_000_000;
const MAX_CRITICAL_PATH_EDGES = 8_000_000;

interface RunSpans {
  commitId: string;
  spans: SpanRow[];
  edges: EdgeRow[];
  tracks: { track_id: number; process_name: string | null; thread_name: string | null }[];
  metadata: Record<string, string>;
}

/** A run's spans, causal edges and tracks at a pinned commit: its newest generation that has spans. */
async function readRunSpans(ws: Workspace, runId: string, commit: string): Promise<RunSpans> {
  const evidence = await runEvidence(ws, runId, commit);
  const commitId = evidence.reader.commit.commit_id;
  if (evidence.generations.length === 0) {
    throw new EmberscopeError("RUN_NOT_IN_COMMIT", "The run's evidence is not visible in that commit.", {
      details: { run_id: runId, commit_id: commitId },
      recovery: { operation: "critical_path.get", arguments: { run_id: runId, commit_id: "HEAD" }, safe_to_repeat: true },
    });
  }
  for (const generation of [...evidence.generations].reverse()) {
    const spans = (await evidence.reader.runShared(criticalPathSpansQuery, { generation, limit: MAX_CRITICAL_PATH_SPANS + 1 })) as SpanRow[];
    if (spans.length === 0) continue;
    if (spans.length > MAX_CRITICAL_PATH_SPANS) {
      throw new EmberscopeError("QUERY_BUDGET_EXCEEDED", `The run has more than ${MAX_CRITICAL_PATH_SPANS.toLocaleString("en")} spans; its critical path is computed for at most that many.`, {
        details: { run_id: runId, limit: MAX_CRITICAL_PATH_SPANS },
      });
    }
    const edges = (await evidence.reader.runShared(criticalPathEdgesQuery, { generation, limit: MAX_CRITICAL_PATH_EDGES })) as EdgeRow[];
    const tracks = await evidence.reader.run(tracksQuery, { generations: [generation] });
    return { commitId, spans, edges, tracks, metadata: evidence.metadata };
  }
  throw new EmberscopeError("NO_SPANS", "The run holds no spans, so it has no critical path: it is a profile of samples (see its flame graph).", {
    details: { run_id: runId, commit_id: commitId },
  });
}

/** Analysis failures as catalog errors: by their code, with what they name. */
function asCatalogError(error: unknown): unknown {
  if (error instanceof WorkflowCompileError) return new EmberscopeError(error.code, error.message, { details: error.details });
  if (error instanceof CycleError) return new EmberscopeError("CYCLE_DETECTED", error.message, { details: { cycle: error.cycle } });
  if (error instanceof CriticalPathInputError) return new EmberscopeError("INVALID_ARGUMENTS", error.message, { details: { reason: error.reason, ...error.at } });
  return error;
}

function compileRun(ws: Workspace, runId: string, read: RunSpans): { workflow: Workflow; report: CompileReport } {
  try {
    return compileWorkflow({
      source: { run_id: runId, commit_id: read.commitId, trace_id: read.metadata.trace_id ?? null },
      inputs: traceInputs(read.metadata),
      events: compileEventsFromSpans(read.spans, read.edges),
      contracts: contractSideEffects(ws.db),
    });
  } catch (error) {
    throw asCatalogError(error);
  }
}

function listed<T>(items: readonly T[]): { items: T[]; total: number } {
  return { items: items.slice(0, REPORT_LIST_LIMIT), total: items.length };
}

function summarizeReport(report: CompileReport): CompileReportSummary {
  return {
    ...report,
    filtered: listed(report.filtered),
    deduplicated: listed(report.deduplicated),
    not_deduplicated: listed(report.not_deduplicated),
    ties: listed(report.ties),
    unreadable: listed(report.unreadable),
  };
}

async function readWorkflowDocument(ws: Workspace, record: WorkflowRecord): Promise<Workflow> {
  const bytes = await ws.objects.read(record.digest as ObjectId, record.size_bytes);
  return JSON.parse(bytes.toString("utf8")) as Workflow;
}

// ---------------------------------------------------------------------------------------------
// Tool contracts

export const listToolContracts = defineService({
  name: "tools.list",
  summary: "List the reviewed tool contracts: what a person said each tool does (read or write), which the workflow compiler trusts over a trace.",
  kind: "query",
  input: z.object({ limit: z.number().int().min(1).max(5000).default(1000) }).strict(),
  output: z.object({ tools: z.array(ToolContract), truncated: z.boolean() }),
  handler: (input, { ws }) => {
    const rows = listContractRows(ws.db, input.limit + 1);
    return { tools: rows.slice(0, input.limit), truncated: rows.length > input.limit };
  },
});

export const reviewTool = defineService({
  name: "tools.review",
  summary: "Record a person's review of a tool: read-only (its calls may be merged and reordered) or write. Unblocks workflows waiting on it at their next compile; agents cannot review tools.",
  kind: "mutation",
  input: z
    .object({
      tool: ToolName,
      side_effect: z.enum(["read", "write"]),
      note: z.string().max(2000).default("").describe("Why: what you checked."),
      expected_revision: z.number().int().min(0).optional().describe("Compare-and-set: the contract's revision you read (0: none yet)."),
    })
    .strict(),
  output: ToolContract,
  handler: (input, { ws, ctx }) => {
    requirePerson(ctx, "review what a tool does");
    return writeTransaction(ws.db, () => {
      const contract = upsertContract(ws.db, { tool: input.tool, side_effect: input.side_effect, note: input.note, reviewed_by: ctx.actor, expected_revision: input.expected_revision ?? null });
      recordAudit(ws.db, { actor: ctx.actor, action: "tools.review", target: input.tool.slice(0, 512), resultCode: "OK", details: { side_effect: contract.side_effect, revision: contract.revision } });
      return contract;
    });
  },
});

// ---------------------------------------------------------------------------------------------
// Workflows

export const compileRunWorkflow = defineService({
  name: "workflows.compile",
  summary: "Compile a run's agent tool calls into a workflow DAG (failed calls filtered, repeated reads merged, references inferred) and store it, content-addressed; the same content is stored once.",
  kind: "mutation",
  input: z.object({ run_id: RunId, commit_id: CommitArg }).strict(),
  output: z.object({ workflow: WorkflowRecord, created: z.boolean().describe("False when the run already had a workflow with exactly this content.") }),
  handler: async (input, { ws, ctx }) => {
    const read = await readRunSpans(ws, input.run_id, input.commit_id);
    if (!runHoldsToolCalls(read.spans)) {
      throw new EmberscopeError("NO_TOOL_CALLS", "The run holds no tool calls to compile: it is not an agent trace. Its spans still have a critical path.", {
        details: { run_id: input.run_id },
        recovery: { operation: "critical_path.get", arguments: { run_id: input.run_id, commit_id: read.commitId }, safe_to_repeat: true },
      });
    }
    const { workflow, report } = compileRun(ws, input.run_id, read);
    const stored = await ws.objects.put(Buffer.from(canonicalJson(workflow), "utf8"));
    return writeTransaction(ws.db, () => {
      const existing = findWorkflow(ws.db, input.run_id, stored.id);
      if (existing) return { workflow: existing, created: false };
      const record = insertWorkflow(ws.db, {
        workflow_id: newId("wf"),
        digest: stored.id,
        size_bytes: stored.size,
        run_id: input.run_id,
        commit_id: read.commitId,
        status: workflow.status,
        blocked_tools: workflow.blocked_tools,
        node_count: workflow.nodes.length,
        edge_count: workflow.edges.length,
        report: summarizeReport(report),
        created_by: ctx.actor,
      });
      return { workflow: record, created: true };
    });
  },
});

export const getWorkflow = defineService({
  name: "workflows.get",
  summary: "Show a stored workflow: its record and compile report, its runtime inputs, and its nodes (arguments with references, recorded durations and results) with their edges, a page at a time.",
  kind: "query",
  input: z.object({ workflow_id: WorkflowId, limit: z.number().int().min(1).max(2000).default(100), cursor: CursorArg }).strict(),
  output: z.object({
    workflow: WorkflowRecord,
    inputs: z.record(z.string(), z.unknown()),
    nodes: z.array(WorkflowNodeView),
    edges: z.array(WorkflowEdgeView).describe("The edges into this page's nodes."),
    notice: z.string(),
    next_cursor: z.string().nullable(),
  }),
  handler: async (input, { ws }) => {
    const record = getWorkflowRow(ws.db, input.workflow_id);
    const doc = await readWorkflowDocument(ws, record);
    const page = keysetPage({
      ws,
      binding: { query: "workflows.get", filters: { workflow_id: input.workflow_id }, order: "node", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "workflows.get", arguments: { workflow_id: input.workflow_id, limit: input.limit } },
      fetch: (after: [number] | null, limit) => {
        const from = after ? after[0] + 1 : 0;
        return doc.nodes.slice(from, from + limit).map((node, k) => ({ node, index: from + k }));
      },
      keyOf: (item): [number] => [item.index],
    });
    const ids = new Set(page.items.map((i) => i.node.id));
    return {
      workflow: record,
      inputs: doc.inputs,
      nodes: page.items.map(({ node }) => ({
        id: node.id,
        tool: node.tool,
        side_effect: node.side_effect,
        side_effect_reviewed: node.side_effect_reviewed,
        agent: node.agent,
        arguments: node.arguments,
        call_ids: node.recorded.call_ids,
        start_ns: node.recorded.start_ns,
        duration_ns: node.recorded.duration_ns,
        own_ns: node.recorded.own_ns,
        result: node.recorded.result,
        result_truncated: node.recorded.result_truncated,
      })),
      edges: doc.edges.filter((e) => ids.has(e.to)),
      notice: record.report.notice,
      next_cursor: page.next_cursor,
    };
  },
});

/**
 * The agent's one door to workflows: a stored workflow by id, or a run's — compiled now when the
 * run has no workflow with its current content (compiling is deterministic and content-addressed,
 * so asking twice stores nothing new).
 */
export const openWorkflow = defineService({
  name: "workflows.open",
  summary: "Show a workflow by workflow_id, or a run's workflow by run_id (compiled and stored when the run has none with this content), with its nodes a page at a time.",
  kind: "mutation",
  input: z
    .object({
      workflow_id: WorkflowId.optional().describe("A stored workflow."),
      run_id: RunId.optional().describe("A run holding agent tool calls: its workflow, compiled when needed."),
      commit_id: CommitArg.describe("With run_id: the commit whose evidence is compiled."),
      limit: z.number().int().min(1).max(2000).default(100),
      cursor: CursorArg,
    })
    .strict(),
  output: getWorkflow.output.extend({ compiled: z.boolean().describe("True when this call compiled and stored a new workflow.") }),
  handler: async ({ workflow_id, run_id, commit_id, limit, cursor }, context) => {
    if ((workflow_id === undefined) === (run_id === undefined)) {
      throw new EmberscopeError("INVALID_ARGUMENTS", "Give exactly one of workflow_id (a stored workflow) or run_id (a run's workflow, compiled when needed).", {
        details: { argument: "workflow_id, run_id" },
      });
    }
    let id = workflow_id;
    let compiled = false;
    if (run_id !== undefined) {
      const result = await compileRunWorkflow.handler({ run_id, commit_id }, context);
      id = result.workflow.workflow_id;
      compiled = result.created;
    }
    return { ...(await getWorkflow.handler({ workflow_id: id!, limit, cursor }, context)), compiled };
  },
});

export const listWorkflows = defineService({
  name: "workflows.list",
  summary: "List stored workflows, newest first (optionally one run's), a page at a time.",
  kind: "query",
  input: z.object({ run_id: RunId.optional(), limit: Limit, cursor: CursorArg }).strict(),
  output: pageOf(WorkflowRecord),
  handler: (input, { ws }) => {
    const filters = { run_id: input.run_id ?? null };
    return keysetPage({
      ws,
      binding: { query: "workflows.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "workflows.list", arguments: { ...(input.run_id ? { run_id: input.run_id } : {}), limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listWorkflowRows(ws.db, { runId: filters.run_id, after, limit }),
      keyOf: (w): [string, string] => [w.created_at, w.workflow_id],
    });
  },
});

// ---------------------------------------------------------------------------------------------
// Critical path

export const getCriticalPath = defineService({
  name: "critical_path.get",
  summary:
    "The critical path of a run (or a stored workflow): for agent tool calls, the compiled workflow's DAG — sequential sum, critical path, speed-up bound, each call's slack, and 'what if this call took d'; for span traces (OTLP, Jaeger, Chrome), Jaeger's walk from the root — the path, each span's exclusive time on it, and per operation its critical time over the run's traces with p50/p95.",
  kind: "query",
  input: z
    .object({
      run_id: RunId.optional(),
      workflow_id: WorkflowId.optional().describe("A stored workflow instead of the run's tool calls compiled now."),
      commit_id: CommitArg,
      trace_id: z.string().min(1).max(256).optional().describe("Span traces: the trace whose path to show (default: the longest)."),
      what_if: z.object({ node: z.string().min(1).max(64), duration_ms: z.number().min(0).max(1e12) }).strict().optional().describe("Workflows: recompute as if that node took duration_ms."),
      limit: z.number().int().min(1).max(5000).default(200).describe("At most this many path entries, operations, nodes and traces."),
    })
    .strict()
    .refine((i) => (i.run_id === undefined) !== (i.workflow_id === undefined), { message: "give run_id or workflow_id, not both", path: ["run_id"] }),
  output: CriticalPathAnswer,
  handler: async (input, { ws }) => {
    const whatIf = input.what_if ? { whatIfNode: input.what_if.node, whatIfNs: Math.round(input.what_if.duration_ms * 1e6) } : {};
    try {
      if (input.workflow_id !== undefined) {
        const record = getWorkflowRow(ws.db, input.workflow_id);
        const doc = await readWorkflowDocument(ws, record);
        return bound(workflowCriticalPathReport(doc, whatIf), record.run_id, record.commit_id, doc.status, input.limit);
      }
      const runId = input.run_id!;
      const read = await readRunSpans(ws, runId, input.commit_id);
      if (runHoldsToolCalls(read.spans)) {
        const { workflow } = compileRun(ws, runId, read);
        return bound(workflowCriticalPathReport(workflow, whatIf), runId, read.commitId, workflow.status, input.limit);
      }
      if (input.what_if) throw new EmberscopeError("INVALID_ARGUMENTS", "what_if applies to workflows (tool calls); this run holds span traces.", { details: { argument: "what_if" } });
      const { spans, links } = spanInputsFromRows(read.spans, read.tracks, read.edges);
      const { report } = spanCriticalPathReport(spans, links, { trace: input.trace_id });
      return bound(report, runId, read.commitId, null, input.limit);
    } catch (error) {
      throw asCatalogError(error);
    }
  },
});

/** The report as answered: lists cut at `limit` (their totals given); nodes by slack, then order. */
function bound(report: CriticalPathReport, runId: string, commitId: string, status: Workflow["status"] | null, limit: number): CriticalPathAnswer {
  const nodes = report.nodes ? [...report.nodes].sort((a, b) => a.slack_ns - b.slack_ns || Number(a.id.slice(1)) - Number(b.id.slice(1))) : undefined;
  return {
    run_id: runId,
    commit_id: commitId,
    kind: report.kind,
    workflow_status: status,
    sequential_ns: report.sequential_ns,
    critical_path_ns: report.critical_path_ns,
    speedup_bound: report.speedup_bound,
    path: report.path.slice(0, limit),
    path_total: report.path.length,
    operations: report.operations.slice(0, limit),
    operations_total: report.operations.length,
    ...(nodes ? { nodes: nodes.slice(0, limit), nodes_total: nodes.length } : {}),
    ...(report.traces ? { traces: report.traces.slice(0, limit), traces_total: report.traces.length, trace: report.trace } : {}),
    ...(report.what_if ? { what_if: report.what_if } : {}),
  };
}
