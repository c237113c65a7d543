import { reconcileOperations } from "../services/operations";
import { cancelOperation, executeCapturePlan, listCapabilities, listOperations, listWorkloads, planCapture, runCapture, showOperation, showWorkload, startCapture } from "../services";
import { openWorkspace } from "../store/workspace";
import { runWorker } from "../../workers/worker";
import { integerFlag, keyValueFlags, stringFlag, type OptionSpec, type ParsedArgs } from "./args";
import { keyValues, table } from "./render";
import { requirePositionals, serviceCommand, type CliCommand } from "./service-command";
import type { Operation } from "../store/operations";

const REQUEST_OPTIONS: Record<string, OptionSpec> = {
  workload: { type: "string", valueName: "NAME", description: "The workload declared in emberscope.toml." },
  param: { type: "string", valueName: "NAME=VALUE", multiple: true, field: "parameters", description: "A workload parameter (repeatable)." },
  option: { type: "string", valueName: "NAME=VALUE", multiple: true, field: "options", description: "An adapter option, e.g. interval_us=500 (repeatable)." },
};

function requestInput(args: ParsedArgs, adapter: string): Record<string, unknown> {
  return { adapter, workload: stringFlag(args.values, "workload"), parameters: keyValueFlags(args.values, "param"), options: keyValueFlags(args.values, "option") };
}

/** How a plan is executed from a shell: its secret token (flag or environment) and, optionally, the plan it must belong to. */
export const PLAN_TOKEN_OPTIONS: Record<string, OptionSpec> = {
  "plan-token": { type: "string", valueName: "TOKEN", description: "The plan's secret token (or set EMBERSCOPE_PLAN_TOKEN)." },
  "expected-plan-id": { type: "string", valueName: "PLAN_ID", description: "Refuse the token unless it belongs to this plan." },
};

export function planTokenInput(args: ParsedArgs): { plan_token: string | undefined; expected_plan_id: string | undefined } {
  return { plan_token: stringFlag(args.values, "plan-token") ?? process.env.EMBERSCOPE_PLAN_TOKEN, expected_plan_id: stringFlag(args.values, "expected-plan-id") };
}

const ADAPTER = [{ name: "ADAPTER", description: "node-cpuprofile, node-heapprofile, node-trace-events, callgrind, perf or measure." }];

const operationLine = (op: Operation) =>
  `${op.operation_id}  ${op.state}${op.phase ? ` (${op.phase}${op.progress.total !== null ? ` ${op.progress.completed ?? 0}/${op.progress.total}` : ""})` : ""}${op.run_id ? `  run ${op.run_id}` : ""}`;

const captureSummary = (r: { run_id: string; operation_id: string; commit_id: string | null; status: string; limitations: { code: string; message: string }[] }) =>
  `Capture ${r.status}: run ${r.run_id}, commit ${r.commit_id ?? "(none)"} (operation ${r.operation_id}).` +
  (r.limitations.length ? `\nLimitations:\n${r.limitations.map((l) => `  ${l.code}: ${l.message}`).join("\n")}` : "") +
  `\nNext: emberscope analyze hotspots ${r.run_id}`;

