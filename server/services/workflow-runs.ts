import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { workflowCriticalPathReport } from "../../analysis/critical-path/report";
import { canonicalJson } from "../../analysis/notebook/digest";
import type { Json } from "../../analysis/workflow/compile";
import { consumePlanOf, linkPlanOperation, peekPlan, storePlanOf } from "../capture/plan";
import { ensureWorker } from "../capture/pool";
import { loadProjectConfig } from "../capture/project-config";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import { newId } from "../domain/ids";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { recordAudit } from "../store/audit";
import { writeTransaction } from "../store/control-store";
import { displayPath } from "../store/layout";
import { createOperation, getOperation, Operation } from "../store/operations";
import { approvedTools, getWorkflowRunRow, insertWorkflowRun, listApprovals, listWorkflowRunRows, upsertApproval, workflowRunOfOperation, type WorkflowRunRow } from "../store/workflow-runs";
import { getContractRow, getWorkflowRow } from "../store/workflows";
import type { Workspace } from "../store/workspace";
import { generateWorkflowProject } from "../workflow/codegen";
import { verifyWorkflow } from "../workflow/integrity";
import { loadToolRegistry } from "../workflow/registry";
import type { WorkflowRunJob } from "../workflow/run-operation";
import { handlerFor } from "../workflow/runtime";
import { requirePerson } from "./agent-access";
import { keysetPage } from "./pagination";
import { defineService } from "./service";
import { readWorkflowDocument } from "./workflows";

/**
 * Workflows that run: approvals (a person allowing one side-effecting tool in one workflow), runs
 * (planned, then executed with a single-use token, like captures) and benchmarks, each an
 * operation the worker pool runs (server/workflow/run-operation.ts), and their records.
 */

const WorkflowId = z.string().regex(/^wf_[0-9a-z]{1,120}$/, "expected an id starting wf_");
const WorkflowRunId = z.string().regex(/^wfr_[0-9a-z]{1,120}$/, "expected an id starting wfr_");
const PLAN_KIND = "workflow_run";
const Mode = z.enum(["frozen", "controlled", "live"]);

const RunOptions = z.object({
  workflow_id: WorkflowId,
  mode: Mode.default("frozen").describe("frozen: recorded results, no handler runs, checks the recording reproduces; controlled: each call waits its recorded time, no tools; live: the registered handlers, every check applied."),
  inputs: z.record(z.string().max(256), z.json()).default({}).describe("Runtime inputs replacing the recorded ones, by name."),
  on_failure: z.enum(["continue", "cancel"]).default("continue").describe("continue: after a failure, calls not depending on it still run; cancel: stop everything."),
  concurrency: z.number().int().min(1).max(256).optional().describe("Calls at once, at most (default: emberscope.toml's tools.concurrency, 8)."),
});

const PlannedTool = z.object({
  tool: z.string(),
  calls: z.number().int(),
  side_effect: z.string().describe("The reviewed contract's, else the trace's."),
  registered: z.boolean(),
  review: z.enum(["reviewed", "unreviewed", "stale"]),
  approved: z.boolean().describe("A person allowed this tool's side effects in this workflow."),
  refusal: z.string().nullable().describe("Live mode: the typed error the call would be refused with, if any."),
});

const RunPlan = z.object({
  workflow_id: z.string(),
  digest: z.string(),
  mode: Mode,
  nodes: z.number().int(),
  concurrency: z.number().int(),
  on_failure: z.enum(["continue", "cancel"]),
  inputs: z.array(z.string()).describe("The runtime inputs given (names)."),
  tools: z.array(PlannedTool),
  would_run: z.boolean().describe("False when a live run would be refused before its first call (see tools[].refusal)."),
  sequential_ms: z.number(),
  critical_path_ms: z.number(),
});
type RunPlan = z.infer<typeof RunPlan>;

