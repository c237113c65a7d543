import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "../../analysis/notebook/digest";
import { sinkNodes, type Json, type Workflow } from "../../analysis/workflow/compile";
import { loadProjectConfig } from "../capture/project-config";
import { EmberscopeError, toEmberscopeError, type ErrorCode, type ErrorDocument } from "../domain/errors";
import type { WorkflowRecord } from "../domain/workflow";
import { recordAudit } from "../store/audit";
import { writeTransaction } from "../store/control-store";
import { exposedByTool, getExposureRow, lastExposureOfTool, listExposureRows, writeExposure, type BoundContract, type ExposureListing, type ExposureRow } from "../store/workflow-exposures";
import { getContractRow, getWorkflowRow } from "../store/workflows";
import type { Workspace } from "../store/workspace";
import { integrityGuard, verifyWorkflow } from "../workflow/integrity";
import { loadToolRegistry, type ToolRegistry } from "../workflow/registry";
import { awaitWorkflowRun } from "../workflow/await-run";
import type { NodeReport } from "../workflow/runtime";
import { requirePerson } from "./agent-access";
import { defineService } from "./service";
import { startRun } from "./workflow-runs";
import { readWorkflowDocument } from "./workflows";

/**
 * Compiled workflows as tools of Emberscope's own MCP server, off by default. Exposing one is a
 * person's act (CLI, or the workflow's page with the person's session; never an agent), refused
 * unless every tool the workflow calls is registered by code and bound to a reviewed read-only
 * contract; it is revisioned and audited. The exposure binds the workflow's content hash and each
 * contract (revision, handler digest): when either changes, the tool is refused
 * (WORKFLOW_EXPOSURE_STALE) until a person exposes it again.
 *
 * A call always replays live: the registered read-only handlers run with the agent's runtime
 * inputs, through the runtime's ordered per-call checks (integrity → exact handler and reviewed
 * contract → policy, with no approvals counted, and input schema → handler with timeout and the
 * client's cancellation → output schema). Frozen replay would return the recording whatever the
 * inputs — what get_workflow already shows — so it is not offered as a tool. A call is an answer,
 * not a recording: it publishes no replay run (`workflows.run` does that); the MCP layer audits it.
 */

const WorkflowId = z.string().regex(/^wf_[0-9a-z]{1,120}$/, "expected an id starting wf_");
/** An exposed tool's name: `workflow_` and a slug, within MCP's name rules and never a built-in's. */
export const EXPOSED_TOOL_NAME = /^workflow_[a-z0-9_]{1,55}$/;
const ExposedToolName = z.string().regex(EXPOSED_TOOL_NAME, "expected workflow_ and 1–55 of a-z, 0-9, _");
/** At most this many workflows are exposed at once: an agent's tool list stays short. */
export const MAX_EXPOSED_WORKFLOWS = 20;

export function defaultToolName(workflowId: string): string {
  return `workflow_${workflowId.slice(3).replace(/[^a-z0-9_]/g, "_")}`.slice(0, 64);
}

const digestOf = (value: unknown) => "sha256:" + createHash("sha256").update(canonicalJson(value as never)).digest("hex");

/** A runtime input's schema, from its recorded value's type (the value the workflow was recorded with). */
function inputSchemaOf(value: Json): z.ZodType {
  if (typeof value === "string") return z.string();
  if (typeof value === "number") return z.number();
  if (typeof value === "boolean") return z.boolean();
  if (Array.isArray(value)) return z.array(z.json());
  if (value !== null && typeof value === "object") return z.record(z.string(), z.json());
  return z.json();
}

