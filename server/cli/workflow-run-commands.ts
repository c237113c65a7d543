import { EmberscopeError, exitCodeFor, type ErrorCode } from "../domain/errors";
import { approveWorkflowTool, benchmarkWorkflow, callService, codegenWorkflow, exposeWorkflow, getWorkflowRun, listExposedWorkflows, listWorkflowRuns, runWorkflow, showOperation } from "../services";
import type { ServiceDef } from "../services/service";
import { integerFlag, stringFlag, type OptionSpec } from "./args";
import { keyValues, pageFooter, table } from "./render";
import { requirePositionals, serviceCommand, type CliCommand, type CliEnv } from "./service-command";

/** `workflows run|benchmark|runs|run-show|approve`: replaying stored workflows from the shell. */

type RunView = Awaited<ReturnType<typeof callGet>>;
const callGet = (env: CliEnv, id: string, limit = 50) => callService(getWorkflowRun, env.ctx, { workflow_run_id: id, limit });

/** Waits for a workflow run's operation, logging its progress; the run as shown at the end. */
async function waitForRun(env: CliEnv, workflowRunId: string, operationId: string): Promise<RunView> {
  let last = "";
  for (;;) {
    const op = await callService(showOperation, env.ctx, { operation_id: operationId });
    const line = `${op.state}${op.phase ? ` ${op.phase}` : ""}${op.progress.total ? ` ${op.progress.completed ?? 0}/${op.progress.total}` : ""}`;
    if (line !== last) env.log(line);
    last = line;
    if (["succeeded", "failed", "cancelled"].includes(op.state)) return callGet(env, workflowRunId);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ms = (v: unknown) => (typeof v === "number" ? `${v.toFixed(1)} ms` : "");

function runText(v: RunView): string {
  const s = (v.summary ?? {}) as Record<string, unknown>;
  const counts = s.counts as Record<string, number> | undefined;
  const error = v.operation.error as { code?: string; message?: string } | null;
  const head = keyValues([
    ["workflow run", v.workflow_run.workflow_run_id],
    ["workflow", v.workflow_run.workflow_id],
    ["kind", `${v.workflow_run.kind} (${v.workflow_run.mode})`],
    ["state", v.workflow_run.state + (error?.code ? ` — ${error.code}: ${error.message}` : "")],
    ...(s.wall_ms !== undefined ? ([["wall", ms(s.wall_ms)]] as [string, unknown][]) : []),
    ...(counts ? ([["calls", `${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.cancelled} cancelled`]] as [string, unknown][]) : []),
    ...(s.reproduced !== null && s.reproduced !== undefined ? ([["reproduced", s.reproduced ? "yes" : "no"]] as [string, unknown][]) : []),
    ...(v.workflow_run.replay_run_id ? ([["replay run", `${v.workflow_run.replay_run_id} (its spans: emberscope critical-path ${v.workflow_run.replay_run_id})`]] as [string, unknown][]) : []),
  ]);
  const bench = s.benchmark as Record<string, unknown> | undefined;
  const figures = bench
    ? "\n\n" +
      keyValues([
        ["repetitions", bench.repetitions],
        ["wall median", `${ms((bench.wall_ms as { median: number }).median)} (min ${ms((bench.wall_ms as { min: number }).min)}, max ${ms((bench.wall_ms as { max: number }).max)}, MAD ${ms((bench.wall_ms as { mad: number }).mad)})`],
        ["recorded sum", ms(bench.sequential_ms)],
        ["critical path", ms(bench.critical_path_ms)],
        ["speed-up bound", `${(bench.speedup_bound as number).toFixed(2)}×`],
        ["achieved", `${(bench.achieved_speedup as number).toFixed(2)}× (${((bench.efficiency as number) * 100).toFixed(1)} % of the bound)`],
      ])
    : "";
  const nodes = Array.isArray(s.nodes)
    ? "\n\n" +
      table(
        (s.nodes as { node: string; tool: string; state: string; start_ms: number | null; end_ms: number | null; recorded_ms: number; error: { code: string } | null; blocked_by: string | null }[]).map((n) => ({
          node: n.node,
          tool: n.tool,
          state: n.state + (n.error ? ` ${n.error.code}` : "") + (n.blocked_by ? ` (after ${n.blocked_by} failed)` : ""),
          replayed: n.start_ms !== null && n.end_ms !== null ? ms(n.end_ms - n.start_ms) : "",
          recorded: ms(n.recorded_ms),
        })),
        ["node", "tool", "state", "replayed", "recorded"],
      )
    : "";
  return head + figures + nodes;
}

function exitOf(v: RunView): number {
  const code = (v.operation.error as { code?: ErrorCode } | null)?.code;
  return v.workflow_run.state === "succeeded" ? 0 : code ? exitCodeFor(code) : 1;
}

/** `--input name=JSON` as runtime inputs. */
function inputFlags(values: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const raw of (values as string[] | undefined) ?? []) {
    const at = raw.indexOf("=");
    if (at <= 0) throw new EmberscopeError("INVALID_ARGUMENTS", `--input takes NAME=JSON (got ${JSON.stringify(raw.slice(0, 80))}).`, { details: { argument: "--input" } });
    try {
      out[raw.slice(0, at)] = JSON.parse(raw.slice(at + 1));
    } catch {
      out[raw.slice(0, at)] = raw.slice(at + 1);
    }
  }
  return out;
}

const WAIT_OPTIONS: Record<string, OptionSpec> = {
  detach: { type: "boolean", description: "Return once started (poll with: emberscope workflows run-show WFR)." },
  concurrency: { type: "string", valueName: "N", description: "Calls at once, at most (default: emberscope.toml's tools.concurrency, 8)." },
  "idempotency-key": { type: "string", valueName: "KEY", description: "Repeating the request with the same key reconnects to its run." },
};

const runCommand: CliCommand = {
  path: ["workflows", "run"],
  summary: "Replay a stored workflow (frozen: recorded results; controlled: recorded durations, no tools; live: the registered handlers, after every check) as an operation, and wait for it.",
  positionals: [{ name: "WORKFLOW", description: "The workflow (wf_…)." }],
  options: {
    mode: { type: "string", valueName: "MODE", description: "frozen (default), controlled or live." },
    input: { type: "string", valueName: "NAME=JSON", description: "A runtime input replacing the recorded one (repeatable).", multiple: true },
    "on-failure": { type: "string", valueName: "WHAT", description: "continue (default: calls not depending on a failure still run) or cancel." },
    ...WAIT_OPTIONS,
  },
  services: [runWorkflow as unknown as ServiceDef, getWorkflowRun as unknown as ServiceDef],
  execute: async (args, env) => {
    const [id] = requirePositionals(args, runCommand.positionals);
    const request = {
      workflow_id: id,
      mode: stringFlag(args.values, "mode"),
      inputs: inputFlags(args.values.input),
      on_failure: stringFlag(args.values, "on-failure"),
      concurrency: integerFlag(args.values, "concurrency"),
    };
    // A person at a shell plans and starts in one go; the plan is shown on stderr.
    const planned = await callService(runWorkflow, env.ctx, request);
    env.log(`Plan ${planned.plan_id}: ${planned.plan.nodes} calls (${planned.plan.mode}), tools: ${planned.plan.tools.map((t) => `${t.tool}×${t.calls}${t.refusal ? ` [${t.refusal}]` : ""}`).join(", ")}`);
    const started = await callService(runWorkflow, env.ctx, { workflow_id: id, plan_token: planned.plan_token!, expected_plan_id: planned.plan_id, idempotency_key: stringFlag(args.values, "idempotency-key") });
    const run = started.started!;
    if (args.values.detach === true) {
      const view = await callGet(env, run.workflow_run.workflow_run_id);
      return { document: view, human: `Started ${run.workflow_run.workflow_run_id} (operation ${run.operation.operation_id}).\nFollow it: emberscope workflows run-show ${run.workflow_run.workflow_run_id}`, exitCode: 0 };
    }
    const view = await waitForRun(env, run.workflow_run.workflow_run_id, run.operation.operation_id);
    return { document: view, human: runText(view), exitCode: exitOf(view) };
  },
};

const benchmarkCommand: CliCommand = {
  path: ["workflows", "benchmark"],
  summary: "Benchmark a workflow's replay N times (controlled or live): wall median and spread, recorded sum, critical-path bound, achieved speed-up; the median repetition becomes a run of spans.",
  positionals: [{ name: "WORKFLOW", description: "The workflow (wf_…)." }],
  options: {
    repetitions: { type: "string", valueName: "N", description: "How many replays (default 5)." },
    mode: { type: "string", valueName: "MODE", description: "controlled (default) or live." },
    ...WAIT_OPTIONS,
  },
  services: [benchmarkWorkflow as unknown as ServiceDef, getWorkflowRun as unknown as ServiceDef],
  execute: async (args, env) => {
    const [id] = requirePositionals(args, benchmarkCommand.positionals);
    const started = await callService(benchmarkWorkflow, env.ctx, {
      workflow_id: id,
      mode: stringFlag(args.values, "mode"),
      repetitions: integerFlag(args.values, "repetitions"),
      concurrency: integerFlag(args.values, "concurrency"),
      idempotency_key: stringFlag(args.values, "idempotency-key"),
    });
    if (args.values.detach === true) {
      const view = await callGet(env, started.workflow_run.workflow_run_id);
      return { document: view, human: `Started ${started.workflow_run.workflow_run_id}.\nFollow it: emberscope workflows run-show ${started.workflow_run.workflow_run_id}`, exitCode: 0 };
    }
    const view = await waitForRun(env, started.workflow_run.workflow_run_id, started.operation.operation_id);
    return { document: view, human: runText(view), exitCode: exitOf(view) };
  },
};

export const WORKFLOW_RUN_COMMANDS: CliCommand[] = [
  runCommand,
  benchmarkCommand,
  serviceCommand({
    path: ["workflows", "runs"],
    service: listWorkflowRuns,
    options: {
      workflow: { type: "string", valueName: "WORKFLOW", description: "Only this workflow's runs.", field: "workflow_id" },
      limit: { type: "string", valueName: "N", description: "Rows per page (1–500, default 50)." },
      cursor: { type: "string", valueName: "CURSOR", description: "Continue from a previous page's next_cursor." },
    },
    input: (args) => ({ workflow_id: stringFlag(args.values, "workflow"), limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor") }),
    human: (page) =>
      page.items.length
        ? table(
            page.items.map((r) => ({ run: r.workflow_run_id, workflow: r.workflow_id, kind: r.kind, mode: r.mode, state: r.state, replay: r.replay_run_id ?? "", created: r.created_at })),
            ["run", "workflow", "kind", "mode", "state", "replay", "created"],
          ) + pageFooter(page, "emberscope workflows runs")
        : "No workflow runs yet. Replay one: emberscope workflows run WORKFLOW --mode frozen",
  }),
  serviceCommand({
    path: ["workflows", "run-show"],
    service: getWorkflowRun,
    positionals: [{ name: "WFR", description: "The workflow run (wfr_…).", field: "workflow_run_id" }],
    options: { limit: { type: "string", valueName: "N", description: "At most N nodes (failed first; default 50)." } },
    input: (args, [id]) => ({ workflow_run_id: id, limit: integerFlag(args.values, "limit") }),
    human: runText,
  }),
  serviceCommand({
    path: ["workflows", "approve"],
    service: approveWorkflowTool,
    positionals: [
      { name: "WORKFLOW", description: "The workflow (wf_…).", field: "workflow_id" },
      { name: "TOOL", description: "The side-effecting tool to allow in its live runs." },
    ],
    options: { note: { type: "string", valueName: "TEXT", description: "Why." }, revoke: { type: "boolean", description: "Withdraw the approval." } },
    input: (args, [workflow, tool]) => ({ workflow_id: workflow, tool, note: stringFlag(args.values, "note"), revoke: args.values.revoke === true }),
    human: (r) => `${r.approval.revoked_at ? "Revoked" : "Approved"} ${r.approval.tool} in ${r.approval.workflow_id}'s live runs (for its content ${r.approval.workflow_digest.slice(0, 19)}…).`,
  }),
  serviceCommand({
    path: ["workflows", "expose"],
    service: exposeWorkflow,
    positionals: [{ name: "WORKFLOW", description: "The workflow (wf_…).", field: "workflow_id" }],
    options: {
      name: { type: "string", valueName: "NAME", description: "The MCP tool's name (workflow_…; default workflow_<id>)." },
      note: { type: "string", valueName: "TEXT", description: "What you checked." },
      withdraw: { type: "boolean", description: "Withdraw the exposure: the tool leaves agents' tool lists." },
      "expected-revision": { type: "string", valueName: "N", description: "Compare-and-set: the exposure's revision you read (0: none yet)." },
    },
    input: (args, [id]) => ({ workflow_id: id, name: stringFlag(args.values, "name"), note: stringFlag(args.values, "note"), withdraw: args.values.withdraw === true, expected_revision: integerFlag(args.values, "expected-revision") }),
    human: ({ exposure: e }) =>
      e.state === "exposed"
        ? `Exposed ${e.workflow_id} to agents as the MCP tool ${e.tool} (revision ${e.revision}; bound to its content ${e.workflow_digest.slice(0, 19)}… and ${e.contracts.length} reviewed read-only contract(s)). Agents see it at their next tools/list; withdraw it: emberscope workflows expose ${e.workflow_id} --withdraw`
        : `Withdrew ${e.tool} (${e.workflow_id}, revision ${e.revision}): agents no longer see it and its calls are refused.`,
  }),
  serviceCommand({
    path: ["workflows", "exposed"],
    service: listExposedWorkflows,
    options: { all: { type: "boolean", description: "Include withdrawn exposures." }, workflow: { type: "string", valueName: "WORKFLOW", description: "Only this workflow's exposure.", field: "workflow_id" } },
    input: (args) => ({ all: args.values.all === true, workflow_id: stringFlag(args.values, "workflow") }),
    human: (r) =>
      r.exposures.length
        ? table(
            r.exposures.map((e) => ({ tool: e.tool, workflow: e.workflow_id, state: e.state, current: e.state !== "exposed" ? "" : e.current ? "yes" : `no (${e.stale_reason})`, revision: e.revision, by: e.changed_by, changed: e.updated_at })),
            ["tool", "workflow", "state", "current", "revision", "by", "changed"],
          )
        : "No workflow is exposed to agents. Expose a reviewed read-only one: emberscope workflows expose WORKFLOW",
  }),
  serviceCommand({
    path: ["workflows", "codegen"],
    service: codegenWorkflow,
    positionals: [{ name: "WORKFLOW", description: "The workflow (wf_…).", field: "workflow_id" }],
    options: { out: { type: "string", valueName: "DIR", description: "A new (or empty) folder for the project." } },
    input: (args, [id]) => ({ workflow_id: id, out: stringFlag(args.values, "out") }),
    human: (r) => `Wrote ${r.files.length} files to ${r.out}: an MCP server exposing ${r.workflow_id} as the tool ${r.tool}.\nNext: cd ${r.out} && npm install && npm test`,
  }),
];
