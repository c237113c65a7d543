import { z } from "zod";

/**
 * The one catalog of typed errors. Every transport maps an EmberscopeError once:
 * the CLI to an exit code per family, tRPC to a typed payload in `data.error`,
 * MCP to `isError: true`. docs/errors.md is generated from this table.
 */
export const ERROR_FAMILIES = {
  usage: { exitCode: 2, summary: "The request itself is malformed: fix the arguments." },
  workspace: { exitCode: 3, summary: "The workspace is missing, already present, or unusable." },
  not_found: { exitCode: 4, summary: "A named record does not exist in this workspace." },
  input: { exitCode: 5, summary: "An artifact could not be accepted (size, format, content)." },
  conflict: { exitCode: 6, summary: "The request raced another change or reused a stale token." },
  process: { exitCode: 7, summary: "A child process or capability failed, timed out or was cancelled." },
  access: { exitCode: 8, summary: "Policy or access control refused the request." },
  resource: { exitCode: 9, summary: "A budget or lock was exhausted; retrying later may succeed." },
  internal: { exitCode: 1, summary: "An unexpected fault inside Emberscope." },
} as const;

export type ErrorFamily = keyof typeof ERROR_FAMILIES;

interface ErrorSpec {
  family: ErrorFamily;
  retryable: boolean;
  description: string;
}