/** The exposed tool's arguments: one optional argument per runtime input (its recorded value when absent), nothing else. */
export function exposedInputSchema(doc: Workflow): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, value] of Object.entries(doc.inputs).sort(([a], [b]) => (a < b ? -1 : 1))) {
    shape[name] = inputSchemaOf(value)
      .optional()
      .describe(`Runtime input ${name}; the recorded value (${JSON.stringify(value).slice(0, 80)}) when absent.`);
  }
  return z.object(shape).strict();
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function listingOf(record: WorkflowRecord, doc: Workflow, registry: ToolRegistry): ExposureListing {
  const sinks = sinkNodes(doc);
  const outputs: Record<string, unknown> = {};
  for (const node of sinks) {
    const schema = { ...(registry.get(node.tool)!.binding.output_schema as Record<string, unknown>) };
    delete schema.$schema;
    outputs[node.id] = { ...schema, description: `The result of ${node.id} (${node.tool}).` };
  }
  const tools = [...new Set(doc.nodes.map((n) => n.tool))].sort();
  const inputs = Object.keys(doc.inputs);
  return {
    description:
      `Workflow ${record.workflow_id}, compiled from run ${record.run_id} and exposed by a person: replays its ${doc.nodes.length} call(s) of ${tools.slice(0, 10).join(", ")}${tools.length > 10 ? ", …" : ""} live (read-only tools, each with a reviewed contract), ` +
      `calls starting as soon as their inputs are ready. Arguments: the runtime inputs (${inputs.length ? inputs.join(", ") : "none"}), each defaulting to its recorded value. ` +
      `Returns the results of the calls nothing depends on (${sinks.map((n) => n.id).slice(0, 10).join(", ")}), by node id.`,
    input_schema: jsonSchema(exposedInputSchema(doc)),
    output_schema: {
      type: "object",
      properties: {
        workflow_id: { type: "string" },
        tool: { type: "string" },
        outputs: { type: "object", properties: outputs, required: Object.keys(outputs), description: "The results of the calls nothing depends on, by node id." },
        wall_ms: { type: "number" },
        calls: { type: "integer" },
      },
      required: ["workflow_id", "tool", "outputs", "wall_ms", "calls"],
    },
    open_world: tools.some((t) => registry.get(t)?.handler !== "builtin"),
  };
}

/**
 * Whether a workflow may be exposed now: every tool registered by code, with a reviewed contract
 * bound to that code, and read-only. The first refusal is thrown with every problem in details.
 */
function readOnlyContracts(doc: Workflow, registry: ToolRegistry, contractOf: (tool: string) => ReturnType<typeof getContractRow>): BoundContract[] {
  const problems: { tool: string; code: ErrorCode }[] = [];
  const bound: BoundContract[] = [];
  for (const tool of [...new Set(doc.nodes.map((n) => n.tool))].sort()) {
    const registered = registry.get(tool);
    const contract = contractOf(tool);
    if (!registered) problems.push({ tool, code: "TOOL_NOT_REGISTERED" });
    else if (!contract || contract.handler_digest !== registered.handler_digest) problems.push({ tool, code: "TOOL_NOT_REVIEWED" });
    else if (contract.side_effect !== "read" || registered.definition.side_effect !== "read") problems.push({ tool, code: "WORKFLOW_NOT_READ_ONLY" });
    else bound.push({ tool, revision: contract.revision, handler_digest: registered.handler_digest });
  }
  if (problems.length === 0) return bound;
  const details = { tools: problems.slice(0, 50).map((p) => ({ tool: p.tool.slice(0, 512), refusal: p.code })) };
  const writes = problems.filter((p) => p.code === "WORKFLOW_NOT_READ_ONLY");
  if (writes.length) {
    throw new EmberscopeError("WORKFLOW_NOT_READ_ONLY", `Only a read-only workflow can be exposed to agents: ${writes.map((p) => p.tool).slice(0, 5).join(", ")} writes (approvals for live runs do not count).`, { details });
  }
  const first = problems[0];
  const why = first.code === "TOOL_NOT_REGISTERED" ? "has no code registered (built-ins and the tools folder in emberscope.toml)" : "has no reviewed contract for its registered code";
  throw new EmberscopeError(first.code, `The workflow cannot be exposed: ${first.tool} ${why}.`, { details });
}

