import { formatValue } from "../../analysis/flame/format";
import { EmberscopeError } from "../domain/errors";
import type { CriticalPathAnswer } from "../domain/workflow";
import { compileRunWorkflow, getCriticalPath, getWorkflow, listToolContracts, listWorkflows, reviewTool } from "../services";
import { integerFlag, stringFlag, type OptionSpec } from "./args";
import { keyValues, pageFooter, table } from "./render";
import { serviceCommand, type CliCommand } from "./service-command";

/** `workflows`, `critical-path` and `tools`: agent traces compiled into workflows, and their critical paths, from the shell. */

const LIST_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: "string", valueName: "N", description: "Rows per page (1–500, default 50)." },
  cursor: { type: "string", valueName: "CURSOR", description: "Continue from a previous page's next_cursor." },
};
const COMMIT_OPTION: Record<string, OptionSpec> = { commit: { type: "string", valueName: "COMMIT", description: "The commit to read (default HEAD).", field: "commit_id" } };

const formatNs = (ns: number) => formatValue(ns, "ns");

/** `--what-if NODE=MS` as the service's what_if. */
function whatIfFlag(raw: string | undefined): { node: string; duration_ms: number } | undefined {
  if (raw === undefined) return undefined;
  const m = /^([^=]+)=(\d+(?:\.\d+)?)$/.exec(raw);
  if (!m) throw new EmberscopeError("INVALID_ARGUMENTS", `--what-if takes NODE=MS, e.g. n3=120 (got ${JSON.stringify(raw.slice(0, 80))}).`, { details: { argument: "--what-if" } });
  return { node: m[1], duration_ms: Number(m[2]) };
}

function criticalPathText(a: CriticalPathAnswer): string {
  const head = keyValues([
    ["run", a.run_id],
    ["commit", a.commit_id],
    ["kind", a.kind === "workflow" ? `workflow (tool calls)${a.workflow_status === "blocked" ? " — blocked: review its unknown tools" : ""}` : `span traces${a.trace ? ` (trace ${a.trace})` : ""}`],
    ["sequential", formatNs(a.sequential_ns)],
    ["critical path", formatNs(a.critical_path_ns)],
    ["speed-up bound", `${a.speedup_bound.toFixed(2)}×`],
    ...(a.what_if ? ([["what if", `${a.what_if.node} took ${formatNs(a.what_if.duration_ns)} (recorded ${formatNs(a.what_if.recorded_ns)})`]] as [string, unknown][]) : []),
  ]);
  const path = table(
    a.path.map((p) => ({ id: p.id, name: p.name, service: p.service, start: formatNs(p.start_ns), end: formatNs(p.end_ns), "on path": formatNs(p.critical_ns) })),
    ["id", "name", "service", "start", "end", "on path"],
  );
  const more = a.path_total > a.path.length ? `\n… ${a.path_total - a.path.length} more on the path (--limit).` : "";
  const slack = a.nodes
    ? `\n\nLeast slack first (what to make faster first):\n${table(
        a.nodes.slice(0, 10).map((n) => ({ id: n.id, name: n.name, duration: formatNs(n.duration_ns), slack: formatNs(n.slack_ns), "on path": n.on_path ? "yes" : "" })),
        ["id", "name", "duration", "slack", "on path"],
      )}`
    : "";
  const ops = a.kind === "spans" ? `\n\nPer operation over the run's traces:\n${table(
        a.operations.slice(0, 10).map((o) => ({ service: o.service, operation: o.operation, critical: formatNs(o.critical_ns), count: o.count, traces: o.traces ?? "", p50: formatNs(o.p50_ns ?? 0), p95: formatNs(o.p95_ns ?? 0) })),
        ["service", "operation", "critical", "count", "traces", "p50", "p95"],
      )}` : "";
  return `${head}\n\nCritical path:\n${path}${more}${slack}${ops}`;
}