export const CAPTURE_COMMANDS: CliCommand[] = [
  serviceCommand({
    path: ["workload", "list"],
    service: listWorkloads,
    input: () => ({}),
    human: (r) => (r.workloads.length ? table(r.workloads.map((w) => ({ workload: w.name, command: w.argv.join(" "), timeout: `${w.timeout} s`, description: w.description ?? "" })), ["workload", "command", "timeout", "description"]) : "No workloads declared. Add [workloads.NAME] to emberscope.toml (see examples/demo)."),
  }),
  serviceCommand({
    path: ["workload", "show"],
    service: showWorkload,
    positionals: [{ name: "NAME", description: "The workload.", field: "workload" }],
    input: (_args, [name]) => ({ workload: name }),
    human: (w) => keyValues([["workload", w.name], ["argv", w.argv.join(" ")], ["cwd", w.cwd], ["timeout", `${w.timeout} s`], ["inherits", w.environment.inherited.join(", ")], ["sets", w.environment.set], ["withheld", w.environment.withheld.join(", ") || "(none)"], ["parameters", w.parameters]]),
  }),
  serviceCommand({
    path: ["capabilities"],
    service: listCapabilities,
    input: () => ({}),
    human: (r) => table(r.adapters.map((a) => ({ adapter: a.adapter, available: a.available ? "yes" : "no", version: a.version ?? "", note: a.reason ?? a.summary })), ["adapter", "available", "version", "note"]),
  }),
  serviceCommand({
    path: ["capture", "plan"],
    service: planCapture,
    positionals: ADAPTER,
    options: REQUEST_OPTIONS,
    input: (args, [adapter]) => requestInput(args, adapter),
    human: (p) => `Plan ${p.plan_id} (expires ${p.expires_at}):\n${JSON.stringify(p.plan, null, 2)}\n\nExecute it with: emberscope capture execute --plan-token TOKEN --expected-plan-id ${p.plan_id}\nplan_token (secret, single use):\n${p.plan_token}`,
  }),
  serviceCommand({
    path: ["capture", "execute"],
    service: executeCapturePlan,
    options: PLAN_TOKEN_OPTIONS,
    input: planTokenInput,
    human: captureSummary,
  }),
  serviceCommand({
    path: ["capture", "run"],
    service: runCapture,
    positionals: ADAPTER,
    options: REQUEST_OPTIONS,
    input: (args, [adapter]) => requestInput(args, adapter),
    human: captureSummary,
  }),
  serviceCommand({
    path: ["capture", "start"],
    service: startCapture,
    positionals: ADAPTER,
    options: { ...REQUEST_OPTIONS, "idempotency-key": { type: "string", valueName: "KEY", description: "The same key and request reconnect to the same operation." } },
    input: (args, [adapter]) => ({ ...requestInput(args, adapter), idempotency_key: stringFlag(args.values, "idempotency-key") }),
    human: (r) => `Operation ${r.operation_id} ${r.reconnected ? "(reconnected) " : ""}is ${r.status}; run ${r.run_id}.${r.worker_started ? " Started a pool worker." : ""}\nFollow it: emberscope ops show ${r.operation_id}`,
  }),
  serviceCommand({
    path: ["ops", "list"],
    service: listOperations,
    options: { active: { type: "boolean", description: "Only queued, running and cancelling operations." }, limit: { type: "string", valueName: "N", description: "Rows per page." }, cursor: { type: "string", valueName: "CURSOR", description: "Continue from next_cursor." } },
    input: (args) => ({ active: args.values.active === true ? true : undefined, limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor") }),
    human: (page) => (page.items.length ? page.items.map(operationLine).join("\n") : "No operations."),
  }),
  serviceCommand({
    path: ["ops", "show"],
    service: showOperation,
    positionals: [{ name: "OPERATION_ID", description: "The operation (op_…)." }],
    input: (_args, [id]) => ({ operation_id: id }),
    human: operationLine,
  }),
  serviceCommand({
    path: ["ops", "cancel"],
    service: cancelOperation,
    positionals: [{ name: "OPERATION_ID", description: "The operation (op_…)." }],
    input: (_args, [id]) => ({ operation_id: id }),
    human: operationLine,
  }),
  {
    path: ["worker"],
    summary: "Run a pool worker for this project (started by serve and capture start; rarely by hand).",
    hidden: true,
    options: {
      supervised: { type: "boolean", description: "Stop when the supervising server goes away." },
      "idle-exit": { type: "string", valueName: "SECONDS", description: "Exit after this long without work." },
    },
    positionals: [],
    services: [],
    execute: async (args, env) => {
      requirePositionals(args, []);
      const idle = integerFlag(args.values, "idle-exit");
      const result = await runWorker(env.ctx.locator, { mode: args.values.supervised === true ? "supervised" : "detached", idleExitMs: idle === undefined ? null : idle * 1000, log: env.log });
      const ws = openWorkspace(env.ctx.locator);
      try {
        reconcileOperations(ws);
      } finally {
        ws.close();
      }
      // A retired worker's abandoned tool code would keep this process alive: end it here.
      if (result.retired) process.exit(0);
      // A supervised worker's IPC channel keeps it alive until its supervisor lets go: it lets go
      // itself once stopped, so a server's stop does not wait out the supervisor's SIGKILL grace.
      if (process.connected) process.disconnect();
      return { document: result, human: `Worker stopped after ${result.operations} operation(s).`, exitCode: 0 };
    },
  },
];
