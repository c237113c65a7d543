import { measurementTotalsQuery } from "../../analysis/queries";
import { EmberscopeError } from "../domain/errors";
import type { Workspace } from "../store/workspace";
import { runEvidence } from "../services/evidence";

/**
 * The primary metric of one experiment trial, read from its run's evidence at the commit its
 * capture published: a measurement (the mean of its measured values: one per trial when the
 * adapter ran once), `cpu_ns` (user + sys time, as measure records them), or a metric's total
 * (callgrind's `Ir` answers to `instructions`).
 */
const DERIVED: Record<string, readonly string[]> = { cpu_ns: ["user_ns", "sys_ns"] };
const METRIC_ALIASES: Record<string, string> = { instructions: "Ir" };

export async function trialMetric(ws: Workspace, runId: string, commitId: string, metric: string): Promise<number> {
  const evidence = await runEvidence(ws, runId, commitId);
  const measured = evidence.generations.length ? await evidence.reader.run(measurementTotalsQuery, { generations: evidence.generations }) : [];
  const mean = (name: string) => measured.find((m) => m.name === name && m.count > 0)?.mean;
  const direct = mean(metric);
  if (direct !== undefined) return direct;
  const parts = DERIVED[metric]?.map(mean);
  if (parts && parts.every((p) => p !== undefined)) return parts.reduce((a, b) => a! + b!, 0)!;
  const total = evidence.metrics.find((m) => m.name === metric || m.name === METRIC_ALIASES[metric]);
  if (total) return total.total;
  throw new EmberscopeError("INVALID_ARGUMENTS", `The trial's run has no metric ${metric}.`, {
    details: { argument: "metric", run_id: runId, available: [...measured.map((m) => m.name), ...Object.keys(DERIVED), ...evidence.metrics.map((m) => m.name)] },
  });
}