export const ERROR_CATALOG = {
  INVALID_ARGUMENTS: { family: "usage", retryable: false, description: "An argument is missing, unknown or malformed; `details` names it." },
  REQUEST_TOO_LARGE: { family: "usage", retryable: false, description: "An HTTP request body exceeds its route's bound (HTTP 413, refused before it is read); `details.limit` gives the bound. Files go through /api/imports." },
  FINDING_UNSUPPORTED: {
    family: "usage",
    retryable: false,
    description:
      "A finding cannot be assessed `supported` without at least one `supports` reference to pinned evidence, nor while an experiment it cites as `supports` has no meaningful decision in the claimed direction (`details.decisions` names them); add evidence, or assess it otherwise.",
  },
  QUERY_INVALID: {
    family: "usage",
    retryable: false,
    description: "The SQL does not parse or bind (an unknown table, column or function), fails while running (a conversion), or is not read-only (only SELECT and EXPLAIN run); the message is DuckDB's own, its line breaks kept, and `details.reason` says which.",
  },
  CONFIG_INVALID: { family: "usage", retryable: false, description: "emberscope.toml is malformed or has an unknown key; `details.path` names it." },
  WORKLOAD_NOT_FOUND: { family: "not_found", retryable: false, description: "No workload of that name is declared in emberscope.toml." },
  WORKSPACE_NOT_FOUND: { family: "workspace", retryable: false, description: "No `.emberscope/` workspace was found; run `emberscope init`." },
  WORKSPACE_EXISTS: { family: "workspace", retryable: false, description: "`init` found a workspace already present." },
  WORKSPACE_TOO_NEW: { family: "workspace", retryable: false, description: "The workspace was written by a newer Emberscope schema; upgrade Emberscope." },
  WORKSPACE_INVALID: { family: "workspace", retryable: false, description: "The control store is corrupt, foreign or unreadable." },
  RUN_NOT_FOUND: { family: "not_found", retryable: false, description: "No run has that id." },
  ARTIFACT_NOT_FOUND: { family: "not_found", retryable: false, description: "No artifact has that id, or its bytes are missing." },
  COMMIT_NOT_FOUND: { family: "not_found", retryable: false, description: "No corpus commit has that id." },
  OPERATION_NOT_FOUND: { family: "not_found", retryable: false, description: "No operation has that id." },
  ADAPTER_NOT_FOUND: { family: "not_found", retryable: false, description: "No capture adapter has that name; `details.adapters` lists them." },
  PLAN_NOT_FOUND: { family: "not_found", retryable: false, description: "No capture plan matches that id or token." },
  INVESTIGATION_NOT_FOUND: { family: "not_found", retryable: false, description: "No investigation has that id." },
  CELL_NOT_FOUND: { family: "not_found", retryable: false, description: "No notebook cell has that id (in that investigation, where one is named)." },
  WORKFLOW_NOT_FOUND: { family: "not_found", retryable: false, description: "No workflow has that id; `workflows.list` lists them, `workflows.compile` makes one from a run." },
  WORKFLOW_NOT_EXPOSED: {
    family: "not_found",
    retryable: false,
    description: "No workflow is exposed as that MCP tool now (never exposed, or a person withdrew it); exposing a workflow is a person's act (`emberscope workflows expose ID`, or its page).",
  },
  WORKFLOW_RUN_NOT_FOUND: { family: "not_found", retryable: false, description: "No workflow run has that id; `workflows.runs` lists a workflow's runs." },
  TOOL_NOT_REGISTERED: {
    family: "not_found",
    retryable: false,
    description: "No registered tool has that name: tools are registered by code (built-ins, and the modules of the tools folder declared in emberscope.toml), never resolved from a name in a trace; `details.tool` names it.",
  },
  HYPOTHESIS_NOT_FOUND: { family: "not_found", retryable: false, description: "No hypothesis has that id (in that investigation, where one is named)." },
  EXPERIMENT_NOT_FOUND: { family: "not_found", retryable: false, description: "No experiment has that id (in that investigation, where one is named); `experiments.list` lists them." },
  FINDING_NOT_FOUND: { family: "not_found", retryable: false, description: "No finding has that id (in that investigation, where one is named)." },
  RUN_NOT_IN_COMMIT: { family: "not_found", retryable: false, description: "The run exists but its evidence is not visible in the named commit (it was published later); cite or pin a commit that contains it." },
  ARTIFACT_TOO_LARGE: { family: "input", retryable: false, description: "The input exceeds a size, expansion or depth bound." },
  ARTIFACT_PARSE_FAILED: { family: "input", retryable: false, description: "The input is malformed; `details` gives format, offset or line and reason (the kind of problem: never the input's bytes)." },
  ARTIFACT_EMPTY: { family: "input", retryable: false, description: "The input was read but holds no samples, spans or measurements; `details.skipped` lists what the importer passed over." },
  UNSUPPORTED_FORMAT: { family: "input", retryable: false, description: "The format is not recognised (`details.recognised` names what the file looks like, when known); `details.supported` lists the known ones." },
  UNSUPPORTED_FORMAT_VERSION: { family: "input", retryable: false, description: "The file is of a known format but in a version its importer does not read; `details` gives format, version and the versions supported." },
  CYCLE_DETECTED: { family: "input", retryable: false, description: "The dependencies form a cycle (a workflow DAG, or the trace it was compiled from), so they have no order and no critical path; `details.cycle` names its nodes in dependency order, each depending on the one before and the first on the last." },
  NO_SPANS: { family: "input", retryable: false, description: "The run holds no spans, so it has no critical path: it is a profile of samples (see its flame graph)." },
  NO_TOOL_CALLS: { family: "input", retryable: false, description: "The run holds no tool calls to compile into a workflow (it is not an agent trace); its spans still have a critical path (`critical_path.get`)." },
  NOTEBOOK_INVALID: { family: "input", retryable: false, description: "The notebook document is malformed; `details.path` names the first bad field." },
  BUNDLE_INVALID: { family: "input", retryable: false, description: "The file is not an Emberscope export bundle, or a part of it does not match the manifest's sha256 (tampered or damaged); `details.part` names the first bad part." },
  BUNDLE_LEAKS: { family: "input", retryable: false, description: "Re-scanning an export found values of kinds its manifest says were redacted; `details.findings` lists kind and part (never the values)." },
  NOTEBOOK_VERSION_UNSUPPORTED: { family: "input", retryable: false, description: "The notebook document's format or version is unknown (or newer than this Emberscope); `details.supported_versions` lists those it reads." },
  TOOL_MODULE_INVALID: { family: "usage", retryable: false, description: "A module of the tools folder failed to load or exports a malformed tool (or two tools share a name); `details.file` and `details.reason` say which and why." },
  TOOL_INPUT_INVALID: { family: "input", retryable: false, description: "A workflow call's arguments fail its tool's input schema; `details.issues` gives the paths and messages (never the values). The handler did not run." },
  TOOL_OUTPUT_INVALID: { family: "input", retryable: false, description: "A tool's result fails its output schema; `details.issues` gives the paths and messages. The result is not passed on." },
  WORKFLOW_INTEGRITY_FAILED: { family: "input", retryable: false, description: "A stored workflow does not verify: its document's hash differs from its address, or a reference names no node, input or dependency; `details.reason` says which. Nothing ran." },
  REPLAY_DIVERGED: { family: "input", retryable: false, description: "A frozen replay could not reproduce the recording: a reference does not resolve in the recorded results, or a result was cut at import; `details.nodes` names them." },
  WORKFLOW_EXPOSURE_STALE: {
    family: "conflict",
    retryable: false,
    description: "An exposed workflow tool no longer matches what a person exposed: the workflow's content hash, a tool's reviewed contract or its registered code changed since; `details.reason` says which. Refused until a person exposes it again.",
  },
  ARTIFACT_CHANGED: { family: "conflict", retryable: true, description: "The file changed while it was being imported; import it again once it is complete." },
  REVISION_CONFLICT: { family: "conflict", retryable: true, description: "`expected_revision` no longer matches; re-read the record and retry." },
  STALE_CURSOR: { family: "conflict", retryable: false, description: "The cursor belongs to another query, filter, ordering or commit, or was altered." },
  IDEMPOTENCY_CONFLICT: { family: "conflict", retryable: false, description: "The idempotency key was already used for a different intent." },
  PLAN_CONSUMED: { family: "conflict", retryable: false, description: "The plan token was already used; plan again." },
  PLAN_EXPIRED: { family: "conflict", retryable: false, description: "The plan token expired; plan again." },
  PLAN_MISMATCH: { family: "conflict", retryable: false, description: "The token belongs to another plan than `expected_plan_id`." },
  CELL_NAME_TAKEN: { family: "conflict", retryable: false, description: "Another live cell of the investigation has that name; `details.cell_id` names it. Choose another name." },
  CELL_DELETED: { family: "conflict", retryable: false, description: "The cell is deleted; restore it (`cells.restore`) before changing it." },
  INVESTIGATION_EXISTS: { family: "conflict", retryable: false, description: "The imported document's investigation (or one of its cells, hypotheses or findings) is already in this workspace under the same id; `details` names it." },
  EXPERIMENT_NOT_RESUMABLE: { family: "conflict", retryable: false, description: "The experiment cannot run or resume now: it is still running, already completed, or was never started; `details.state` says which." },
  STALE_INTENT: { family: "conflict", retryable: false, description: "An input bound by the plan changed since planning; plan again." },
  TOOL_FAILED: { family: "process", retryable: false, description: "A tool's handler threw or was refused by its own code; `details.reason` is its message, cut to 300 characters." },
  TOOL_TIMEOUT: { family: "process", retryable: true, description: "A tool call exceeded its contract's timeout and was aborted; `details.timeout_ms` gives it." },
  WORKFLOW_RUN_FAILED: {
    family: "process",
    retryable: false,
    description: "Some of a workflow run's calls failed: their dependants were not started, the rest finished (or were cancelled); `details` lists what succeeded, failed and was skipped, each failure with its typed error.",
  },
  CAPABILITY_UNAVAILABLE: { family: "process", retryable: false, description: "The adapter or tool is not available on this machine." },
  PROCESS_FAILED: { family: "process", retryable: false, description: "A child process exited non-zero or by a signal." },
  PROCESS_TIMEOUT: { family: "process", retryable: true, description: "A child process exceeded its timeout and was killed." },
  CANCELLED: { family: "process", retryable: false, description: "The operation was cancelled." },
  INTERRUPTED: {
    family: "process",
    retryable: true,
    description: "The process holding the operation's lease stopped (killed, crashed, or silent past its lease) before it finished; its run is failed, its staging is collectable by `gc`, and repeating the request is safe.",
  },
  TOOL_NOT_REVIEWED: {
    family: "access",
    retryable: false,
    description: "The tool has no reviewed contract for the code that is registered now (never reviewed, reviewed before it was registered, or its module changed since); a person reviews it: `emberscope tools review TOOL`.",
  },
  APPROVAL_REQUIRED: {
    family: "access",
    retryable: false,
    description: "A workflow call would have a side effect (write) that the workflow's policy does not allow: a person approves that tool for that workflow (`emberscope workflows approve ID TOOL`); agents cannot.",
  },
  WORKFLOW_NOT_READ_ONLY: {
    family: "access",
    retryable: false,
    description: "Only a workflow whose every tool has a reviewed read-only contract bound to its registered code can be exposed to agents; `details.tools` names the tools that write (approvals for live runs do not count).",
  },
  POLICY_DENIED: { family: "access", retryable: false, description: "Workspace policy forbids the request." },
  AGENT_ACCESS_DISABLED: { family: "access", retryable: true, description: "Agent access is off; a person must switch it on." },
  PERSON_SESSION_REQUIRED: { family: "access", retryable: false, description: "Only the person may do this (agent access, detail level, the token): from a browser signed in with the link `emberscope serve` prints (or `emberscope serve link`), or with the CLI." },
  UNAUTHORIZED: { family: "access", retryable: false, description: "Missing or wrong credentials." },
  QUERY_BUDGET_EXCEEDED: { family: "resource", retryable: true, description: "A query exceeded its time or memory budget." },
  LOCK_TIMEOUT: { family: "resource", retryable: true, description: "The control store stayed locked by another writer too long." },
  AUDIT_FAILED: {
    family: "internal",
    retryable: true,
    description: "An agent's call could not be written to the audit log, so its answer was withheld; `details.outcome` is what the call returned, and a call that writes may have taken effect.",
  },
  INTERNAL_ERROR: { family: "internal", retryable: false, description: "An unexpected fault; the message is safe, the details are in the server log." },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
export const ERROR_CODES = Object.keys(ERROR_CATALOG) as [ErrorCode, ...ErrorCode[]];

export const Recovery = z.object({
  operation: z.string().describe("The next operation to call, by its service name (e.g. workspace.init)."),
  arguments: z.record(z.string(), z.unknown()).describe("Its complete, valid arguments."),
  safe_to_repeat: z.boolean().describe("Whether calling the recovery operation more than once is harmless."),
});
export type Recovery = z.infer<typeof Recovery>;

export const ErrorDocument = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  retryable: z.boolean(),
  details: z.record(z.string(), z.unknown()),
  recovery: Recovery.optional(),
});
export type ErrorDocument = z.infer<typeof ErrorDocument>;

