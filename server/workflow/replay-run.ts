import { importerFor } from "../../analysis/formats/index";
import type { Json, Workflow } from "../../analysis/workflow/compile";
import { TRACE_V1_FORMAT } from "../../analysis/workflow/trace-v1";
import { DEFAULT_INPUT_BOUNDS } from "../evidence/input";
import { extractStoredArtifact } from "../evidence/extract";
import { registerArtifact } from "../store/artifacts";
import { writeTransaction } from "../store/control-store";
import { createRun, patchRun } from "../store/runs";
import type { Workspace } from "../store/workspace";
import type { ReplayMode, RuntimeResult } from "./runtime";

/**
 * A replay's calls published as a new run: a trace v1 document (one event per node that started,
 * at its replayed start and end, `after` its dependencies, with the arguments it was called with
 * and its result) stored as the run's artifact and extracted by the trace v1 importer — the one
 * way spans become a generation. So the trace window and the critical-path view show the replay
 * beside the recording it came from.
 */
export async function publishReplayRun(ws: Workspace, job: { workflowId: string; workflowRunId: string; mode: ReplayMode; doc: Workflow; deps: number[][]; startedAtMs: number; result: RuntimeResult; label: string }): Promise<{ run_id: string; commit_id: string }> {
  const { doc, result } = job;
  const ran = new Set(result.nodes.filter((n) => n.start_ms !== null).map((n) => n.node));
  const events = result.nodes.flatMap((n, i) => {
    if (n.start_ms === null) return [];
    const node = doc.nodes[i];
    const call = result.calls[i];
    const event: Record<string, Json> = {
      id: node.id,
      tool: node.tool,
      status: n.state === "succeeded" ? "ok" : n.state === "failed" ? "error" : "unfinished",
      side_effect: node.side_effect,
      start: job.startedAtMs + n.start_ms,
      agent: node.agent,
      after: job.deps[i].map((d) => doc.nodes[d].id).filter((id) => ran.has(id)),
    };
    if (n.state !== "cancelled" && n.end_ms !== null) event.end = job.startedAtMs + n.end_ms;
    if (call.args !== undefined) event.arguments = call.args;
    if (call.result !== undefined) event.result = call.result;
    if (n.error) event.error = `${n.error.code}: ${n.error.message}`.slice(0, 4000);
    return [event];
  });
  const trace = { format: TRACE_V1_FORMAT, version: 1, id: job.workflowRunId, source: `emberscope replay (${job.mode})`, inputs: doc.inputs, events };
  const stored = await ws.objects.put(Buffer.from(JSON.stringify(trace), "utf8"));
  const importer = importerFor("trace-v1");
  const fileName = `${job.workflowRunId}.trace.json`;
  const run = createRun(ws.db, {
    kind: "import",
    source: importer.id,
    title: job.label,
    status: "running",
    extraction_state: "running",
    details: { file_name: fileName, format: importer.id, size_bytes: stored.size, workflow_id: job.workflowId, workflow_run_id: job.workflowRunId, replay_mode: job.mode },
  });
  registerArtifact(ws.db, stored, { runId: run.run_id, kind: "native", producer: "workflow-replay", mediaType: "application/json", format: importer.id, fileName, sensitivity: "normal" });
  try {
    const published = await extractStoredArtifact(ws, {
      runId: run.run_id,
      importer,
      fileName,
      bounds: DEFAULT_INPUT_BOUNDS,
      artifactId: stored.id,
      onPublish: (p) => patchRun(ws.db, run.run_id, (r) => ({ status: "succeeded", extraction_state: "succeeded", limitations: p.limitations, details: { ...r.details, generation_id: p.generation_id, commit_id: p.commit_id } })),
    });
    return { run_id: run.run_id, commit_id: published.commit_id };
  } catch (error) {
    writeTransaction(ws.db, () => patchRun(ws.db, run.run_id, (r) => ({ status: "failed", extraction_state: "failed", details: { ...r.details, error: String(error instanceof Error ? error.message : error).slice(0, 300) } })));
    throw error;
  }
}
