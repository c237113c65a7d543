import { z } from "zod";
import { adapterNamed, ADAPTERS, probeAdapter } from "../capture/adapters";
import { buildChildEnv } from "../capture/child-env";
import { consumePlan, linkPlanOperation, resolveIntent, storePlan, type CaptureIntent } from "../capture/plan";
import { ensureWorker } from "../capture/pool";
import { getWorkload, loadProjectConfig, WorkloadSpec } from "../capture/project-config";
import { runCaptureOperation, type CaptureJob } from "../capture/run-capture";
import { EmberscopeError } from "../domain/errors";
import { Limitation } from "../domain/models";
import { attachRun, createOperation, OperationState } from "../store/operations";
import { createRun } from "../store/runs";
import { registerWorker, stopWorker } from "../store/workers";
import type { Workspace } from "../store/workspace";
import { defineService } from "./service";

const Value = z.union([z.string().max(4096), z.number(), z.boolean()]);
const CaptureRequest = z.object({
  adapter: z.string().min(1).max(64),
  workload: z.string().min(1).max(128),
  parameters: z.record(z.string(), Value).default({}).describe("Workload parameters (declared in emberscope.toml)."),
  options: z.record(z.string(), Value).default({}).describe("Adapter options (see captures.capabilities)."),
});

export const listWorkloads = defineService({
  name: "workloads.list",
  summary: "List the workloads declared in emberscope.toml.",
  kind: "query",
  input: z.object({}).strict(),
  output: z.object({ workloads: z.array(WorkloadSpec.extend({ name: z.string() })) }),
  handler: (_input, { ws }) => {
    const config = loadProjectConfig(ws.layout.projectRoot);
    return { workloads: Object.entries(config.workloads).map(([name, spec]) => ({ name, ...spec })) };
  },
});

export const showWorkload = defineService({
  name: "workloads.get",
  summary: "Show one declared workload: program, cwd, timeout, environment and parameters.",
  kind: "query",
  input: z.object({ workload: z.string().min(1).max(128) }).strict(),
  output: WorkloadSpec.extend({ name: z.string(), environment: z.object({ inherited: z.array(z.string()), set: z.record(z.string(), z.string()), withheld: z.array(z.string()) }) }),
  handler: (input, { ws }) => {
    const spec = getWorkload(loadProjectConfig(ws.layout.projectRoot), input.workload);
    return { name: input.workload, ...spec, environment: buildChildEnv(spec).review };
  },
});

export const listCapabilities = defineService({
  name: "captures.capabilities",
  summary: "Capture adapters and whether each is available on this machine (version, or the reason not).",
  kind: "query",
  input: z.object({}).strict(),
  output: z.object({
    adapters: z.array(
      z.object({
        adapter: z.string(),
        summary: z.string(),
        available: z.boolean(),
        version: z.string().nullable(),
        reason: z.string().nullable(),
        options: z.record(z.string(), z.object({ default: Value, description: z.string() })),
      }),
    ),
  }),
  handler: async () => ({
    adapters: await Promise.all(ADAPTERS.map(async (a) => ({ ...(await probeAdapter(a)), summary: a.summary, options: a.options }))),
  }),
});

export const captureOptions = defineService({
  name: "captures.options",
  summary: "What can be captured: the workloads declared in emberscope.toml and the capture adapters with their availability on this machine and their options.",
  kind: "query",
  input: z.object({}).strict(),
  output: z.object({ workloads: listWorkloads.output.shape.workloads, adapters: listCapabilities.output.shape.adapters }),
  handler: async (input, env) => ({ ...(await listWorkloads.handler(input, env)), ...(await listCapabilities.handler(input, env)) }),
});

const PlanResult = z.object({ plan_id: z.string(), plan_token: z.string(), expires_at: z.string(), plan: z.record(z.string(), z.unknown()) });

