import { describe, expect, it } from "vitest";
import { ERROR_CATALOG, ERROR_FAMILIES, EmberscopeError, ErrorDocument, exitCodeFor, toEmberscopeError } from "../../server/domain/errors";

const REQUIRED = [
  "INVALID_ARGUMENTS", "WORKSPACE_NOT_FOUND", "WORKSPACE_EXISTS", "WORKSPACE_TOO_NEW", "WORKSPACE_INVALID", "RUN_NOT_FOUND",
  "ARTIFACT_NOT_FOUND", "COMMIT_NOT_FOUND", "ARTIFACT_TOO_LARGE", "ARTIFACT_PARSE_FAILED", "UNSUPPORTED_FORMAT", "REVISION_CONFLICT",
  "STALE_CURSOR", "IDEMPOTENCY_CONFLICT", "PLAN_NOT_FOUND", "PLAN_CONSUMED", "PLAN_EXPIRED", "PLAN_MISMATCH", "STALE_INTENT",
  "CAPABILITY_UNAVAILABLE", "PROCESS_FAILED", "PROCESS_TIMEOUT", "CANCELLED", "INTERRUPTED", "POLICY_DENIED", "AGENT_ACCESS_DISABLED",
  "UNAUTHORIZED", "QUERY_BUDGET_EXCEEDED", "LOCK_TIMEOUT", "INTERNAL_ERROR",
];

describe("error catalog", () => {
  it("has every code the transports rely on, each in a family with its own exit code", () => {
    for (const code of REQUIRED) expect(ERROR_CATALOG).toHaveProperty(code);
    const exitCodes = Object.values(ERROR_FAMILIES).map((f) => f.exitCode);
    expect(new Set(exitCodes).size).toBe(exitCodes.length);
    expect(exitCodes).not.toContain(0);
    expect(exitCodeFor("WORKSPACE_NOT_FOUND")).toBe(ERROR_FAMILIES.workspace.exitCode);
    expect(exitCodeFor("INVALID_ARGUMENTS")).toBe(2);
  });

  it("produces documents that satisfy the published schema", () => {
    const error = new EmberscopeError("RUN_NOT_FOUND", "No run has that id.", {
      details: { run_id: "run_x" },
      recovery: { operation: "runs.list", arguments: {}, safe_to_repeat: true },
    });
    const doc = ErrorDocument.parse(error.toDocument());
    expect(doc).toEqual({
      code: "RUN_NOT_FOUND",
      message: "No run has that id.",
      retryable: false,
      details: { run_id: "run_x" },
      recovery: { operation: "runs.list", arguments: {}, safe_to_repeat: true },
    });
  });

  it("turns unknown faults into INTERNAL_ERROR without leaking their message", () => {
    const wrapped = toEmberscopeError(new Error("ENOENT: /home/alice/secret-project/x"));
    expect(wrapped.code).toBe("INTERNAL_ERROR");
    expect(wrapped.message).not.toContain("/home/alice");
    expect(JSON.stringify(wrapped.toDocument())).not.toContain("alice");
  });
});
