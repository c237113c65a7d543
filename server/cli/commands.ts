import type { z } from "zod";
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
  restoreGarbage,
  showArtifact,
  showCommit,
  showRun,
  validateWorkspace,
  workspaceStatus,
  type ServiceContext,
  type ServiceDef,
} from "../services";
import { integerFlag, stringFlag, type GlobalFlags, type OptionSpec, type ParsedArgs } from "./args";
import { formatBytes, keyValues, pageFooter, table } from "./render";
import { serveCommand } from "./serve";

export interface CliEnv {
  ctx: ServiceContext;
  flags: GlobalFlags;
  /** Progress and logs: stderr, silenced by --quiet. */
  log: (message: string) => void;
  /** For long-running commands: prints the one result document early (e.g. serve, once ready). */
  announce?: (document: unknown) => void;
}

export interface CliOutcome {
  document: unknown;
  human: string;
  exitCode: number;
}

export interface PositionalSpec {
  name: string;
  description: string;
}

export interface CliCommand {
  path: string[];
  summary: string;
  options: Record<string, OptionSpec>;
  positionals: PositionalSpec[];
  /** The service operations it calls (for generated docs and recovery hints). */
  services: ServiceDef[];
  execute: (args: ParsedArgs, env: CliEnv) => Promise<CliOutcome>;
}

function requirePositionals(args: ParsedArgs, specs: PositionalSpec[]): string[] {
  if (args.positionals.length < specs.length) {
    const missing = specs[args.positionals.length].name;
    throw new EmberscopeError("INVALID_ARGUMENTS", `Missing argument ${missing}.`, { details: { argument: missing } });
  }
  if (args.positionals.length > specs.length) {
    const extra = args.positionals[specs.length];
    throw new EmberscopeError("INVALID_ARGUMENTS", `Unexpected argument ${extra}.`, { details: { argument: extra } });
  }
  return args.positionals;
}

/** A command that maps its flags onto one service's input and renders the result. */
function serviceCommand<I extends z.ZodType, O extends z.ZodType>(spec: {
  path: string[];
  service: ServiceDef<I, O>;
  summary?: string;
  options?: Record<string, OptionSpec>;
  positionals?: PositionalSpec[];
  input: (args: ParsedArgs, positionals: string[]) => Record<string, unknown>;
  human: (result: z.output<O>) => string;
  exitCode?: (result: z.output<O>) => number;
}): CliCommand {
  const positionals = spec.positionals ?? [];
  return {
    path: spec.path,
    summary: spec.summary ?? spec.service.summary,
    options: spec.options ?? {},
    positionals,
    services: [spec.service as unknown as ServiceDef],
    execute: async (args, env) => {
      const input = spec.input(args, requirePositionals(args, positionals));
      const result = await callService(spec.service, env.ctx, input);
      return { document: result, human: spec.human(result), exitCode: spec.exitCode?.(result) ?? 0 };
    },
  };
}

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
      `; ${r.notes.unreachable_objects} unreachable objects and ${r.notes.stale_tmp_files} stale tmp files can be collected by gc.`,
    exitCode: (r) => (r.ok ? 0 : 3),
  }),
  {
    path: ["gc"],
    summary: "Collect unreachable objects and stale staging files: dry run by default; restorable trash.",
    options: {
      apply: { type: "boolean", description: "Move what is collectable into trash/<manifest>/." },
      "min-age": { type: "string", valueName: "SECONDS", field: "min_age_seconds", description: "Leave unreachable files younger than this (default 3600)." },
      restore: { type: "string", valueName: "MANIFEST", field: "manifest_id", description: "Move a manifest's files back." },
      purge: { type: "string", valueName: "MANIFEST", field: "manifest_id", description: "Delete a manifest's trash (only when older than 24 h)." },
    },
    positionals: [],
    services: [collectGarbage, restoreGarbage, purgeGarbage] as unknown as ServiceDef[],
    execute: async (args, env) => {
      requirePositionals(args, []);
      const restore = stringFlag(args.values, "restore");
      const purge = stringFlag(args.values, "purge");
      const chosen = [args.values.apply === true, restore !== undefined, purge !== undefined].filter(Boolean).length;
      if (chosen > 1) {
        throw new EmberscopeError("INVALID_ARGUMENTS", "Use one of --apply, --restore and --purge at a time.", { details: { argument: "--apply" } });
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
      kind: { type: "string", valueName: "KIND", description: "Only runs of this kind: import, capture, extraction." },
      status: { type: "string", valueName: "STATUS", description: "Only runs in this status: pending, running, succeeded, failed, cancelled." },
    },
    input: (args) => listInput(args, { kind: stringFlag(args.values, "kind"), status: stringFlag(args.values, "status") }),
    human: (page) =>
      page.items.length
        ? table(page.items.map(runRow), ["run", "kind", "source", "status", "created", "title"]) + pageFooter(page, "emberscope runs list")
        : "No runs yet. Import a profile (emberscope import PATH) or capture a declared workload.",
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
  serveCommand,
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
