import { EmberscopeError } from "../domain/errors";
import type { Artifact, Commit, Run } from "../domain/models";
import {
  callService,
  collectGarbage,
  initializeWorkspace,
  listArtifacts,
  listCommits,
  listRuns,
  purgeGarbage,
  renameRun,
  restoreGarbage,
  showArtifact,
  showCommit,
  showRun,
  validateWorkspace,
  workspaceStatus,
  type ServiceDef,
} from "../services";
import { integerFlag, stringFlag, type OptionSpec, type ParsedArgs } from "./args";
import { CAPTURE_COMMANDS } from "./capture-commands";
import { EVIDENCE_COMMANDS } from "./evidence-commands";
import { EXPERIMENT_COMMANDS } from "./experiment-commands";
import { EXPORT_COMMANDS } from "./export-commands";
import { MCP_COMMANDS } from "./mcp-commands";
import { NOTEBOOK_COMMANDS } from "./notebook-commands";
import { WORKFLOW_COMMANDS } from "./workflow-commands";
import { WORKFLOW_RUN_COMMANDS } from "./workflow-run-commands";
import { requirePositionals, serviceCommand, type CliCommand } from "./service-command";
import { formatBytes, keyValues, pageFooter, table } from "./render";
import { serveCommand } from "./serve";
import { exportSpeedscopeCommand, openCommand } from "./open-command";

export type { CliCommand, CliEnv, CliOutcome, PositionalSpec } from "./service-command";

const LIST_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: "string", valueName: "N", description: "Rows per page (1–500, default 50)." },
  cursor: { type: "string", valueName: "CURSOR", description: "Continue from a previous page's next_cursor." },
};

function listInput(args: ParsedArgs, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor"), ...extra };
}

const runRow = (r: Run) => ({ run: r.run_id, kind: r.kind, source: r.source, status: r.status, created: r.created_at, title: r.title });
const artifactRow = (a: Artifact) => ({
  artifact: a.artifact_id.slice(0, 19) + "…",
  size: formatBytes(a.size_bytes),
  sensitivity: a.sensitivity,
  registrations: a.registrations.length,
  created: a.created_at,
});
const commitRow = (c: Commit) => ({ commit: c.commit_id, seq: c.seq, generations: c.generation_count, created: c.created_at, message: c.message });