export class EmberscopeError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly recovery?: Recovery;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; recovery?: Recovery; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "EmberscopeError";
    this.code = code;
    this.details = options.details ?? {};
    this.recovery = options.recovery;
  }

  get retryable(): boolean {
    return ERROR_CATALOG[this.code].retryable;
  }

  get family(): ErrorFamily {
    return ERROR_CATALOG[this.code].family;
  }

  toDocument(): ErrorDocument {
    const doc: ErrorDocument = {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      details: this.details,
    };
    if (this.recovery) doc.recovery = this.recovery;
    return doc;
  }
}

export function isEmberscopeError(value: unknown): value is EmberscopeError {
  return value instanceof EmberscopeError;
}

/** Any thrown value as a typed error; unknown faults never leak their message or stack. */
export function toEmberscopeError(value: unknown): EmberscopeError {
  if (value instanceof EmberscopeError) return value;
  return new EmberscopeError("INTERNAL_ERROR", "An unexpected internal error occurred.", { cause: value });
}

export function exitCodeFor(code: ErrorCode): number {
  return ERROR_FAMILIES[ERROR_CATALOG[code].family].exitCode;
}

export const RECOVER_BY_INIT: Recovery = {
  operation: "workspace.init",
  arguments: {},
  safe_to_repeat: true,
};