export const planCapture = defineService({
  name: "captures.plan",
  summary: "Resolve a capture into a reviewable plan with a public plan_id and a secret single-use plan_token (10 minutes).",
  kind: "mutation",
  input: CaptureRequest.strict(),
  output: PlanResult,
  handler: async (input, { ws }) => {
    const { intent, digest } = await resolveIntent(ws, input);
    const plan = storePlan(ws, intent, digest);
    return { plan_id: plan.plan_id, plan_token: plan.plan_token, expires_at: plan.expires_at, plan: intent as unknown as Record<string, unknown> };
  },
});

export const CaptureResult = z.object({
  run_id: z.string(),
  operation_id: z.string(),
  commit_id: z.string().nullable(),
  status: z.enum(["queued", "succeeded", "failed", "cancelled"]).describe("queued: started in the background (poll the operation); otherwise how it ended."),
  limitations: z.array(Limitation),
});

function requestOf(intent: CaptureIntent) {
  return { adapter: intent.adapter.name, workload: intent.workload.name, parameters: intent.workload.parameters, options: intent.adapter.options };
}

/** Most characters of the parameters a capture's title lists. */
const TITLE_PARAMETER_CHARS = 80;

/**
 * A capture's title tells it from the other captures of the same workload: the workload, its
 * parameters, the adapter and when it started (UTC, to the second), e.g.
 * `demo (seconds=1, mode=hash) · node-cpuprofile · 2026-12-01 14:03:07 UTC`.
 */
export function captureTitle(workload: string, parameters: Record<string, string | number | boolean>, adapter: string, at: string): string {
  const listed = Object.entries(parameters)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(", ");
  const clipped = listed.length > TITLE_PARAMETER_CHARS ? `${listed.slice(0, TITLE_PARAMETER_CHARS - 1)}…` : listed;
  return `${workload}${clipped ? ` (${clipped})` : ""} · ${adapter} · ${at.slice(0, 19).replace("T", " ")} UTC`;
}

/** The run and operation records of a capture, before any process starts (an experiment makes one per trial). */
export function createCaptureRecords(ws: Workspace, intent: CaptureIntent, digest: string, mode: { inline: ReturnType<typeof registerWorker> } | { queued: { key: string } }) {
  const job: CaptureJob = { capture: intent, env: buildChildEnv(intent.workload.declaration).env };
  const { operation, created } = createOperation(ws.db, {
    kind: "capture",
    intent: job,
    intentDigest: digest,
    runId: null,
    state: "inline" in mode ? "running" : "queued",
    lease: "inline" in mode ? mode.inline : undefined,
    idempotency: "queued" in mode ? { scope: "captures.start", key: mode.queued.key } : undefined,
  });
  if (!created) return { operation, runId: operation.run_id!, created };
  const run = createRun(ws.db, {
    kind: "capture",
    source: intent.adapter.name,
    title: captureTitle(intent.workload.name, intent.workload.parameters, intent.adapter.name, operation.created_at),
    status: "pending",
    execution_state: "pending",
    capture_state: "pending",
    extraction_state: "pending",
    details: { workload: intent.workload.name, adapter: intent.adapter.name, adapter_version: intent.adapter.version, parameters: intent.workload.parameters, operation_id: operation.operation_id },
  });
  attachRun(ws.db, operation.operation_id, run.run_id);
  return { operation, runId: run.run_id, created };
}

/** Runs a consumed plan in this process (holding the operation's lease) and reports its outcome. */
async function executeInline(ws: Workspace, intent: CaptureIntent, digest: string, planId: string | null): Promise<z.infer<typeof CaptureResult>> {
  const identity = registerWorker(ws.db, "inline");
  try {
    const { operation, runId } = createCaptureRecords(ws, intent, digest, { inline: identity });
    if (planId) linkPlanOperation(ws, planId, operation.operation_id);
    const outcome = await runCaptureOperation(ws, operation.operation_id, identity);
    if (outcome.status !== "succeeded" && outcome.error) {
      throw new EmberscopeError(outcome.error.code, outcome.error.message, {
        details: { ...outcome.error.details, run_id: runId, operation_id: operation.operation_id },
        recovery: { operation: "runs.get", arguments: { run_id: runId }, safe_to_repeat: true },
      });
    }
    return { run_id: outcome.run_id, operation_id: outcome.operation_id, commit_id: outcome.commit_id, status: outcome.status, limitations: outcome.limitations };
  } finally {
    stopWorker(ws.db, identity);
  }
}

