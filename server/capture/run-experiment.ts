import { analyzeExperiment, MIN_RESAMPLES } from "../../analysis/experiments/analyze";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import { headCommit } from "../store/corpus";
import { finishTrial, getExperiment, listTrials, patchExperiment, startTrial } from "../store/experiments";
import { finishOperation, heartbeatOperation, operationIntent, reportProgress, requestCancel, type WorkerIdentity } from "../store/operations";
import type { Workspace } from "../store/workspace";
import { createCaptureRecords } from "../services/captures";
import type { CaptureIntent } from "./plan";
import { runCaptureOperation } from "./run-capture";
import { trialMetric } from "./trial-metric";

/** What an experiment operation stores: its experiment and each variant's reviewed capture intent. */
export interface ExperimentJob {
  experiment_id: string;
  variants: Record<string, { intent: CaptureIntent; digest: string }>;
}

/**
 * Runs an experiment's pending trials in planned order, holding the operation's lease: each trial
 * is a capture into its own run (leased by the same worker, so both end together if it dies), and
 * its primary metric is read from the evidence it published. A failed trial is kept with its
 * reason. Once no trial is pending, the analysis is stored with the experiment. Finished trials
 * are never run again, so a resumed experiment only runs what is missing. Never throws.
 */
export async function runExperimentOperation(ws: Workspace, operationId: string, worker: WorkerIdentity): Promise<{ status: "succeeded" | "failed" | "cancelled" }> {
  const job = operationIntent<ExperimentJob>(ws.db, operationId);
  const abort = new AbortController();
  let capture: string | null = null;
  const watch = setInterval(() => {
    try {
      const lease = heartbeatOperation(ws.db, operationId, worker);
      if (lease.cancelRequested || !lease.held) abort.abort();
      if (abort.signal.aborted && capture) requestCancel(ws.db, capture);
    } catch {
      // a busy store delays one heartbeat; the lease outlives several
    }
  }, 200);
  try {
    const experiment = getExperiment(ws.db, job.experiment_id);
    const design = experiment.design;
    const trials = listTrials(ws.db, experiment.experiment_id);
    let done = trials.filter((t) => t.outcome !== "pending").length;
    reportProgress(ws.db, operationId, "trials", done, trials.length);
    for (const trial of trials.filter((t) => t.outcome === "pending")) {
      if (abort.signal.aborted) break;
      const variant = job.variants[trial.variant];
      const records = createCaptureRecords(ws, variant.intent, variant.digest, { inline: worker });
      startTrial(ws.db, experiment.experiment_id, trial.index, records.runId);
      capture = records.operation.operation_id;
      const outcome = await runCaptureOperation(ws, capture, worker);
      capture = null;
      if (outcome.status === "cancelled" || abort.signal.aborted) break;
      if (outcome.status === "succeeded") {
        const value = await trialMetric(ws, outcome.run_id, outcome.commit_id!, design.metric).then(
          (v) => ({ value: v }),
          (error: unknown) => ({ failure: { code: toEmberscopeError(error).code, message: toEmberscopeError(error).message } }),
        );
        finishTrial(ws.db, experiment.experiment_id, trial.index, value);
      } else {
        finishTrial(ws.db, experiment.experiment_id, trial.index, { failure: { code: outcome.error?.code ?? "PROCESS_FAILED", message: outcome.error?.message ?? "The trial's capture failed." } });
      }
      reportProgress(ws.db, operationId, "trials", ++done, trials.length);
    }
    if (abort.signal.aborted) {
      // A lost lease was reconciled by another process (INTERRUPTED); only a cancel is ours to record.
      const cancelled = new EmberscopeError("CANCELLED", "The experiment was cancelled; its finished trials are kept.", {
        details: { experiment_id: experiment.experiment_id },
        recovery: { operation: "experiments.resume", arguments: { experiment_id: experiment.experiment_id }, safe_to_repeat: true },
      });
      if (finishOperation(ws.db, operationId, { state: "cancelled", error: cancelled.toDocument() }).state === "cancelled") patchExperiment(ws.db, experiment.experiment_id, { state: "cancelled" });
      return { status: "cancelled" };
    }
    reportProgress(ws.db, operationId, "analyzing", done, trials.length);
    const analysis = analyzeExperiment({
      trials: listTrials(ws.db, experiment.experiment_id).map((t) => ({ index: t.index, block: t.block, variant: t.variant, warmup: t.warmup, value: t.value, failure: t.failure?.message ?? null })),
      baseline: design.baseline,
      polarity: design.polarity,
      threshold: design.threshold,
      confidence: design.confidence,
      resamples: MIN_RESAMPLES,
      seed: design.seed,
    });
    patchExperiment(ws.db, experiment.experiment_id, { state: "completed", analysis, commit_id: headCommit(ws.db).commit_id });
    finishOperation(ws.db, operationId, {
      state: "succeeded",
      result: { experiment_id: experiment.experiment_id, decisions: analysis.comparisons.map((c) => ({ variant: c.variant, baseline: c.baseline, decision: c.decision, ratio: c.ratio })), failed_trials: analysis.failed_trials },
    });
    return { status: "succeeded" };
  } catch (thrown) {
    const error = toEmberscopeError(thrown).toDocument();
    finishOperation(ws.db, operationId, { state: "failed", error });
    try {
      patchExperiment(ws.db, job.experiment_id, { state: "failed" });
    } catch {
      // the operation's outcome above is what matters; the experiment reads its state from it
    }
    return { status: "failed" };
  } finally {
    clearInterval(watch);
  }
}
