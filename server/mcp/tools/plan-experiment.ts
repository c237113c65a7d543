import type { z } from "zod";
import { planExperiment } from "../../services/experiments";
import type { ServiceDef } from "../../services/service";
import type { McpTool } from "../tools";
import { experimentLinks, experimentTarget } from "./experiment-links";

type Planned = z.output<typeof planExperiment.output>;

export const planExperimentTool: McpTool = {
  name: "plan_experiment",
  title: "Plan an experiment",
  description:
    "Plan an experiment in an investigation to answer \"is B faster than A, and by how much\": ≥ 2 variants (each a declared workload with parameter values, or another workload), one adapter (measure: wall_ns, cpu_ns, max_rss_bytes…; callgrind: instructions, repeatable on a busy machine), the primary metric, polarity, the practical threshold (0.02 = 2 %), trials per variant, warm-ups and a seed. Returns every trial's command line in run order (randomized complete blocks: each block runs every variant once in a seeded order; warm-up blocks first, discarded), a public plan_id and a secret single-use plan_token valid for 10 minutes. Nothing runs yet. Next: show the person the plan, then run_experiment with the plan_token.",
  service: planExperiment as unknown as ServiceDef,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  summarize: (r: Planned) => {
    const warmups = r.plan.trials.filter((t) => t.warmup).length;
    const d = r.experiment.design;
    return `Planned experiment ${r.experiment.experiment_id} (${r.plan_id}): ${r.plan.trials.length} trial(s)${warmups ? `, ${warmups} of them warm-up` : ""}, ${d.variants.map((v) => v.name).join(" vs ")} under ${d.adapter} on ${d.metric} (threshold ${(d.threshold * 100).toFixed(1)} %, seed ${d.seed}). Run it with run_experiment and its plan_token before ${r.expires_at}.`;
  },
  links: (r: Planned) => experimentLinks(r.experiment, null),
  target: experimentTarget,
};