export const COMMANDS: CliCommand[] = [
  serviceCommand({
    path: ["init"],
    service: initializeWorkspace,
    input: () => ({}),
    human: (r) => `Initialized workspace ${r.workspace_id} in ${r.project_root}/.emberscope (schema ${r.schema_version}).`,
  }),
  serviceCommand({
    path: ["status"],
    service: workspaceStatus,
    input: () => ({}),
    human: (s) =>
      keyValues([
        ["workspace", s.workspace_id],
        ["project root", s.project_root],
        ["schema", s.schema_version],
        ["HEAD", `${s.head_commit_id} (seq ${s.head.seq}, ${s.head.generation_count} generations)`],
        ["runs", s.counts.runs],
        ["artifacts", s.counts.artifacts],
        ["commits", s.counts.commits],
        ["active operations", s.counts.operations_active],
      ]),
  }),
  serviceCommand({
    path: ["validate"],
    service: validateWorkspace,
    options: { full: { type: "boolean", description: "Also re-hash every stored object and run a full integrity check." } },
    input: (args) => ({ full: args.values.full === true }),
    human: (r) =>
      (r.ok ? "No problems found." : `${r.problems.length} problem(s):\n` + r.problems.map((p) => `  ${p.code}  ${p.subject ?? ""}  ${p.message}`).join("\n")) +
      `\nChecked ${r.checked.commits} commits, ${r.checked.referenced_objects} objects` +
      (r.full ? ` (${r.checked.rehashed_objects} re-hashed)` : "") +
      `; ${r.notes.unreachable_objects} unreachable objects and ${r.notes.stale_tmp_files} stale staging entries (${r.notes.stale_tmp_bytes} bytes) can be collected by gc.` +
      (r.notes.interrupted_operations.length ? `\nEnded ${r.notes.interrupted_operations.length} interrupted operation(s): ${r.notes.interrupted_operations.join(", ")}.` : ""),
    exitCode: (r) => (r.ok ? 0 : 3),
  }),
  {
    path: ["gc"],
    summary: "Collect unreachable objects and stale staging files: dry run by default; restorable trash.",
    options: {
      apply: { type: "boolean", description: "Move what is collectable into trash/<manifest>/." },
      "min-age": { type: "string", valueName: "SECONDS", field: "min_age_seconds", description: "Leave unreachable files younger than this (default 3600)." },
      restore: { type: "string", valueName: "MANIFEST", field: "manifest_id", service: restoreGarbage.name, description: "Move a manifest's files back." },
      purge: { type: "string", valueName: "MANIFEST", field: "manifest_id", service: purgeGarbage.name, description: "Delete a manifest's trash (only when older than 24 h)." },
    },
    positionals: [],
    services: [collectGarbage, restoreGarbage, purgeGarbage] as unknown as ServiceDef[],
    execute: async (args, env) => {
      requirePositionals(args, []);
      const restore = stringFlag(args.values, "restore");
      const purge = stringFlag(args.values, "purge");
      const chosen = (["apply", "restore", "purge"] as const).filter((flag) => (flag === "apply" ? args.values.apply === true : stringFlag(args.values, flag) !== undefined));
      if (chosen.length > 1) {
        throw new EmberscopeError("INVALID_ARGUMENTS", `Use one of --apply, --restore and --purge at a time (got --${chosen.join(" and --")}).`, {
          details: { argument: `--${chosen[1]}`, conflicting: chosen.map((flag) => `--${flag}`) },
        });
      }
      if (restore !== undefined) {
        const r = await callService(restoreGarbage, env.ctx, { manifest_id: restore });
        return { document: r, human: `Restored ${r.restored} file(s) from ${r.manifest_id}.`, exitCode: 0 };
      }
      if (purge !== undefined) {
        const r = await callService(purgeGarbage, env.ctx, { manifest_id: purge });
        return { document: r, human: `Purged ${r.purged_entries} file(s), ${formatBytes(r.purged_bytes)}.`, exitCode: 0 };
      }
      const r = await callService(collectGarbage, env.ctx, { apply: args.values.apply === true, min_age_seconds: integerFlag(args.values, "min-age") });
      const what = `${r.collectable_count} file(s), ${formatBytes(r.collectable_bytes)}`;
      const lines = [r.applied ? (r.manifest_id ? `Moved ${what} to trash (manifest ${r.manifest_id}).` : "Nothing to collect.") : `Would collect ${what}. Run with --apply to move them to trash.`];
      if (r.kept_recent) lines.push(`${r.kept_recent} recent unreachable object(s) kept (younger than --min-age).`);
      for (const t of r.trash) lines.push(`trash ${t.manifest_id}: ${t.entries} file(s), ${formatBytes(t.bytes)}, created ${t.created_at}${t.purgeable ? " (purgeable)" : ""}`);
      return { document: r, human: lines.join("\n"), exitCode: 0 };
    },
  },
  serviceCommand({
    path: ["runs", "list"],
    service: listRuns,
    options: {
      ...LIST_OPTIONS,
      text: { type: "string", valueName: "TEXT", description: "Only runs whose title, id, source, file name or workload contains this (any case)." },
      kind: { type: "string", valueName: "KIND", description: "Only runs of this kind: import, capture, extraction." },
      status: { type: "string", valueName: "STATUS", description: "Only runs in this status: pending, running, succeeded, failed, cancelled." },
      source: { type: "string", valueName: "SOURCE", description: "Only runs of this format (imports) or adapter (captures)." },
      workload: { type: "string", valueName: "NAME", description: "Only captures of this workload." },
      from: { type: "string", valueName: "DAY|TIME", field: "created_from", description: "Only runs created on or after this UTC day (YYYY-MM-DD) or ISO time." },
      to: { type: "string", valueName: "DAY|TIME", field: "created_to", description: "Only runs created on or before this UTC day or ISO time." },
      order: { type: "string", valueName: "ORDER", description: "newest (default), oldest or title." },
    },
    input: (args) =>
      listInput(args, {
        ...Object.fromEntries((["text", "kind", "status", "source", "workload", "order"] as const).map((flag) => [flag, stringFlag(args.values, flag)])),
        created_from: stringFlag(args.values, "from"),
        created_to: stringFlag(args.values, "to"),
      }),
    human: (page) =>
      page.items.length
        ? table(page.items.map(runRow), ["run", "kind", "source", "status", "created", "title"]) + pageFooter(page, "emberscope runs list [the same filters]")
        : "No runs match. Import a profile (emberscope import PATH) or capture a declared workload; emberscope runs list without filters lists them all.",
  }),
  serviceCommand({
    path: ["runs", "rename"],
    service: renameRun,
    positionals: [
      { name: "RUN_ID", description: "The run's id (run_…)." },
      { name: "TITLE", description: "Its new title (1–200 characters)." },
    ],
    options: { revision: { type: "string", valueName: "N", field: "expected_revision", description: "The revision you read (runs show); refused if it changed since." } },
    input: (args, [runId, title]) => ({ run_id: runId, title, expected_revision: integerFlag(args.values, "revision") }),
    human: (r) => `Run ${r.run_id} is now titled ${JSON.stringify(r.title)} (revision ${r.revision}).`,
  }),
  serviceCommand({
    path: ["runs", "show"],
    service: showRun,
    positionals: [{ name: "RUN_ID", description: "The run's id (run_…)." }],
    input: (_args, [runId]) => ({ run_id: runId }),
    human: (r) => keyValues(Object.entries(r)),
  }),
  serviceCommand({
    path: ["artifacts", "list"],
    service: listArtifacts,
    options: { ...LIST_OPTIONS, run: { type: "string", valueName: "RUN_ID", field: "run_id", description: "Only artifacts registered for this run." } },
    input: (args) => listInput(args, { run_id: stringFlag(args.values, "run") }),
    human: (page) =>
      page.items.length
        ? table(page.items.map(artifactRow), ["artifact", "size", "sensitivity", "registrations", "created"]) + pageFooter(page, "emberscope artifacts list")
        : "No artifacts yet.",
  }),
  serviceCommand({
    path: ["artifacts", "show"],
    service: showArtifact,
    positionals: [{ name: "ARTIFACT_ID", description: "The artifact's content address (sha256:…)." }],
    input: (_args, [artifactId]) => ({ artifact_id: artifactId }),
    human: (a) => keyValues(Object.entries(a)),
  }),
  serviceCommand({
    path: ["commits", "list"],
    service: listCommits,
    options: LIST_OPTIONS,
    input: (args) => listInput(args),
    human: (page) => table(page.items.map(commitRow), ["commit", "seq", "generations", "created", "message"]) + pageFooter(page, "emberscope commits list"),
  }),
  serviceCommand({
    path: ["commits", "show"],
    service: showCommit,
    positionals: [{ name: "COMMIT_ID", description: 'A commit id, or "HEAD".' }],
    input: (_args, [commitId]) => ({ commit_id: commitId }),
    human: (c) =>
      keyValues([
        ["commit", c.commit_id],
        ["seq", c.seq],
        ["parent", c.parent_id ?? "(root)"],
        ["message", c.message],
        ["created", c.created_at],
        ["generations", c.generations.map((g) => `${g.generation_id} (${g.extractor} ${g.extractor_version}, ${g.files.length} files)`).join(", ") || "(none)"],
      ]),
  }),
  ...EVIDENCE_COMMANDS,
  ...NOTEBOOK_COMMANDS,
  ...WORKFLOW_COMMANDS,
  ...WORKFLOW_RUN_COMMANDS,
  ...CAPTURE_COMMANDS,
  ...EXPERIMENT_COMMANDS,
  ...MCP_COMMANDS,
  ...EXPORT_COMMANDS,
  serveCommand,
  openCommand,
  exportSpeedscopeCommand,
];

/** The command named by the longest matching prefix of the positionals. */
export function findCommand(positionals: string[]): { command: CliCommand; rest: string[] } | null {
  let best: CliCommand | null = null;
  for (const command of COMMANDS) {
    const matches = command.path.every((word, i) => positionals[i] === word);
    if (matches && (!best || command.path.length > best.path.length)) best = command;
  }
  return best ? { command: best, rest: positionals.slice(best.path.length) } : null;
}

/** The CLI spelling of a service operation, for recovery hints. */
export function commandForService(operation: string): CliCommand | undefined {
  return COMMANDS.find((c) => c.services.some((s) => s.name === operation));
}
