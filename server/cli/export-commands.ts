import path from "node:path";
import { createExport, importBundle, verifyExport, type ExportResult } from "../services/exports";
import { callService, type ServiceDef } from "../services";
import { stringFlag, type OptionSpec, type ParsedArgs } from "./args";
import { formatBytes, formatSeconds, keyValues, table } from "./render";
import { requirePositionals, serviceCommand, type CliCommand } from "./service-command";

/** `export investigation|run|verify` and `import-bundle`: shareable redacted exports from the shell. */

const CHOICE_OPTIONS: Record<string, OptionSpec> = {
  out: { type: "string", valueName: "FILE", description: "The HTML file to write." },
  preview: { type: "boolean", description: "List every redaction (kind, count, first place) and write nothing." },
  allow: { type: "string", valueName: "KIND", multiple: true, description: "Leave this kind as it is (PATH, USER, HOST, EMAIL, IP, SECRET, QUERY, ENV, DATA); repeatable. Recorded in the manifest." },
  redact: { type: "string", valueName: "KIND", multiple: true, description: "Redact this kind (all are by default; wins over --allow)." },
};

const kinds = (values: ParsedArgs["values"], name: string): string[] => {
  const raw = values[name];
  return (Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : []).flatMap((v) => v.split(",")).map((v) => v.trim().toUpperCase()).filter(Boolean);
};

function choiceInput(args: ParsedArgs, cwd: string) {
  const out = stringFlag(args.values, "out");
  return {
    choices: { allow: kinds(args.values, "allow"), redact: kinds(args.values, "redact") },
    preview: args.values.preview === true,
    ...(out !== undefined ? { out: path.resolve(cwd, out) } : {}),
  };
}

function humanExport(r: ExportResult & { out: string | null }): string {
  const rows = r.report.filter((e) => e.count > 0).map((e) => ({ kind: e.kind, count: e.count, action: e.action, "first found in": e.example ?? "" }));
  const report = rows.length ? table(rows, ["kind", "count", "action", "first found in"]) : "  nothing to redact was found";
  const evidence = `${r.evidence.generations} generation(s), ${r.evidence.files} Parquet file(s): ${formatBytes(r.evidence.source_bytes)} in the workspace → ${formatBytes(r.evidence.bundle_bytes)} in the export`;
  if (r.preview) return `Preview of the export of "${r.title}" (redaction: ${r.redaction_mode}; nothing written)\n${report}\n${evidence}`;
  return `Wrote ${r.out} (${formatBytes(r.size_bytes)}, ${r.parts.length} parts, ${formatSeconds(r.elapsed_ms)}; redaction: ${r.redaction_mode})\n${report}\n${evidence}`;
}

const INVESTIGATION = { name: "INVESTIGATION_ID", description: "The investigation (inv_…)." };
const RUN = { name: "RUN_ID", description: "The run (run_…)." };
const FILE = { name: "FILE", description: "An export file (.html)." };

export const EXPORT_COMMANDS: CliCommand[] = [
  {
    path: ["export", "investigation"],
    summary: "Export an investigation as one self-contained, redacted HTML file that opens offline (notebook, cited evidence, DuckDB-WASM, viewer).",
    options: CHOICE_OPTIONS,
    positionals: [INVESTIGATION],
    services: [createExport as unknown as ServiceDef],
    execute: async (args, env) => {
      const [id] = requirePositionals(args, [INVESTIGATION]);
      const r = await callService(createExport, env.ctx, { subject: { kind: "investigation", investigation_id: id }, ...choiceInput(args, env.ctx.locator.cwd) });
      return { document: r, human: humanExport(r), exitCode: 0 };
    },
  },
  {
    path: ["export", "run"],
    summary: "Export one run's view (flame, trace, sandwich or calltree) as one self-contained, redacted HTML file.",
    options: {
      ...CHOICE_OPTIONS,
      view: { type: "string", valueName: "VIEW", description: "flame (default), trace, sandwich or calltree." },
      commit: { type: "string", valueName: "COMMIT", description: "The commit to read (default HEAD, pinned at export)." },
    },
    positionals: [RUN],
    services: [createExport as unknown as ServiceDef],
    execute: async (args, env) => {
      const [runId] = requirePositionals(args, [RUN]);
      const subject = { kind: "run", run_id: runId, view: stringFlag(args.values, "view") ?? "flame", commit_id: stringFlag(args.values, "commit") ?? "HEAD" };
      const r = await callService(createExport, env.ctx, { subject, ...choiceInput(args, env.ctx.locator.cwd) });
      return { document: r, human: humanExport(r), exitCode: 0 };
    },
  },
  serviceCommand({
    path: ["export", "verify"],
    service: verifyExport,
    positionals: [FILE],
    input: (_args, [file]) => ({ file }),
    human: (r) =>
      keyValues([
        ["verified", r.title],
        ["parts", `${r.parts.length}, every sha256 matches`],
        ["redaction", `${r.redaction.mode}`],
        ["re-scan", `${r.scan.strings} strings; found: ${Object.entries(r.scan.found).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n} (allowed)`).join(", ") || "nothing of any kind"}`],
      ]),
  }),
  serviceCommand({
    path: ["import-bundle"],
    service: importBundle,
    positionals: [FILE],
    input: (_args, [file]) => ({ file }),
    human: (r) => `Imported "${r.title}" as investigation ${r.investigation_id} (read-only evidence: ${r.runs.length} run(s), ${r.generations} generation(s), commits ${r.commits.join(", ")}; HEAD is now ${r.head_commit_id}).`,
  }),
];