export const WorkflowRunView = z.object({
  workflow_run_id: z.string(),
  workflow_id: z.string(),
  operation_id: z.string(),
  kind: z.enum(["run", "benchmark"]),
  mode: Mode,
  state: z.enum(["queued", "running", "succeeded", "failed", "cancelled"]),
  replay_run_id: z.string().nullable().describe("The run holding the replay's calls as spans (trace window, critical path)."),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

function viewOf(row: WorkflowRunRow): z.infer<typeof WorkflowRunView> {
  return { workflow_run_id: row.id, workflow_id: row.workflow_id, operation_id: row.operation_id, kind: row.kind, mode: row.mode, state: row.state, replay_run_id: row.replay_run_id, created_by: row.created_by_actor, created_at: row.created_at, updated_at: row.updated_at };
}

async function planRun(ws: Workspace, input: z.output<typeof RunOptions>): Promise<RunPlan> {
  const record = getWorkflowRow(ws.db, input.workflow_id);
  const doc = await readWorkflowDocument(ws, record);
  await verifyWorkflow(doc, record.digest, record.workflow_id);
  for (const name of Object.keys(input.inputs)) {
    if (!Object.prototype.hasOwnProperty.call(doc.inputs, name)) throw new EmberscopeError("INVALID_ARGUMENTS", `The workflow has no runtime input named ${name.slice(0, 64)}.`, { details: { argument: "inputs", known: Object.keys(doc.inputs).slice(0, 50) } });
  }
  // Live runs need the registry (and fail on a broken tools folder); other modes only show it.
  const registry = input.mode === "live" ? await loadToolRegistry(ws.layout.projectRoot) : await loadToolRegistry(ws.layout.projectRoot).catch(() => null);
  const approved = approvedTools(ws.db, record.workflow_id, record.digest);
  const byTool = new Map<string, z.infer<typeof PlannedTool>>();
  for (const node of doc.nodes) {
    const known = byTool.get(node.tool);
    if (known) {
      known.calls++;
      continue;
    }
    const contract = getContractRow(ws.db, node.tool);
    const tool = registry?.get(node.tool) ?? null;
    let refusal: string | null = null;
    if (input.mode === "live") {
      try {
        handlerFor({ registry, contract: () => contract, approved, workflowId: record.workflow_id }, node);
      } catch (error) {
        refusal = toEmberscopeError(error).code;
      }
    }
    byTool.set(node.tool, {
      tool: node.tool.slice(0, 512),
      calls: 1,
      side_effect: contract?.side_effect ?? node.side_effect,
      registered: tool !== null,
      review: !contract ? "unreviewed" : tool && contract.handler_digest === tool.handler_digest ? "reviewed" : contract.handler_digest === null && !tool ? "reviewed" : "stale",
      approved: approved.has(node.tool),
      refusal,
    });
  }
  const tools = [...byTool.values()].sort((a, b) => (a.tool < b.tool ? -1 : 1));
  const bound = workflowCriticalPathReport(doc);
  return {
    workflow_id: record.workflow_id,
    digest: record.digest,
    mode: input.mode,
    nodes: doc.nodes.length,
    concurrency: input.concurrency ?? loadProjectConfig(ws.layout.projectRoot).tools.concurrency,
    on_failure: input.on_failure,
    inputs: Object.keys(input.inputs).sort(),
    tools,
    would_run: tools.every((t) => t.refusal === null),
    sequential_ms: bound.sequential_ns / 1e6,
    critical_path_ms: bound.critical_path_ns / 1e6,
  };
}

function intentDigest(job: Omit<WorkflowRunJob, "workflow_run_id">): string {
  return createHash("sha256").update(canonicalJson(job)).digest("hex");
}

/** Creates the operation and its workflow run (one transaction) and makes sure a pool worker will claim it; an idempotency key already used for the same intent reconnects. */
export function startRun(ws: Workspace, job: Omit<WorkflowRunJob, "workflow_run_id">, actor: string, idempotencyKey: string | undefined): { row: WorkflowRunRow; reconnected: boolean } {
  const workflowRunId = newId("wfr");
  const started = writeTransaction(ws.db, () => {
    const { operation, created } = createOperation(ws.db, {
      kind: "workflow_run",
      intent: { ...job, workflow_run_id: workflowRunId },
      intentDigest: intentDigest(job),
      runId: null,
      state: "queued",
      ...(idempotencyKey ? { idempotency: { scope: `workflows.${job.kind}`, key: idempotencyKey } } : {}),
    });
    if (!created) return { row: workflowRunOfOperation(ws.db, operation.operation_id)!, reconnected: true };
    return { row: insertWorkflowRun(ws.db, { id: workflowRunId, workflow_id: job.workflow_id, operation_id: operation.operation_id, kind: job.kind, mode: job.mode, created_by_actor: actor }), reconnected: false };
  });
  if (getOperation(ws.db, started.row.operation_id).state === "queued") ensureWorker(ws);
  return started;
}

const Started = z.object({ workflow_run: WorkflowRunView, operation: Operation, reconnected: z.boolean() });

export const runWorkflow = defineService({
  name: "workflows.run",
  summary:
    "Replay a stored workflow, in two steps like a capture: without plan_token it only plans — which tools would run, their review and approval, what a live run would be refused for — and returns the plan with a single-use plan_token; with the token it starts the run as an operation (progress in nodes, cancel) on the worker pool.",
  kind: "mutation",
  input: RunOptions.extend({
    plan_token: z.string().min(8).max(256).optional().describe("The token a plan returned: starts that plan."),
    expected_plan_id: z.string().min(1).max(128).optional(),
    idempotency_key: z.string().min(1).max(200).optional().describe("The same key and plan reconnect to the run it started."),
  }).strict(),
  output: z.object({
    plan: RunPlan,
    plan_id: z.string(),
    plan_token: z.string().nullable().describe("Secret, single use: pass it back to start the plan (null once started)."),
    expires_at: z.string().nullable(),
    started: Started.nullable(),
  }),
  handler: async (input, { ws, ctx }) => {
    if (input.plan_token === undefined) {
      const plan = await planRun(ws, input);
      const stored = storePlanOf(ws, PLAN_KIND, { ...plan, inputs_values: input.inputs }, createHash("sha256").update(canonicalJson(plan)).digest("hex"));
      return { plan, plan_id: stored.plan_id, plan_token: stored.plan_token, expires_at: stored.expires_at, started: null };
    }
    // A repeated request (same token and idempotency key) reconnects to what it started.
    const peek = peekPlan(ws, PLAN_KIND, input.plan_token);
    if (peek?.operationId && input.idempotency_key) {
      const row = workflowRunOfOperation(ws.db, peek.operationId);
      if (row) return { plan: (await planFromOperation(ws, row)) as RunPlan, plan_id: peek.planId, plan_token: null, expires_at: null, started: { workflow_run: viewOf(getWorkflowRunRow(ws.db, row.id)), operation: getOperation(ws.db, row.operation_id), reconnected: true } };
    }
    const consumed = consumePlanOf<RunPlan & { inputs_values: Record<string, Json> }>(ws, PLAN_KIND, input.plan_token, input.expected_plan_id, (intent) => ({
      operation: "workflows.run",
      arguments: { workflow_id: intent.workflow_id, mode: intent.mode },
      safe_to_repeat: true,
    }));
    const { inputs_values: inputs, ...plan } = consumed.intent;
    if (input.workflow_id !== plan.workflow_id) throw new EmberscopeError("PLAN_MISMATCH", "The token belongs to a plan of another workflow.", { details: { argument: "workflow_id", planned: plan.workflow_id } });
    const current = await planRun(ws, { workflow_id: plan.workflow_id, mode: plan.mode, inputs, on_failure: plan.on_failure, concurrency: plan.concurrency });
    if (canonicalJson(current) !== canonicalJson(plan)) {
      throw new EmberscopeError("STALE_INTENT", "The plan no longer matches: the workflow's tools, their reviews or approvals changed since planning. Plan again.", {
        details: { workflow_id: plan.workflow_id },
        recovery: { operation: "workflows.run", arguments: { workflow_id: plan.workflow_id, mode: plan.mode }, safe_to_repeat: true },
      });
    }
    const { row, reconnected } = startRun(ws, { workflow_id: plan.workflow_id, digest: plan.digest, kind: "run", mode: plan.mode, repetitions: 1, inputs, on_failure: plan.on_failure, concurrency: plan.concurrency }, ctx.actor, input.idempotency_key);
    linkPlanOperation(ws, consumed.planId, row.operation_id);
    return { plan, plan_id: consumed.planId, plan_token: null, expires_at: null, started: { workflow_run: viewOf(row), operation: getOperation(ws.db, row.operation_id), reconnected } };
  },
});

async function planFromOperation(ws: Workspace, row: WorkflowRunRow): Promise<RunPlan> {
  const op = ws.db.prepare("SELECT intent FROM operations WHERE id = ?").get(row.operation_id) as { intent: string };
  const job = JSON.parse(op.intent) as WorkflowRunJob;
  return planRun(ws, { workflow_id: job.workflow_id, mode: job.mode, inputs: job.inputs, on_failure: job.on_failure, concurrency: job.concurrency });
}

export const benchmarkWorkflow = defineService({
  name: "workflows.benchmark",
  summary:
    "Benchmark a stored workflow's replay: run it N times (controlled: each call waits its recorded time, no tools; live: the registered handlers) and report wall time median and spread, the recorded sequential sum, the critical-path bound and the speed-up achieved; the median repetition's calls become a new run's spans.",
  kind: "mutation",
  input: z
    .object({
      workflow_id: WorkflowId,
      mode: z.enum(["controlled", "live"]).default("controlled"),
      repetitions: z.number().int().min(1).max(100).default(5),
      concurrency: z.number().int().min(1).max(256).optional(),
      idempotency_key: z.string().min(1).max(200).optional(),
    })
    .strict(),
  output: Started,
  handler: async (input, { ws, ctx }) => {
    if (input.mode === "live") requirePerson(ctx, "benchmark a workflow live (its tools run)");
    const plan = await planRun(ws, { workflow_id: input.workflow_id, mode: input.mode, inputs: {}, on_failure: "cancel", concurrency: input.concurrency });
    const refused = plan.tools.find((t) => t.refusal !== null);
    if (refused) {
      throw new EmberscopeError(refused.refusal as "TOOL_NOT_REGISTERED", `A live benchmark would be refused: ${refused.tool} (${refused.refusal}).`, { details: { tool: refused.tool, plan } });
    }
    const { row, reconnected } = startRun(ws, { workflow_id: plan.workflow_id, digest: plan.digest, kind: "benchmark", mode: input.mode, repetitions: input.repetitions, inputs: {}, on_failure: "cancel", concurrency: plan.concurrency }, ctx.actor, input.idempotency_key);
    return { workflow_run: viewOf(row), operation: getOperation(ws.db, row.operation_id), reconnected };
  },
});

export const getWorkflowRun = defineService({
  name: "workflows.run_get",
  summary: "Show a workflow run: its state and operation, and once finished what ran, failed (with each typed error) and was skipped, per-node replayed vs recorded times, outputs, and a benchmark's figures (bounded: `limit` nodes).",
  kind: "query",
  input: z.object({ workflow_run_id: WorkflowRunId, limit: z.number().int().min(0).max(2000).default(50).describe("At most this many nodes (failed first, then in order).") }).strict(),
  output: z.object({
    workflow_run: WorkflowRunView,
    operation: Operation,
    summary: z.record(z.string(), z.unknown()).nullable().describe("Once finished: state, wall_ms, counts, reproduced (frozen), nodes (bounded; nodes_total), outputs, benchmark."),
  }),
  handler: (input, { ws }) => {
    const row = getWorkflowRunRow(ws.db, input.workflow_run_id);
    const summary = row.summary ? (JSON.parse(row.summary) as Record<string, unknown>) : null;
    if (summary && Array.isArray(summary.nodes)) {
      const nodes = summary.nodes as { state: string }[];
      const rank = (n: { state: string }) => (n.state === "failed" ? 0 : n.state === "cancelled" ? 1 : n.state === "skipped" ? 2 : 3);
      summary.nodes = nodes
        .map((n, i) => ({ n, i }))
        .sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i)
        .slice(0, input.limit)
        .map((x) => x.n);
      summary.nodes_shown = (summary.nodes as unknown[]).length;
    }
    return { workflow_run: viewOf(row), operation: getOperation(ws.db, row.operation_id), summary };
  },
});

export const listWorkflowRuns = defineService({
  name: "workflows.runs",
  summary: "List workflow runs and benchmarks, newest first (optionally one workflow's), a page at a time.",
  kind: "query",
  input: z.object({ workflow_id: WorkflowId.optional(), limit: Limit, cursor: CursorArg }).strict(),
  output: pageOf(WorkflowRunView),
  handler: (input, { ws }) => {
    const filters = { workflow_id: input.workflow_id ?? null };
    const page = keysetPage({
      ws,
      binding: { query: "workflows.runs", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "workflows.runs", arguments: { ...(input.workflow_id ? { workflow_id: input.workflow_id } : {}), limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listWorkflowRunRows(ws.db, { workflowId: filters.workflow_id, after, limit }),
      keyOf: (r): [string, string] => [r.created_at, r.id],
    });
    return { ...page, items: page.items.map(viewOf) };
  },
});

const Approval = z.object({ workflow_id: z.string(), tool: z.string(), workflow_digest: z.string(), note: z.string(), approved_by: z.string(), approved_at: z.string(), revoked_at: z.string().nullable() });

export const approveWorkflowTool = defineService({
  name: "workflows.approve",
  summary: "A person's approval: allow one side-effecting (write) tool in one workflow's live runs — bound to the workflow's content — or revoke it. Audited; agents cannot approve.",
  kind: "mutation",
  input: z.object({ workflow_id: WorkflowId, tool: z.string().min(1).max(512), note: z.string().max(2000).default(""), revoke: z.boolean().default(false) }).strict(),
  output: z.object({ approval: Approval, approvals: z.array(Approval) }),
  handler: async (input, { ws, ctx }) => {
    requirePerson(ctx, "approve a workflow's side effects");
    const record = getWorkflowRow(ws.db, input.workflow_id);
    const doc = await readWorkflowDocument(ws, record);
    if (!doc.nodes.some((n) => n.tool === input.tool)) throw new EmberscopeError("INVALID_ARGUMENTS", "The workflow makes no call of that tool.", { details: { argument: "tool", workflow_id: input.workflow_id } });
    return writeTransaction(ws.db, () => {
      const approval = upsertApproval(ws.db, { workflow_id: input.workflow_id, tool: input.tool, workflow_digest: record.digest, note: input.note, approved_by: ctx.actor, revoke: input.revoke });
      recordAudit(ws.db, { actor: ctx.actor, action: "workflows.approve", target: input.workflow_id, resultCode: "OK", details: { tool: input.tool.slice(0, 512), revoke: input.revoke, digest: record.digest } });
      return { approval, approvals: listApprovals(ws.db, input.workflow_id) };
    });
  },
});

export const codegenWorkflow = defineService({
  name: "workflows.codegen",
  summary:
    "Write a workflow as a standalone TypeScript project: an MCP server (the app's SDK version) exposing it as one tool, inert handler stubs that refuse until implemented, a README, and a test that calls the tool through the SDK client in frozen mode and expects the recorded results. A person's act (it writes files).",
  kind: "mutation",
  input: z.object({ workflow_id: WorkflowId, out: z.string().min(1).max(4096).describe("A new (or empty) folder; relative paths are from the current directory.") }).strict(),
  output: z.object({ workflow_id: z.string(), out: z.string(), files: z.array(z.string()), tool: z.string() }),
  handler: async (input, { ws, ctx }) => {
    requirePerson(ctx, "write a generated project");
    const record = getWorkflowRow(ws.db, input.workflow_id);
    const doc = await readWorkflowDocument(ws, record);
    await verifyWorkflow(doc, record.digest, record.workflow_id);
    const out = path.resolve(ctx.locator.cwd, input.out);
    if (out.split(path.sep).includes(".emberscope")) throw new EmberscopeError("POLICY_DENIED", "A generated project cannot be written inside a workspace folder.", { details: { argument: "out" } });
    const existing = await fsp.readdir(out).catch(() => null);
    if (existing && existing.length > 0) throw new EmberscopeError("INVALID_ARGUMENTS", "The output folder exists and is not empty; name a new folder.", { details: { argument: "out" } });
    const files = generateWorkflowProject(record.workflow_id, doc);
    for (const [name, text] of Object.entries(files)) {
      await fsp.mkdir(path.dirname(path.join(out, name)), { recursive: true });
      await fsp.writeFile(path.join(out, name), text, { flag: "wx" });
    }
    recordAudit(ws.db, { actor: ctx.actor, action: "workflows.codegen", target: record.workflow_id, resultCode: "OK", details: { files: Object.keys(files).length } });
    const tool = /export const TOOL_NAME = "([^"]+)"/.exec(files["src/server.ts"])![1];
    return { workflow_id: record.workflow_id, out: displayPath(out, ctx.locator.cwd), files: Object.keys(files).sort(), tool };
  },
});

export const workflowPolicy = defineService({
  name: "workflows.policy",
  summary: "A workflow's tools as a live run would meet them: each tool's calls, reviewed side effect, registered code, review state, whether a person approved its writes, and the typed error a live call would be refused with; and the approvals.",
  kind: "query",
  input: z.object({ workflow_id: WorkflowId }).strict(),
  output: z.object({ tools: z.array(PlannedTool), would_run: z.boolean(), approvals: z.array(Approval) }),
  handler: async (input, { ws }) => {
    const plan = await planRun(ws, { workflow_id: input.workflow_id, mode: "live", inputs: {}, on_failure: "continue" });
    return { tools: plan.tools, would_run: plan.would_run, approvals: listApprovals(ws.db, input.workflow_id) };
  },
});
