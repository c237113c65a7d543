import { EXPOSED_TOOL_NAME } from "../../services/workflow-exposures";
import { listExposureRows, type ExposureRow } from "../../store/workflow-exposures";
import type { Workspace } from "../../store/workspace";
import type { AuditedCall, ToolAnnotations } from "../tools";

/**
 * Workflows a person exposed as tools (services/workflow-exposures.ts), as MCP lists them: not
 * built-ins — they are read from the workspace at each tools/list, never counted in the built-in
 * budget (≤ 28), and named `workflow_…`, a prefix no built-in uses. Their calls go to the
 * `workflows.call_exposed` service through the same guarded path as every tool (access switch,
 * audit, typed errors, agent view).
 */

/** Whether a tool name is an exposed workflow's (the only names besides the built-ins a call may use). */
export function isExposedToolName(name: string): boolean {
  return EXPOSED_TOOL_NAME.test(name);
}

const EXPOSED: Omit<ToolAnnotations, "openWorldHint"> = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

const CITED_RUNS = {
  workflow_run_id: { type: "string", description: "The workflow run this call was (workflows run-show; get_workflow_run)." },
  replay_run_id: { type: ["string", "null"], description: "The run holding this call's replay as spans (per-node start and end): emberscope://runs/{id}." },
};

/** The tools/list entry of one exposure; `agentView` is the schema every result's agent_view has. */
function entryOf(row: ExposureRow, agentView: Record<string, unknown>) {
  const output = row.listing.output_schema as { properties: Record<string, unknown>; required: string[] };
  const title = `Workflow ${row.workflow_id}`;
  return {
    name: row.tool_name,
    title,
    description: row.listing.description,
    inputSchema: row.listing.input_schema as { type: "object"; properties?: Record<string, unknown> },
    // The runs a call cites are added here, so exposures stored before calls published runs list them too.
    outputSchema: { ...output, type: "object" as const, properties: { ...output.properties, ...CITED_RUNS, agent_view: agentView }, required: [...output.required, "agent_view"] },
    annotations: { title, ...EXPOSED, openWorldHint: row.listing.open_world },
    _meta: { "emberscope/workflow": row.workflow_id, "emberscope/exposure_revision": row.revision },
  };
}

/** The exposed workflows' tools/list entries (none without a workspace). */
export function exposedToolEntries(ws: Workspace | null, agentView: Record<string, unknown>) {
  if (!ws) return [];
  return listExposureRows(ws.db, { exposedOnly: true, limit: 100 }).map((row) => entryOf(row, agentView));
}

/** The one-line summary of an exposed workflow's answer. */
export function summarizeExposedCall(result: { workflow_id: string; outputs: Record<string, unknown>; wall_ms: number; calls: number; workflow_run_id: string; replay_run_id: string | null }): string {
  const replay = result.replay_run_id ? `; its replay is run ${result.replay_run_id}` : "";
  return `Workflow ${result.workflow_id} replayed live on the worker pool as ${result.workflow_run_id}: ${result.calls} call(s) in ${result.wall_ms.toFixed(1)} ms; outputs of ${Object.keys(result.outputs).join(", ") || "no call"}${replay}.`;
}

/** The replay run an answer cites, as a resource link. */
export function exposedCallLinks(value: Record<string, unknown>): { uri: string; name: string }[] {
  return typeof value.replay_run_id === "string" ? [{ uri: `emberscope://runs/${value.replay_run_id}`, name: `replay ${value.replay_run_id}` }] : [];
}

/** The runs an exposed call's audit row cites (its answer's, or its typed error's). */
export function exposedCallRuns(call: AuditedCall): Record<string, unknown> {
  const from = (call.result ?? call.error?.details ?? {}) as { workflow_run_id?: unknown; replay_run_id?: unknown };
  const cited: Record<string, unknown> = {};
  if (typeof from.workflow_run_id === "string") cited.workflow_run_id = from.workflow_run_id;
  if (typeof from.replay_run_id === "string") cited.replay_run_id = from.replay_run_id;
  return cited;
}
