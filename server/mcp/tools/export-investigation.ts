import type { z } from "zod";
import { EXPORTS_DIR_NAME, writeExport } from "../../services/export-write";
import type { ServiceDef } from "../../services/service";
import type { AuditedCall, McpTool } from "../tools";

type Written = z.output<typeof writeExport.output>;

/** The investigation an export names (its subject), for the audit row. */
function exportAuditTarget(call: AuditedCall): string | null {
  const subject = call.args.subject as { investigation_id?: unknown } | undefined;
  const found = subject?.investigation_id ?? call.error?.details.investigation_id;
  return typeof found === "string" && /^inv_[0-9a-z]{1,120}$/.test(found) ? found : null;
}

export const exportInvestigationTool: McpTool = {
  name: "export_investigation",
  title: "Export an investigation (redacted)",
  description: `Write a shareable export of an investigation (subject {kind: investigation, investigation_id}) or of one run's view (subject {kind: run, run_id, view: flame|trace|sandwich|calltree, commit_id?}): one self-contained HTML file that opens offline in a browser with its notebook, the evidence it cites and a SQL engine. Always fully redacted (paths, user and host names, e-mail and IP addresses, secrets, query strings, environment values, free text in args): allowing any kind is refused (PERSON_SESSION_REQUIRED) — a person widens an export, never an agent. Runs as an export operation (progress when the client sends a progressToken; a client's cancellation cancels it) and writes a new file inside the project root: ${EXPORTS_DIR_NAME}/<title>.emberscope.html, or \`out\` (a new .html path relative to the project root; outside it, through a link out of it, into .emberscope/ or over an existing file is refused). Answers the file's path, size, its manifest's sha256 and the count of redacted values per kind. Next: tell the person the path; \`emberscope export verify FILE\` re-checks every hash and re-scans it.`,
  service: writeExport as unknown as ServiceDef,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  long: true,
  summarize: (r: Written) => {
    const counted = Object.entries(r.redactions).filter(([, n]) => n > 0);
    return `Wrote ${r.path} (${(r.size_bytes / 1e6).toFixed(1)} MB, redacted: ${counted.map(([k, n]) => `${k} ${n}`).join(", ") || "nothing found to redact"}; manifest sha256 ${r.manifest_sha256.slice(0, 12)}…).`;
  },
  links: (r: Written) => [{ uri: `emberscope://operations/${r.operation_id}`, name: `operation ${r.operation_id}` }],
  target: exportAuditTarget,
};
