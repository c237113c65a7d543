import { EmberscopeError } from "../domain/errors";
import type { Experiment } from "../domain/experiment";
import { listExperiments, planExperiment, resumeExperiment, runExperiment, showExperiment } from "../services/experiments";
import { integerFlag, keyValueFlags, stringFlag, type OptionSpec, type ParsedArgs } from "./args";
import { PLAN_TOKEN_OPTIONS, planTokenInput } from "./capture-commands";
import { keyValues, pageFooter, table } from "./render";
import { serviceCommand, type CliCommand } from "./service-command";

/** `emberscope experiments plan|run|resume|show|list`: randomized paired trials of workload variants. */

function invalid(argument: string, message: string): EmberscopeError {
  return new EmberscopeError("INVALID_ARGUMENTS", message, { details: { argument } });
}

/** `--variant NAME=WORKLOAD[,PARAM=VALUE…]`, e.g. `--variant heavy=demo,mode=batch-heavy`. */
export function parseVariant(text: string): { name: string; workload: string; parameters: Record<string, string> } {
  const [head, ...params] = text.split(",");
  const eq = head.indexOf("=");
  if (eq <= 0 || eq === head.length - 1) throw invalid("--variant", `--variant takes NAME=WORKLOAD[,PARAM=VALUE…] (got ${JSON.stringify(text)}).`);
  return { name: head.slice(0, eq), workload: head.slice(eq + 1), parameters: keyValueFlags({ p: params }, "p") };
}

function numberFlag(values: ParsedArgs["values"], name: string): number | undefined {
  const raw = stringFlag(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n)) throw invalid(`--${name}`, `--${name} takes a number.`);
  return n;
}

const PLAN_OPTIONS: Record<string, OptionSpec> = {
  investigation: { type: "string", valueName: "INVESTIGATION_ID", field: "investigation_id", description: "The investigation it belongs to." },
  hypothesis: { type: "string", valueName: "HYPOTHESIS_ID", field: "hypothesis_id", description: "The hypothesis it tests." },
  title: { type: "string", valueName: "TEXT", description: "A title (default: the variants' names)." },
  variant: { type: "string", valueName: "NAME=WORKLOAD[,PARAM=VALUE…]", multiple: true, field: "variants", description: "A variant (at least two; the first is the baseline unless --baseline)." },
  baseline: { type: "string", valueName: "NAME", description: "The variant the others are compared with." },
  adapter: { type: "string", valueName: "ADAPTER", description: "measure (default) or callgrind, or any adapter whose run yields the metric." },
  option: { type: "string", valueName: "NAME=VALUE", multiple: true, field: "options", description: "An adapter option of every trial (repeatable)." },
  metric: { type: "string", valueName: "NAME", description: "Primary metric: wall_ns (measure's default), cpu_ns, max_rss_bytes, instructions (callgrind's default)…" },
  polarity: { type: "string", valueName: "lower_is_better|higher_is_better", description: "Which direction is better (lower by default)." },
  threshold: { type: "string", valueName: "FRACTION", description: "The smallest change that matters (0.02 = 2 %, the default)." },
  confidence: { type: "string", valueName: "LEVEL", description: "Confidence level of the interval (0.95 by default)." },
  trials: { type: "string", valueName: "N", description: "Measured trials per variant (10 by default)." },
  warmups: { type: "string", valueName: "N", description: "Warm-up blocks, discarded (1 by default)." },
  seed: { type: "string", valueName: "N", description: "Seeds the run order and the bootstrap (random by default, and kept)." },
};

function planInput(args: ParsedArgs): Record<string, unknown> {
  const v = args.values;
  const variants = v.variant === undefined ? [] : (Array.isArray(v.variant) ? v.variant : [String(v.variant)]).map(parseVariant);
  return {
    investigation_id: stringFlag(v, "investigation"),
    hypothesis_id: stringFlag(v, "hypothesis"),
    title: stringFlag(v, "title"),
    variants,
    baseline: stringFlag(v, "baseline"),
    adapter: stringFlag(v, "adapter"),
    options: keyValueFlags(v, "option"),
    metric: stringFlag(v, "metric"),
    polarity: stringFlag(v, "polarity"),
    threshold: numberFlag(v, "threshold"),
    confidence: numberFlag(v, "confidence"),
    trials: integerFlag(v, "trials"),
    warmups: integerFlag(v, "warmups"),
    seed: integerFlag(v, "seed"),
  };
}

const percent = (ratio: number) => `${((ratio - 1) * 100).toFixed(1)} %`;

