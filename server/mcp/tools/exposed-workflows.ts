import { EXPOSED_TOOL_NAME } from "../../services/workflow-exposures";
import { listExposureRows, type ExposureRow } from "../../store/workflow-exposures";
import type { Workspace } from "../../store/workspace";
import type { ToolAnnotations } from "../tools";

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

/** The tools/list entry of one exposure; `agentView` is the schema every result's agent_view has. */
function entryOf(row: ExposureRow, agentView: Record<string, unknown>) {
  const output = row.listing.output_schema as { properties: Record<string, unknown>; required: string[] };
  const title = `Workflow ${row.workflow_id}`;
  return {
    name: row.tool_name,
    title,
    description: row.listing.description,
    inputSchema: row.listing.input_schema as { type: "object"; properties?: Record<string, unknown> },
    outputSchema: { ...output, type: "object" as const, properties: { ...output.properties, agent_view: agentView }, required: [...output.required, "agent_view"] },
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
export function summarizeExposedCall(result: { workflow_id: string; outputs: Record<string, unknown>; wall_ms: number; calls: number }): string {
  return `Workflow ${result.workflow_id} replayed live: ${result.calls} call(s) in ${result.wall_ms.toFixed(1)} ms; outputs of ${Object.keys(result.outputs).join(", ") || "no call"}.`;
}