const ExposureView = z.object({
  workflow_id: z.string(),
  tool: z.string().describe("The MCP tool's name (workflow_…)."),
  state: z.enum(["exposed", "withdrawn"]),
  workflow_digest: z.string().describe("The content hash the exposure binds."),
  contracts: z.array(z.object({ tool: z.string(), revision: z.number().int(), handler_digest: z.string() })).describe("Each tool's reviewed contract as exposed."),
  current: z.boolean().describe("False when the workflow or a contract changed since: calls are refused (WORKFLOW_EXPOSURE_STALE) until exposed again."),
  stale_reason: z.string().nullable(),
  input_schema: z.record(z.string(), z.unknown()),
  note: z.string(),
  changed_by: z.string(),
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
type ExposureView = z.infer<typeof ExposureView>;

function staleError(row: ExposureRow, reason: "workflow_changed" | "contract_changed" | "code_changed", extra: Record<string, unknown> = {}): EmberscopeError {
  const why = reason === "workflow_changed" ? "the workflow's content changed" : reason === "contract_changed" ? `the reviewed contract of ${String(extra.tool)} changed` : `the registered code of ${String(extra.tool)} changed`;
  return new EmberscopeError("WORKFLOW_EXPOSURE_STALE", `The tool ${row.tool_name} is refused: ${why} since a person exposed it. A person exposes it again (emberscope workflows expose ${row.workflow_id}) once it is reviewed.`, {
    details: { tool: row.tool_name, workflow_id: row.workflow_id, reason, ...extra },
  });
}

/**
 * The exposure checked against the workspace now: the workflow's record and stored document still
 * hash to the exposed content, and each tool's contract and registered code are those exposed.
 * Returns what a call needs, or throws WORKFLOW_EXPOSURE_STALE.
 */
async function currentExposure(ws: Workspace, row: ExposureRow, registry: ToolRegistry) {
  const record = getWorkflowRow(ws.db, row.workflow_id);
  if (record.digest !== row.workflow_digest) throw staleError(row, "workflow_changed", { expected: row.workflow_digest });
  let integrity: () => Promise<void>;
  let doc: Workflow;
  let deps: number[][];
  try {
    integrity = await integrityGuard(ws, row.workflow_id, row.workflow_digest);
    doc = await readWorkflowDocument(ws, record);
    deps = await verifyWorkflow(doc, row.workflow_digest, row.workflow_id);
  } catch (error) {
    const typed = toEmberscopeError(error);
    if (typed.code === "WORKFLOW_INTEGRITY_FAILED" || typed.code === "ARTIFACT_NOT_FOUND") throw staleError(row, "workflow_changed", { integrity: typed.details.reason ?? typed.code });
    throw typed;
  }
  for (const bound of row.contracts) {
    const contract = getContractRow(ws.db, bound.tool);
    if (!contract || contract.revision !== bound.revision || contract.handler_digest !== bound.handler_digest || contract.side_effect !== "read") throw staleError(row, "contract_changed", { tool: bound.tool });
    if (registry.get(bound.tool)?.handler_digest !== bound.handler_digest) throw staleError(row, "code_changed", { tool: bound.tool });
  }
  return { record, doc, deps, integrity };
}

async function viewOf(ws: Workspace, row: ExposureRow, registry: ToolRegistry | null): Promise<ExposureView> {
  let current = row.state === "exposed";
  let staleReason: string | null = null;
  if (current) {
    try {
      if (!registry) throw new EmberscopeError("TOOL_MODULE_INVALID", "The tools folder does not load.");
      await currentExposure(ws, row, registry);
    } catch (error) {
      const typed = toEmberscopeError(error);
      current = false;
      staleReason = typed.code === "WORKFLOW_EXPOSURE_STALE" ? String(typed.details.reason) : typed.code;
    }
  }
  return {
    workflow_id: row.workflow_id,
    tool: row.tool_name,
    state: row.state,
    workflow_digest: row.workflow_digest,
    contracts: row.contracts,
    current,
    stale_reason: staleReason,
    input_schema: row.listing.input_schema,
    note: row.note,
    changed_by: row.changed_by,
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const exposeWorkflow = defineService({
  name: "workflows.expose",
  summary:
    "A person's act: expose a reviewed, read-only workflow as a tool of Emberscope's MCP server (workflow_<slug>; its arguments are the workflow's runtime inputs), or withdraw it. Refused unless every tool it calls is registered by code with a reviewed read-only contract; bound to the workflow's content hash and those contracts, revisioned and audited. Agents cannot expose workflows.",
  kind: "mutation",
  input: z
    .object({
      workflow_id: WorkflowId,
      name: ExposedToolName.optional().describe("The tool's name (default workflow_<id without wf_>)."),
      note: z.string().max(2000).default("").describe("Why: what you checked."),
      withdraw: z.boolean().default(false).describe("Withdraw the exposure: the tool leaves tools/list and its calls are refused."),
      expected_revision: z.number().int().min(0).optional().describe("Compare-and-set: the exposure's revision you read (0: none yet)."),
    })
    .strict(),
  output: z.object({ exposure: ExposureView }),
  handler: async (input, { ws, ctx }) => {
    requirePerson(ctx, input.withdraw ? "withdraw an exposed workflow" : "expose a workflow to agents");
    const record = getWorkflowRow(ws.db, input.workflow_id);
    const registry = await loadToolRegistry(ws.layout.projectRoot);
    const current = getExposureRow(ws.db, record.workflow_id);
    if (input.withdraw) {
      if (!current || current.state !== "exposed") {
        throw new EmberscopeError("WORKFLOW_NOT_EXPOSED", `The workflow ${record.workflow_id} is not exposed, so there is nothing to withdraw.`, { details: { workflow_id: record.workflow_id } });
      }
      const row = writeTransaction(ws.db, () => {
        const next = writeExposure(ws.db, { ...current, state: "withdrawn", note: input.note || current.note, changed_by: ctx.actor }, input.expected_revision ?? null);
        recordAudit(ws.db, { actor: ctx.actor, action: "workflows.withdraw", target: record.workflow_id, resultCode: "OK", details: { tool: next.tool_name, revision: next.revision } });
        return next;
      });
      return { exposure: await viewOf(ws, row, registry) };
    }
    const doc = await readWorkflowDocument(ws, record);
    await verifyWorkflow(doc, record.digest, record.workflow_id);
    const contracts = readOnlyContracts(doc, registry, (tool) => getContractRow(ws.db, tool));
    const toolName = input.name ?? (current?.tool_name && current.tool_name.length > 0 ? current.tool_name : defaultToolName(record.workflow_id));
    const listing = listingOf(record, doc, registry);
    const row = writeTransaction(ws.db, () => {
      const exposedNow = listExposureRows(ws.db, { exposedOnly: true, limit: MAX_EXPOSED_WORKFLOWS + 1 }).filter((r) => r.workflow_id !== record.workflow_id);
      if (exposedNow.length >= MAX_EXPOSED_WORKFLOWS) {
        throw new EmberscopeError("INVALID_ARGUMENTS", `At most ${MAX_EXPOSED_WORKFLOWS} workflows are exposed at once; withdraw one first.`, { details: { argument: "workflow_id", exposed: exposedNow.map((r) => r.tool_name) } });
      }
      const next = writeExposure(
        ws.db,
        { workflow_id: record.workflow_id, tool_name: toolName, state: "exposed", workflow_digest: record.digest, contracts, contracts_digest: digestOf(contracts), listing, note: input.note, changed_by: ctx.actor },
        input.expected_revision ?? null,
      );
      recordAudit(ws.db, { actor: ctx.actor, action: "workflows.expose", target: record.workflow_id, resultCode: "OK", details: { tool: next.tool_name, revision: next.revision, digest: record.digest, contracts: next.contracts_digest } });
      return next;
    });
    return { exposure: await viewOf(ws, row, registry) };
  },
});

export const listExposedWorkflows = defineService({
  name: "workflows.exposed",
  summary: "List the workflows exposed as MCP tools (or one workflow's exposure, or all including withdrawn ones), each with whether it still matches what was exposed (current) or why its calls are refused.",
  kind: "query",
  input: z.object({ workflow_id: WorkflowId.optional(), all: z.boolean().default(false).describe("Include withdrawn exposures.") }).strict(),
  output: z.object({ exposures: z.array(ExposureView), max_exposed: z.number().int() }),
  handler: async (input, { ws }) => {
    const rows = input.workflow_id ? [getExposureRow(ws.db, input.workflow_id)].filter((r): r is ExposureRow => r !== null) : listExposureRows(ws.db, { exposedOnly: !input.all, limit: 500 });
    const registry = await loadToolRegistry(ws.layout.projectRoot).catch(() => null);
    const exposures: ExposureView[] = [];
    for (const row of rows) exposures.push(await viewOf(ws, row, registry));
    return { exposures, max_exposed: MAX_EXPOSED_WORKFLOWS };
  },
});

/** The exposure holding a tool name now, or the typed refusal (withdrawn or never exposed). */
export function exposureOfTool(ws: Workspace, toolName: string): ExposureRow {
  const row = exposedByTool(ws.db, toolName);
  if (row) return row;
  const last = lastExposureOfTool(ws.db, toolName);
  throw new EmberscopeError("WORKFLOW_NOT_EXPOSED", last ? `The tool ${toolName} was withdrawn by a person; it is no longer offered.` : `No workflow is exposed as ${toolName.slice(0, 64)}.`, {
    details: { tool: toolName.slice(0, 64), ...(last ? { workflow_id: last.workflow_id, withdrawn_at: last.updated_at } : {}) },
  });
}

export const callExposedWorkflow = defineService({
  name: "workflows.call_exposed",
  summary:
    "Call a workflow a person exposed as an MCP tool: checks the exposure still matches (content hash, contracts, code), then replays it live with these runtime inputs on the worker pool, through the runtime's per-call checks, publishes the replay as a run, and returns the results of the calls nothing depends on with the workflow run and replay run ids.",
  kind: "mutation",
  input: z.object({ tool: z.string().min(1).max(128), inputs: z.record(z.string().max(256), z.json()).default({}) }).strict(),
  output: z.object({
    workflow_id: z.string(),
    tool: z.string(),
    outputs: z.record(z.string(), z.unknown()),
    wall_ms: z.number(),
    calls: z.number().int(),
    workflow_run_id: z.string(),
    replay_run_id: z.string().nullable().describe("The run holding this call's replay as spans (trace window, critical path)."),
  }),
  handler: async (input, { ws, ctx }) => {
    const row = exposureOfTool(ws, input.tool);
    const registry = await loadToolRegistry(ws.layout.projectRoot);
    const { record, doc } = await currentExposure(ws, row, registry);
    const parsed = exposedInputSchema(doc).safeParse(input.inputs);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const argument = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : issue.path.map(String).join(".") || "(arguments)";
      throw new EmberscopeError("INVALID_ARGUMENTS", `Invalid argument ${argument.slice(0, 64)}: ${issue.message}.`, { details: { argument: argument.slice(0, 256), known: Object.keys(doc.inputs).slice(0, 50) } });
    }
    const inputs = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as Record<string, Json>;
    // A live run like `workflows run`'s, on the worker pool: tool code never runs in this process.
    const { row: run } = startRun(
      ws,
      { workflow_id: row.workflow_id, digest: record.digest, kind: "run", mode: "live", repetitions: 1, inputs, on_failure: "cancel", concurrency: loadProjectConfig(ws.layout.projectRoot).tools.concurrency, exposed: { tool: row.tool_name, revision: row.revision } },
      ctx.actor,
      undefined,
    );
    // Each call ends by its timeout, so a worker still calling past their sum is blocked.
    const budgetMs = doc.nodes.reduce((sum, node) => sum + (getContractRow(ws.db, node.tool)?.binding?.timeout_ms ?? registry.get(node.tool)?.definition.timeout_ms ?? 0), 0);
    const { operation, row: ended } = await awaitWorkflowRun(ws, { operationId: run.operation_id, workflowRunId: run.id, budgetMs, signal: ctx.signal });
    const cited = { tool: row.tool_name, workflow_id: row.workflow_id, workflow_run_id: run.id, replay_run_id: ended.replay_run_id };
    const summary = ended.summary ? (JSON.parse(ended.summary) as { wall_ms?: number; counts?: Record<string, number>; outputs?: Record<string, Json>; nodes?: NodeReport[] }) : {};
    if (operation.state === "succeeded") {
      return { workflow_id: row.workflow_id, tool: row.tool_name, outputs: summary.outputs ?? {}, wall_ms: Math.round((summary.wall_ms ?? 0) * 100) / 100, calls: doc.nodes.length, workflow_run_id: run.id, replay_run_id: ended.replay_run_id };
    }
    if (operation.state === "cancelled" || ctx.signal?.aborted) throw new EmberscopeError("CANCELLED", "The call was cancelled: its running tool calls were aborted.", { details: cited });
    const failed = summary.nodes?.find((n) => n.state === "failed" && n.error);
    if (failed?.error) throw new EmberscopeError(failed.error.code, failed.error.message, { details: { ...failed.error.details, ...cited, node: failed.node, counts: summary.counts } });
    // Refused before its first call, or its worker was stopped: the operation's own error.
    const error = operation.error as ErrorDocument | null;
    if (error) throw new EmberscopeError(error.code, error.message, { details: { ...error.details, ...cited }, recovery: error.recovery });
    throw new EmberscopeError("WORKFLOW_RUN_FAILED", `The workflow did not complete: ${summary.counts?.failed ?? 0} failed, ${summary.counts?.skipped ?? 0} skipped.`, { details: { ...cited, counts: summary.counts } });
  },
});
