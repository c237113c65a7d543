import { randomBytes } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import path from "node:path";
import { importerFor } from "../../analysis/formats/index";
import { EmberscopeError, toEmberscopeError, type ErrorDocument, type Recovery } from "../domain/errors";
import type { Limitation } from "../domain/models";
import { extractAndPublish, extractionFailure, extractStoredArtifact, limitationsOf } from "../evidence/extract";
import { DEFAULT_INPUT_BOUNDS } from "../evidence/input";
import { registerArtifact } from "../store/artifacts";
import { finishOperation, getOperation, heartbeatOperation, LEASE_MS, operationIntent, reportProgress, type WorkerIdentity } from "../store/operations";
import { getRun, updateRun, type RunPatch } from "../store/runs";
import { operationStagingDir, stagingWorkspace } from "../store/staging";
import type { Workspace } from "../store/workspace";
import { adapterNamed } from "./adapters";
import type { CollectedArtifact } from "./adapters/types";
import type { CaptureIntent } from "./plan";
import { runProcess, type ProcessResult } from "./process";
import { stderrTail } from "./stderr-tail";

/**
 * What a capture operation stores: the reviewed intent and the child's environment as resolved
 * when it was executed (the intent shows inherited names only; the values stay in the control store).
 */
export interface CaptureJob {
  capture: CaptureIntent;
  env: Record<string, string>;
}

export interface CaptureOutcome {
  run_id: string;
  operation_id: string;
  commit_id: string | null;
  status: "succeeded" | "failed" | "cancelled";
  limitations: Limitation[];
  error?: ErrorDocument;
}

function patchRun(ws: Workspace, runId: string, patch: RunPatch | ((details: Record<string, unknown>) => RunPatch)): void {
  const current = getRun(ws.db, runId);
  updateRun(ws.db, runId, current.revision, typeof patch === "function" ? patch(current.details) : patch);
}

/** Keeps the child's stdout/stderr as bounded artifacts of sensitivity `internal`. */
async function keepOutput(ws: Workspace, runId: string, name: "stdout" | "stderr", bytes: Buffer): Promise<void> {
  if (bytes.length === 0) return;
  const stored = await ws.objects.put(bytes);
  registerArtifact(ws.db, stored, { runId, kind: name, producer: "capture", mediaType: "text/plain", fileName: `${name}.txt`, sensitivity: "internal" });
}

/** Capturing again: planning the same request anew (a plan is single-use). */
function planAgain(intent: CaptureIntent): Recovery {
  return {
    operation: "captures.plan",
    arguments: { workload: intent.workload.name, adapter: intent.adapter.name, parameters: intent.workload.parameters, options: intent.adapter.options },
    safe_to_repeat: true,
  };
}

function processFailure(result: ProcessResult, intent: CaptureIntent): EmberscopeError | null {
  const timeoutS = intent.timeout_s;
  const recovery = planAgain(intent);
  if (result.cancelled) return new EmberscopeError("CANCELLED", "The capture was cancelled; its process tree was killed.", { recovery });
  if (result.timedOut) {
    return new EmberscopeError("PROCESS_TIMEOUT", `The workload ran longer than its ${timeoutS} s timeout and was killed. Raise \`timeout\` in emberscope.toml or make the run shorter, then capture again.`, {
      details: { timeout_s: timeoutS },
      recovery,
    });
  }
  if (result.spawnError) return new EmberscopeError("PROCESS_FAILED", "The workload could not be started.", { details: { reason: result.spawnError }, recovery });
  if (result.exitCode !== 0) {
    return new EmberscopeError("PROCESS_FAILED", `The workload exited with ${result.exitCode === null ? `signal ${result.signal}` : `code ${result.exitCode}`}; the end of its stderr is kept with the run.`, {
      details: { exit_code: result.exitCode, signal: result.signal },
      recovery,
    });
  }
  return null;
}

/**
 * Runs one capture operation to its end, holding its lease: runs the (wrapped) workload, keeps its
 * outputs, extracts what the adapter collected and publishes it. Cancels (recorded in the control
 * store) kill the workload's process group. Never throws: the outcome is recorded and returned.
 */