export const executeCapturePlan = defineService({
  name: "captures.execute",
  summary: "Execute a reviewed plan with its single-use plan_token (consumed before anything starts).",
  kind: "mutation",
  input: z
    .object({
      plan_token: z.string().min(8).max(256),
      expected_plan_id: z.string().min(1).max(128).optional(),
      background: z.boolean().default(false).describe("Queue it for the worker pool and return at once with the operation (status queued) instead of waiting for it to end."),
    })
    .strict(),
  output: CaptureResult,
  handler: async (input, { ws }) => {
    const plan = consumePlan(ws, input.plan_token, input.expected_plan_id);
    const { digest } = await resolveIntent(ws, requestOf(plan.intent)).catch((error: unknown) => {
      throw error instanceof EmberscopeError && ["WORKLOAD_NOT_FOUND", "CONFIG_INVALID", "CAPABILITY_UNAVAILABLE"].includes(error.code) ? staleIntent(plan.intent, error.message) : error;
    });
    if (digest !== plan.digest) throw staleIntent(plan.intent, "the workload's declaration, program or environment changed since planning");
    if (input.background) return queuePlanned(ws, plan.intent, plan.digest, plan.planId);
    return executeInline(ws, plan.intent, plan.digest, plan.planId);
  },
});

/** Queues a consumed plan for the worker pool; the plan id is its idempotency key, so one plan is one operation. */
function queuePlanned(ws: Workspace, intent: CaptureIntent, digest: string, planId: string): z.infer<typeof CaptureResult> {
  const { operation, runId } = createCaptureRecords(ws, intent, digest, { queued: { key: `plan:${planId}` } });
  linkPlanOperation(ws, planId, operation.operation_id);
  if (operation.state === "queued") ensureWorker(ws);
  return { run_id: runId, operation_id: operation.operation_id, commit_id: null, status: "queued", limitations: [] };
}

function staleIntent(intent: CaptureIntent, why: string): EmberscopeError {
  return new EmberscopeError("STALE_INTENT", `The plan no longer matches: ${why}. Plan again.`, {
    details: { workload: intent.workload.name, adapter: intent.adapter.name },
    recovery: { operation: "captures.plan", arguments: requestOf(intent), safe_to_repeat: true },
  });
}

export const runCapture = defineService({
  name: "captures.run",
  summary: "Plan and execute a capture in one step (for people at a shell; agents plan first).",
  kind: "mutation",
  input: CaptureRequest.strict(),
  output: CaptureResult,
  handler: async (input, { ws }) => {
    const { intent, digest } = await resolveIntent(ws, input);
    const plan = storePlan(ws, intent, digest);
    const consumed = consumePlan(ws, plan.plan_token, plan.plan_id);
    return executeInline(ws, consumed.intent, consumed.digest, consumed.planId);
  },
});

export const startCapture = defineService({
  name: "captures.start",
  summary: "Queue a capture for the worker pool and return at once; the same idempotency_key reconnects.",
  kind: "mutation",
  input: CaptureRequest.extend({ idempotency_key: z.string().min(1).max(200) }).strict(),
  output: z.object({ operation_id: z.string(), run_id: z.string(), status: OperationState, reconnected: z.boolean(), worker_started: z.boolean() }),
  handler: async (input, { ws }) => {
    adapterNamed(input.adapter);
    const { intent, digest } = await resolveIntent(ws, input);
    const { operation, runId, created } = createCaptureRecords(ws, intent, digest, { queued: { key: input.idempotency_key } });
    const worker = operation.state === "queued" ? ensureWorker(ws) : { started: false };
    return { operation_id: operation.operation_id, run_id: runId, status: operation.state, reconnected: !created, worker_started: worker.started };
  },
});
