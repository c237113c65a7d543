import { workflowCriticalPathReport } from "../../analysis/critical-path/report";
import type { Json, Workflow } from "../../analysis/workflow/compile";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import type { ToolContract } from "../domain/workflow";
import { writeTransaction } from "../store/control-store";
import type { ObjectId } from "../store/object-store";
import { finishOperation, heartbeatOperation, operationIntent, reportProgress, type WorkerIdentity } from "../store/operations";
import { approvedTools, patchWorkflowRun } from "../store/workflow-runs";
import { getContractRow, getWorkflowRow } from "../store/workflows";
import type { Workspace } from "../store/workspace";
import { integrityGuard, verifyWorkflow } from "./integrity";
import { loadToolRegistry } from "./registry";
import { publishReplayRun } from "./replay-run";
import { runWorkflowNodes, type NodeReport, type ReplayMode, type RuntimeResult } from "./runtime";

/** What a workflow run's operation stores as its intent (`workflows.run` plans it). */
export interface WorkflowRunJob {
  workflow_run_id: string;
  workflow_id: string;
  digest: string;
  kind: "run" | "benchmark";
  mode: ReplayMode;
  repetitions: number;
  inputs: Record<string, Json>;
  on_failure: "continue" | "cancel";
  concurrency: number;
  /**
   * A call of a workflow a person exposed as an MCP tool (services/workflow-exposures.ts): the
   * exposure's tool name and revision. Exposed workflows are read-only, so no approval counts:
   * a contract that says `write` by now is refused (APPROVAL_REQUIRED) at its call.
   */
  exposed?: { tool: string; revision: number };
}

/** The most nodes a stored summary lists (the counts cover them all). */
export const SUMMARY_NODE_LIMIT = 2000;
/** Outputs larger than this (as JSON) are left out of the summary and counted. */
const SUMMARY_OUTPUT_CHARS = 64 * 1024;

