import type { z } from "zod";
import { summarizeExperiment } from "../../services/experiments";
import type { ServiceDef } from "../../services/service";
import type { McpTool } from "../tools";
import { experimentLinks, experimentTarget } from "./experiment-links";

type Summary = z.output<typeof summarizeExperiment.output>;

function pct(ratio: number): string {
  return `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} %`;
}

export const getExperimentTool: McpTool = {
  name: "get_experiment",
  title: "Get an experiment's result",
  description:
    "An experiment's state and, once every trial ran, its result: per comparison with the baseline the decision (meaningful_improvement, meaningful_regression, no_meaningful_difference: CI inside ± threshold, inconclusive: otherwise), the ratio (median of paired per-block ratios) with its bootstrap CI and the blocks needed to narrow the CI to the threshold; per variant its median, MAD, min, max, drift over the run and outliers; warnings (outliers, too few trials, failed trials); trial counts; the trials themselves a page at a time (pass next_cursor back as cursor). A finding may cite the experiment ({kind: experiment, experiment_id, commit_id} with its commit_id). Next: record_finding citing it, or run_experiment (a new plan) with more trials when it is inconclusive.",
  service: summarizeExperiment as unknown as ServiceDef,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  summarize: (r: Summary) => {
    const progress = r.progress ? `, ${r.progress.completed}/${r.progress.total} trials` : "";
    const head = `Experiment ${r.experiment.experiment_id} is ${r.experiment.state}${progress} (${r.counts.ok} ok, ${r.counts.failed} failed, ${r.counts.pending} pending).`;
    if (!r.result) return head;
    const decisions = r.result.comparisons.map((c) => `${c.variant} vs ${c.baseline}: ${c.decision}${c.ratio !== null ? ` ${pct(c.ratio)}` : ""}${c.ci ? ` (CI ${pct(c.ci[0])} to ${pct(c.ci[1])})` : ""}`);
    return `${head} ${decisions.join("; ")}.${r.result.warnings.length ? ` Warnings: ${r.result.warnings.map((w) => w.code).join(", ")}.` : ""}`;
  },
  links: (r: Summary) => experimentLinks(r.experiment, r.experiment.operation_id),
  target: experimentTarget,
};