export const WORKFLOW_COMMANDS: CliCommand[] = [
  serviceCommand({
    path: ["workflows", "compile"],
    service: compileRunWorkflow,
    positionals: [{ name: "RUN", description: "A run holding agent tool calls (run_…).", field: "run_id" }],
    options: COMMIT_OPTION,
    input: (args, [run]) => ({ run_id: run, commit_id: stringFlag(args.values, "commit") }),
    human: ({ workflow: w, created }) =>
      `${created ? "Compiled" : "Already compiled as"} workflow ${w.workflow_id} (version ${w.version} of run ${w.run_id}): ${w.node_count} nodes, ${w.edge_count} edges, ${w.status}.` +
      (w.blocked_tools.length ? `\nBlocked until a person reviews: ${w.blocked_tools.join(", ")} (emberscope tools review TOOL --read-only, or --write).` : "") +
      `\nFiltered ${w.report.filtered.total} failed call(s), merged ${w.report.deduplicated.total} repeated read(s), inferred ${w.report.references.data_ref} reference(s) to results and ${w.report.references.input} to inputs (${w.report.ties.total} tie(s)).` +
      `\n${w.report.notice}\nNext: emberscope critical-path ${w.workflow_id}`,
  }),
  serviceCommand({
    path: ["workflows", "show"],
    service: getWorkflow,
    positionals: [{ name: "WORKFLOW", description: "The workflow (wf_…).", field: "workflow_id" }],
    options: LIST_OPTIONS,
    input: (args, [id]) => ({ workflow_id: id, limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor") }),
    human: (v) =>
      keyValues([
        ["workflow", v.workflow.workflow_id],
        ["run", `${v.workflow.run_id} @ ${v.workflow.commit_id}`],
        ["version", v.workflow.version],
        ["digest", v.workflow.digest],
        ["status", v.workflow.status + (v.workflow.blocked_tools.length ? ` (unknown: ${v.workflow.blocked_tools.join(", ")})` : "")],
        ["inputs", Object.keys(v.inputs).join(", ") || "none"],
      ]) +
      `\n\n${table(
        v.nodes.map((n) => ({ node: n.id, tool: n.tool, side_effect: n.side_effect + (n.side_effect_reviewed ? " (reviewed)" : ""), duration: formatNs(n.duration_ns), after: v.edges.filter((e) => e.to === n.id).map((e) => `${e.from}${e.kind === "data_ref" ? "*" : e.kind === "child" ? "^" : ""}`).join(" ") })),
        ["node", "tool", "side_effect", "duration", "after"],
      )}\n(after: * = uses its result, ^ = ran inside it)\n${v.notice}` +
      (v.next_cursor ? `\nMore: emberscope workflows show ${v.workflow.workflow_id} --cursor ${v.next_cursor}` : ""),
  }),
  serviceCommand({
    path: ["workflows", "list"],
    service: listWorkflows,
    options: { ...LIST_OPTIONS, run: { type: "string", valueName: "RUN", description: "Only this run's workflows." } },
    input: (args) => ({ run_id: stringFlag(args.values, "run"), limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor") }),
    human: (page) =>
      page.items.length
        ? table(
            page.items.map((w) => ({ workflow: w.workflow_id, run: w.run_id, version: w.version, status: w.status, nodes: w.node_count, edges: w.edge_count, created: w.created_at })),
            ["workflow", "run", "version", "status", "nodes", "edges", "created"],
          ) + pageFooter(page, "emberscope workflows list")
        : "No workflows yet. Compile an imported agent session: emberscope workflows compile RUN",
  }),
  serviceCommand({
    path: ["critical-path"],
    service: getCriticalPath,
    summary: "The critical path of a run (agent tool calls compiled into a workflow, or span traces) or of a stored workflow: sequential sum, path, speed-up bound, slack, per-operation critical time.",
    positionals: [{ name: "RUN", description: "A run (run_…) or a stored workflow (wf_…).", field: "run_id" }],
    options: {
      ...COMMIT_OPTION,
      trace: { type: "string", valueName: "ID", description: "Span traces: the trace whose path to show (default: the longest).", field: "trace_id" },
      "what-if": { type: "string", valueName: "NODE=MS", description: "Workflows: as if node NODE took MS milliseconds." },
      limit: { type: "string", valueName: "N", description: "At most N path entries, operations and nodes (default 200)." },
    },
    input: (args, [id]) => ({
      ...(id.startsWith("wf_") ? { workflow_id: id } : { run_id: id, commit_id: stringFlag(args.values, "commit") }),
      trace_id: stringFlag(args.values, "trace"),
      what_if: whatIfFlag(stringFlag(args.values, "what-if")),
      limit: integerFlag(args.values, "limit"),
    }),
    human: criticalPathText,
  }),
  serviceCommand({
    path: ["tools", "review"],
    service: reviewTool,
    positionals: [{ name: "TOOL", description: "The tool's name as traces give it." }],
    options: {
      "read-only": { type: "boolean", description: "It only reads: its calls may be merged and reordered." },
      write: { type: "boolean", description: "It changes the world (files, services)." },
      note: { type: "string", valueName: "TEXT", description: "What you checked." },
      "expected-revision": { type: "string", valueName: "N", description: "Compare-and-set: the contract's revision you read (0: none yet)." },
    },
    input: (args, [tool]) => {
      const readOnly = args.values["read-only"] === true;
      const write = args.values.write === true;
      if (readOnly === write) throw new EmberscopeError("INVALID_ARGUMENTS", "Say what the tool does: --read-only or --write.", { details: { argument: "--read-only" } });
      return { tool, side_effect: readOnly ? "read" : "write", note: stringFlag(args.values, "note"), expected_revision: integerFlag(args.values, "expected-revision") };
    },
    human: (c) => `Reviewed ${c.tool}: ${c.side_effect === "read" ? "read-only" : "writes"} (revision ${c.revision}). Compile again to apply it: emberscope workflows compile RUN`,
  }),
  serviceCommand({
    path: ["tools", "list"],
    service: listToolContracts,
    input: () => ({}),
    human: (r) =>
      (r.tools.length
        ? table(r.tools.map((t) => ({ tool: t.tool, side_effect: t.side_effect, revision: t.revision, by: t.reviewed_by, reviewed: t.updated_at, code: t.handler ?? "(none registered)", note: t.note })), ["tool", "side_effect", "revision", "by", "reviewed", "code", "note"])
        : "No tool reviewed yet. Tools whose side effect a trace does not say block their workflows until you run: emberscope tools review TOOL --read-only (or --write)") +
      `\n\nRegistered by code (built-ins and the tools folder in emberscope.toml):\n${table(
        r.registered.map((t) => ({ tool: t.name, declares: t.declared_side_effect, code: t.handler, timeout: `${t.binding.timeout_ms} ms`, concurrency: t.binding.concurrency, review: t.review })),
        ["tool", "declares", "code", "timeout", "concurrency", "review"],
      )}`,
  }),
];