function analysisLines(e: Experiment): string {
  if (!e.analysis) return "Not analysed yet: the analysis is stored once every trial ran.";
  const comparisons = e.analysis.comparisons.map((c) => ({
    variant: `${c.variant} vs ${c.baseline}`,
    decision: c.decision,
    ratio: c.ratio === null ? "" : `${c.ratio.toFixed(4)} (${percent(c.ratio)})`,
    [`${Math.round(e.analysis!.confidence * 100)} % CI`]: c.ci ? `${c.ci[0].toFixed(4)} … ${c.ci[1].toFixed(4)}` : "",
    pairs: c.pairs,
  }));
  const warnings = e.analysis.warnings.map((w) => `  ${w.code}: ${w.message}`).join("\n");
  return `${table(comparisons, Object.keys(comparisons[0] ?? {}))}${warnings ? `\nWarnings:\n${warnings}` : ""}`;
}

const experimentLine = (e: Experiment) => `${e.experiment_id}  ${e.state}  ${e.title}  (${e.design.adapter}, ${e.design.metric}, ${e.design.trials} trials per variant)`;

const started = (r: { experiment_id: string; operation_id: string; status: string; reconnected: boolean; worker_started: boolean }) =>
  `Experiment ${r.experiment_id}: operation ${r.operation_id} ${r.reconnected ? "(reconnected) " : ""}is ${r.status}.${r.worker_started ? " Started a pool worker." : ""}\nFollow it: emberscope experiments show ${r.experiment_id}`;

export const EXPERIMENT_COMMANDS: CliCommand[] = [
  serviceCommand({
    path: ["experiments", "plan"],
    service: planExperiment,
    options: PLAN_OPTIONS,
    input: planInput,
    human: (p) =>
      `Plan ${p.plan_id} of experiment ${p.experiment.experiment_id} (expires ${p.expires_at}): ${p.plan.trials.length} trials in this order:\n` +
      table(
        p.plan.trials.map((t) => ({ trial: t.index, block: t.warmup ? `warm-up ${t.block}` : t.block, variant: t.variant, command: t.argv.join(" ") })),
        ["trial", "block", "variant", "command"],
      ) +
      `\n\nRun it with: emberscope experiments run --plan-token TOKEN --expected-plan-id ${p.plan_id} --idempotency-key KEY\nplan_token (secret, single use):\n${p.plan_token}`,
  }),
  serviceCommand({
    path: ["experiments", "run"],
    service: runExperiment,
    options: { ...PLAN_TOKEN_OPTIONS, "idempotency-key": { type: "string", valueName: "KEY", description: "The same key and plan reconnect to the same operation." } },
    input: (args) => ({ ...planTokenInput(args), idempotency_key: stringFlag(args.values, "idempotency-key") }),
    human: started,
  }),
  serviceCommand({
    path: ["experiments", "resume"],
    service: resumeExperiment,
    positionals: [{ name: "EXPERIMENT_ID", description: "The experiment (exp_…)." }],
    options: { "idempotency-key": { type: "string", valueName: "KEY", description: "The same key reconnects to the same operation." } },
    input: (args, [id]) => ({ experiment_id: id, idempotency_key: stringFlag(args.values, "idempotency-key") }),
    human: started,
  }),
  serviceCommand({
    path: ["experiments", "show"],
    service: showExperiment,
    positionals: [{ name: "EXPERIMENT_ID", description: "The experiment (exp_…)." }],
    input: (_args, [id]) => ({ experiment_id: id }),
    human: (r) =>
      `${experimentLine(r.experiment)}\n` +
      keyValues([
        ["trials", `${r.counts.ok} ok, ${r.counts.failed} failed, ${r.counts.pending} pending of ${r.counts.total}`],
        ["operation", r.operation ? `${r.operation.operation_id} ${r.operation.state} (${r.operation.progress.completed ?? 0}/${r.operation.progress.total ?? r.counts.total})` : "(not run yet)"],
        ["commit", r.experiment.commit_id ?? "(none yet)"],
      ]) +
      `\n${analysisLines(r.experiment)}\n` +
      table(
        r.trials.map((t) => ({ trial: t.index, block: t.warmup ? `warm-up ${t.block}` : t.block, variant: t.variant, outcome: t.outcome, value: t.value ?? t.failure?.code ?? "", run: t.run_id ?? "" })),
        ["trial", "block", "variant", "outcome", "value", "run"],
      ),
  }),
  serviceCommand({
    path: ["experiments", "list"],
    service: listExperiments,
    options: {
      investigation: { type: "string", valueName: "INVESTIGATION_ID", field: "investigation_id", description: "Only this investigation's experiments." },
      limit: { type: "string", valueName: "N", description: "Rows per page." },
      cursor: { type: "string", valueName: "CURSOR", description: "Continue from next_cursor." },
    },
    input: (args) => ({ investigation_id: stringFlag(args.values, "investigation"), limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor") }),
    human: (page) => (page.items.length ? page.items.map(experimentLine).join("\n") + pageFooter(page, "emberscope experiments list") : "No experiments yet. Plan one: emberscope experiments plan --investigation ID --variant a=WORKLOAD --variant b=WORKLOAD,PARAM=VALUE"),
  }),
];