export interface BenchmarkFigures {
  repetitions: number;
  wall_ms: { median: number; min: number; max: number; mad: number; each: number[] };
  sequential_ms: number;
  critical_path_ms: number;
  speedup_bound: number;
  achieved_speedup: number;
  /** critical path / median wall: 1 means the schedule met the bound. */
  efficiency: number;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function benchmarkFigures(doc: Workflow, walls: number[]): BenchmarkFigures {
  const report = workflowCriticalPathReport(doc);
  const med = median(walls);
  return {
    repetitions: walls.length,
    wall_ms: { median: med, min: Math.min(...walls), max: Math.max(...walls), mad: median(walls.map((w) => Math.abs(w - med))), each: walls },
    sequential_ms: report.sequential_ns / 1e6,
    critical_path_ms: report.critical_path_ns / 1e6,
    speedup_bound: report.speedup_bound,
    achieved_speedup: med > 0 ? report.sequential_ns / 1e6 / med : 0,
    efficiency: med > 0 ? report.critical_path_ns / 1e6 / med : 0,
  };
}

function boundedOutputs(outputs: Record<string, Json>): { outputs: Record<string, Json>; outputs_omitted: number } {
  const kept: Record<string, Json> = {};
  let omitted = 0;
  let used = 0;
  for (const [node, value] of Object.entries(outputs)) {
    const size = JSON.stringify(value)?.length ?? 4;
    if (used + size > SUMMARY_OUTPUT_CHARS) {
      omitted++;
      continue;
    }
    used += size;
    kept[node] = value;
  }
  return { outputs: kept, outputs_omitted: omitted };
}

function runSummary(result: RuntimeResult) {
  return {
    state: result.state,
    wall_ms: result.wall_ms,
    counts: result.counts,
    reproduced: result.reproduced,
    nodes: result.nodes.slice(0, SUMMARY_NODE_LIMIT),
    nodes_total: result.nodes.length,
    ...boundedOutputs(result.outputs),
  };
}

function failedNodes(nodes: readonly NodeReport[]) {
  return nodes.filter((n) => n.state === "failed").slice(0, 50).map((n) => ({ node: n.node, tool: n.tool, code: n.error?.code ?? null }));
}

/**
 * Runs a workflow run's operation under its lease (a pool worker's): verifies the workflow, runs
 * it (once, or `repetitions` times for a benchmark), publishes the replay's spans as a new run,
 * and records the summary. Cancel is looked for every 100 ms and aborts every running call.
 * Never throws: the outcome is the operation's.
 */
export async function runWorkflowOperation(ws: Workspace, operationId: string, worker: WorkerIdentity): Promise<{ status: "succeeded" | "failed" | "cancelled"; abandoned: number }> {
  const job = operationIntent<WorkflowRunJob>(ws.db, operationId);
  const abort = new AbortController();
  // Handler calls aborted but never returned (code ignoring its signal): the worker retires after this operation.
  let abandoned = 0;
  let progress = { completed: 0, total: 0, written: true };
  const watch = setInterval(() => {
    try {
      const lease = heartbeatOperation(ws.db, operationId, worker);
      if (lease.cancelRequested || !lease.held) abort.abort(new EmberscopeError("CANCELLED", "The workflow run was cancelled.", { details: { operation_id: operationId } }));
      if (!progress.written) {
        reportProgress(ws.db, operationId, "nodes", progress.completed, progress.total);
        progress.written = true;
      }
    } catch {
      // a busy store delays one heartbeat; the lease outlives several
    }
  }, 100);
  const end = (state: "succeeded" | "failed" | "cancelled", summary: unknown, error?: EmberscopeError, replayRunId?: string) => {
    writeTransaction(ws.db, () => {
      patchWorkflowRun(ws.db, job.workflow_run_id, { state, summary, replay_run_id: replayRunId });
      finishOperation(ws.db, operationId, { state, result: { workflow_run_id: job.workflow_run_id, ...(replayRunId ? { replay_run_id: replayRunId } : {}) }, error: error?.toDocument() });
    });
    return { status: state, abandoned };
  };
  try {
    patchWorkflowRun(ws.db, job.workflow_run_id, { state: "running" });
    reportProgress(ws.db, operationId, "verifying");
    const record = getWorkflowRow(ws.db, job.workflow_id);
    const doc = JSON.parse((await ws.objects.read(record.digest as ObjectId, record.size_bytes)).toString("utf8")) as Workflow;
    // The run replays the content that was planned: a workflow whose address changed is refused too.
    const deps = await verifyWorkflow(doc, job.digest, job.workflow_id);
    const integrity = await integrityGuard(ws, job.workflow_id, job.digest);
    const registry = job.mode === "live" ? await loadToolRegistry(ws.layout.projectRoot) : null;
    // Read per call (one indexed row): a review withdrawn or changed mid-run applies to the next call.
    const contract = (tool: string): ToolContract | null => getContractRow(ws.db, tool);
    const approved = job.exposed ? new Set<string>() : approvedTools(ws.db, job.workflow_id, job.digest);
    const total = doc.nodes.length * job.repetitions;
    reportProgress(ws.db, operationId, "nodes", 0, total);
    const results: { result: RuntimeResult; startedAtMs: number }[] = [];
    for (let rep = 0; rep < job.repetitions && !abort.signal.aborted; rep++) {
      const startedAtMs = Date.now();
      const result = await runWorkflowNodes({
        workflowId: job.workflow_id,
        doc,
        deps,
        mode: job.mode,
        inputs: job.inputs,
        registry,
        contract,
        integrity,
        approved,
        concurrency: job.concurrency,
        onFailure: job.on_failure,
        signal: abort.signal,
        onNodeSettled: (settled) => (progress = { completed: rep * doc.nodes.length + settled, total, written: false }),
      });
      abandoned += result.abandoned;
      results.push({ result, startedAtMs });
      if (result.state !== "succeeded") break;
    }
    const last = results[results.length - 1];
    if (abort.signal.aborted || last.result.state === "cancelled") {
      return end("cancelled", runSummary(last.result), new EmberscopeError("CANCELLED", "The workflow run was cancelled: its running calls were aborted and the rest skipped.", { details: { counts: last.result.counts } }));
    }
    if (last.result.state === "failed") {
      const counts = last.result.counts;
      const error = new EmberscopeError("WORKFLOW_RUN_FAILED", `${counts.failed} of the workflow's ${doc.nodes.length} calls failed; ${counts.skipped} depending on them were not started and ${counts.succeeded} succeeded.`, {
        details: { workflow_run_id: job.workflow_run_id, counts, failed: failedNodes(last.result.nodes), skipped: last.result.nodes.filter((n) => n.state === "skipped").slice(0, 50).map((n) => ({ node: n.node, blocked_by: n.blocked_by })) },
      });
      const replay = await publishReplayRun(ws, { workflowId: job.workflow_id, workflowRunId: job.workflow_run_id, mode: job.mode, doc, deps, startedAtMs: last.startedAtMs, result: last.result, label: `${job.mode} replay of ${job.workflow_id} (failed)` }).catch(() => null);
      return end("failed", runSummary(last.result), error, replay?.run_id);
    }
    reportProgress(ws.db, operationId, "publishing", total, total);
    // A benchmark's spans are the repetition at the median wall time.
    const walls = results.map((r) => r.result.wall_ms);
    const shown = job.kind === "benchmark" ? results.reduce((best, r) => (Math.abs(r.result.wall_ms - median(walls)) < Math.abs(best.result.wall_ms - median(walls)) ? r : best)) : last;
    const replay = await publishReplayRun(ws, {
      workflowId: job.workflow_id,
      workflowRunId: job.workflow_run_id,
      mode: job.mode,
      doc,
      deps,
      startedAtMs: shown.startedAtMs,
      result: shown.result,
      label: `${job.mode} ${job.kind === "benchmark" ? "benchmark" : "replay"} of ${job.workflow_id}`,
    });
    const summary = job.kind === "benchmark" ? { ...runSummary(shown.result), benchmark: benchmarkFigures(doc, walls) } : runSummary(last.result);
    return end("succeeded", summary, undefined, replay.run_id);
  } catch (error) {
    const failure = toEmberscopeError(error);
    if (abort.signal.aborted) return end("cancelled", { state: "cancelled", nothing_ran: false }, new EmberscopeError("CANCELLED", "The workflow run was cancelled."));
    return end("failed", { state: "failed", refused: failure.code, nothing_ran: true }, failure);
  } finally {
    clearInterval(watch);
  }
}
