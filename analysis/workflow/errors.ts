/**
 * Failures of the workflow compiler. Plain classes (analysis/ cannot import server/); each carries
 * the catalog code the services map it to. Messages name events by their call id and tool, never
 * by their arguments or results (observed text).
 */

export type WorkflowErrorCode = "CYCLE_DETECTED" | "NO_TOOL_CALLS" | "INVALID_ARGUMENTS";

export class WorkflowCompileError extends Error {
  constructor(
    readonly code: WorkflowErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "WorkflowCompileError";
  }
}
