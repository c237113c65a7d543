import type { z } from "zod";
import { planOrRunExperiment } from "../../services/experiments";
import type { ServiceDef } from "../../services/service";
import type { McpTool } from "../tools";
import { experimentLinks, experimentTarget } from "./experiment-links";

type Answer = z.output<typeof planOrRunExperiment.output>;

export const runExperimentTool: McpTool = {
  name: "run_experiment",
  title: "Run an experiment (plan, then start with its token)",
  description:
    "Answer \"is B faster than A, and by how much\" in an investigation, in two calls. First call (no plan_token): the design — investigation_id, ≥ 2 variants (each a declared workload with parameter values, or another workload), one adapter (measure: wall_ns, cpu_ns, max_rss_bytes…; callgrind: instructions, repeatable on a busy machine), the primary metric, polarity, the practical threshold (0.02 = 2 %), trials per variant, warm-ups and a seed; it returns `planned`: every trial's command line in run order (randomized complete blocks: each block runs every variant once in a seeded order; warm-up blocks first, discarded), a public plan_id and a secret single-use plan_token valid 10 minutes. Nothing runs: show the person the plan. Second call (plan_token, idempotency_key, optionally expected_plan_id; no design): the token is consumed before any trial starts and `started` returns at once with an operation_id — the worker pool runs every trial as a capture of its own, in the planned order, as one durable operation. The same idempotency_key with the same token reconnects; with another plan it fails (IDEMPOTENCY_CONFLICT). Next: poll get_operation (progress is completed/total trials) until it ends, then get_experiment for the decision; cancel_operation stops it.",
  service: planOrRunExperiment as unknown as ServiceDef,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  summarize: ({ planned, started }: Answer) => {
    if (started) return `Experiment ${started.experiment_id}: operation ${started.operation_id} ${started.status}${started.reconnected ? " (reconnected)" : ""}. Poll get_operation, then get_experiment.`;
    const r = planned!;
    const warmups = r.plan.trials.filter((t) => t.warmup).length;
    const d = r.experiment.design;
    return `Planned experiment ${r.experiment.experiment_id} (${r.plan_id}): ${r.plan.trials.length} trial(s)${warmups ? `, ${warmups} of them warm-up` : ""}, ${d.variants.map((v) => v.name).join(" vs ")} under ${d.adapter} on ${d.metric} (threshold ${(d.threshold * 100).toFixed(1)} %, seed ${d.seed}). Start it with run_experiment, its plan_token and an idempotency_key before ${r.expires_at}.`;
  },
  links: ({ planned, started }: Answer) => (started ? experimentLinks(undefined, started.operation_id) : experimentLinks(planned!.experiment, null)),
  target: experimentTarget,
};