export async function runCaptureOperation(ws: Workspace, operationId: string, worker: WorkerIdentity): Promise<CaptureOutcome> {
  const { capture: intent, env } = operationIntent<CaptureJob>(ws.db, operationId);
  const runId = getOperation(ws.db, operationId).run_id!;
  const adapter = adapterNamed(intent.adapter.name);
  const outDir = path.join(ws.layout.tmp, `capture-${operationId}-${randomBytes(4).toString("hex")}`);
  const abort = new AbortController();
  const watch = setInterval(() => {
    try {
      if (heartbeatOperation(ws.db, operationId, worker).cancelRequested) abort.abort();
    } catch {
      // a busy store delays one heartbeat; the lease outlives several
    }
  }, 200);
  const limitations: Limitation[] = [];
  const fail = (error: EmberscopeError, state: "failed" | "cancelled" = error.code === "CANCELLED" ? "cancelled" : "failed"): CaptureOutcome => {
    const doc = error.toDocument();
    patchRun(ws, runId, (details) => ({ status: state, limitations, details: { ...details, error: doc } }));
    finishOperation(ws.db, operationId, { state, error: doc });
    return { run_id: runId, operation_id: operationId, commit_id: null, status: state, limitations, error: doc };
  };
  try {
    await fsp.mkdir(outDir, { recursive: true });
    const { runs, warmups } = adapter.repetitions(intent.adapter.options);
    reportProgress(ws.db, operationId, "running", 0, runs);
    patchRun(ws, runId, { status: "running", execution_state: "running", capture_state: "running" });
    const base = { argv: intent.argv, env };
    const results: ProcessResult[] = [];
    for (let index = 0; index < runs; index++) {
      const command = adapter.command(base, outDir, intent.adapter.options, index);
      const result = await runProcess({
        argv: command.argv,
        cwd: path.resolve(ws.layout.projectRoot, intent.cwd),
        env: command.env,
        timeoutMs: intent.timeout_s * 1000,
        outputBytes: intent.output_bytes,
        signal: abort.signal,
        onSpawn: (pid) => patchRun(ws, runId, (details) => ({ details: { ...details, pid } })),
      });
      results.push(result);
      reportProgress(ws.db, operationId, "running", index + 1, runs);
      const problem = processFailure(result, intent);
      if (index === runs - 1 || problem) {
        await keepOutput(ws, runId, "stdout", result.stdout);
        await keepOutput(ws, runId, "stderr", result.stderr);
        for (const [stream, dropped] of [["stdout", result.stdoutDropped], ["stderr", result.stderrDropped]] as const) {
          if (dropped > 0) limitations.push({ code: "OUTPUT_TRUNCATED", message: `${stream} was longer than ${intent.output_bytes} bytes; ${dropped} bytes were not kept.` });
        }
      }
      patchRun(ws, runId, (details) => ({
        details: { ...details, exit_code: result.exitCode, signal: result.signal, started_at: new Date(results[0].startedAt).toISOString(), ended_at: new Date(result.endedAt).toISOString(), wall_ms: result.endedAt - result.startedAt, runs: index + 1, warmups },
      }));
      if (problem) {
        // What the page shows of why: the end of stderr, redacted (the whole of it is the stderr artifact).
        const tail = stderrTail(ws, result.stderr);
        if (tail) patchRun(ws, runId, (details) => ({ details: { ...details, stderr_tail: tail } }));
        patchRun(ws, runId, { execution_state: problem.code === "CANCELLED" ? "cancelled" : "failed", capture_state: "failed", extraction_state: "not_applicable" });
        return fail(problem);
      }
    }
    patchRun(ws, runId, { execution_state: "succeeded" });

    reportProgress(ws.db, operationId, "collecting");
    const collected = await adapter.collect(outDir, results, intent.adapter.options);
    if (collected.length === 0) {
      patchRun(ws, runId, { capture_state: "failed" });
      return fail(new EmberscopeError("PROCESS_FAILED", `The ${adapter.name} adapter found no output to collect.`, { details: { adapter: adapter.name } }));
    }
    patchRun(ws, runId, { capture_state: "succeeded", extraction_state: "running" });

    let commitId: string | null = null;
    for (let i = 0; i < collected.length; i++) {
      if (abort.signal.aborted) return fail(new EmberscopeError("CANCELLED", "The capture was cancelled during extraction."));
      reportProgress(ws.db, operationId, "extracting", i, collected.length);
      // Extraction stages in tmp/<operation id>/, which gc leaves alone while the lease is live.
      const published = await extractCollected(stagingWorkspace(ws, operationId), runId, collected[i]);
      commitId = published.commit_id;
      limitations.push(...published.limitations);
    }
    reportProgress(ws.db, operationId, "publishing", collected.length, collected.length);
    patchRun(ws, runId, (details) => ({ status: "succeeded", extraction_state: "succeeded", limitations, details: { ...details, commit_id: commitId } }));
    finishOperation(ws.db, operationId, { state: "succeeded", result: { run_id: runId, commit_id: commitId, artifacts: collected.length } });
    return { run_id: runId, operation_id: operationId, commit_id: commitId, status: "succeeded", limitations };
  } catch (thrown) {
    const error = toEmberscopeError(thrown);
    try {
      patchRun(ws, runId, { extraction_state: "failed" });
    } catch {
      // the run record is best effort here; the operation outcome below is what matters
    }
    return fail(error);
  } finally {
    clearInterval(watch);
    await fsp.rm(outDir, { recursive: true, force: true });
    await fsp.rm(operationStagingDir(ws, operationId), { recursive: true, force: true });
  }
}

async function extractCollected(ws: Workspace, runId: string, artifact: CollectedArtifact): Promise<{ commit_id: string; limitations: Limitation[] }> {
  const stored = await ws.objects.put(createReadStream(artifact.file, { highWaterMark: 1 << 20 }));
  const fileName = path.basename(artifact.file);
  registerArtifact(ws.db, stored, { runId, kind: artifact.kind, producer: "capture", mediaType: artifact.mediaType, format: artifact.format ?? artifact.extractor?.id ?? null, fileName, sensitivity: "normal" });
  try {
    if (artifact.extractor) {
      const extraction = await extractAndPublish(ws, { artifactId: stored.id, runId, extractor: artifact.extractor.id, extractorVersion: artifact.extractor.version, produce: artifact.extractor.produce, message: `capture ${artifact.extractor.id}` });
      return { commit_id: extraction.commit_id, limitations: limitationsOf(extraction.summary) };
    }
    const importer = importerFor(artifact.format!);
    return await extractStoredArtifact(ws, { artifactId: stored.id, runId, importer, fileName, bounds: DEFAULT_INPUT_BOUNDS });
  } catch (error) {
    throw extractionFailure(error, artifact.format ?? "capture", runId, stored.id);
  }
}

export { LEASE_MS };
