import { randomBytes } from "node:crypto";
import { constants as fsConstants, promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { TOKEN_KINDS } from "../../analysis/redaction";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import { WORKSPACE_DIR_NAME } from "../store/layout";
import { getRun } from "../store/runs";
import type { Workspace } from "../store/workspace";
import { manifestSha256 } from "./export-bundle";
import { buildExport, ExportSubject, fileNameOf, KindChoices, resolveChoices } from "./exports";
import { inAnyWorkspace, isInside, realpathOr } from "./input-file";
import { startLeasedJob } from "./leased-operation";
import { exportDocument } from "./notebook-format";
import { defineService, type ServiceContext } from "./service";

/**
 * An export written into the project (the agents' export, issue 24: "only redacted, never
 * wider"): fully redacted whatever the caller, built as an `export` operation (phase, progress,
 * cancel), and written inside the project root — under `emberscope-exports/` unless the caller
 * names a new `.html` file inside the root (links followed first; never into a workspace folder;
 * an existing file is never replaced). Every refusal comes before the operation exists.
 */

/** The folder an export goes to when the caller names none (inside the project root, beside the workspace). */
export const EXPORTS_DIR_NAME = "emberscope-exports";

const denied = (message: string, details: Record<string, unknown> = {}) => new EmberscopeError("POLICY_DENIED", message, { details: { argument: "out", ...details } });
const OUTSIDE_ROOT = "An export is written only inside the project root (links are followed first).";

/** Where the file goes: checked by name, then with every link resolved, before anything is written. */
async function exportTarget(ws: Workspace, requested: string | undefined, title: string): Promise<{ dir: string; names: (attempt: number) => string; chosen: boolean }> {
  const root = ws.layout.projectRoot;
  if (requested === undefined) {
    const dir = path.join(root, EXPORTS_DIR_NAME);
    await fsp.mkdir(dir, { recursive: true });
    await checkDir(ws, dir);
    const base = fileNameOf(title).replace(/\.emberscope\.html$/, "");
    return { dir, names: (n) => `${base}${n ? `-${n + 1}` : ""}.emberscope.html`, chosen: false };
  }
  if (!requested.toLowerCase().endsWith(".html")) throw new EmberscopeError("INVALID_ARGUMENTS", "An export file's name ends in .html.", { details: { argument: "out" } });
  const lexical = path.resolve(root, requested);
  if (!isInside(root, lexical)) throw denied(OUTSIDE_ROOT);
  if (inAnyWorkspace(lexical)) throw denied(`An export is never written into a workspace folder (${WORKSPACE_DIR_NAME}/).`);
  const dir = path.dirname(lexical);
  const stat = await fsp.stat(dir).catch(() => null);
  if (!stat?.isDirectory()) throw new EmberscopeError("INVALID_ARGUMENTS", "The out file's folder does not exist inside the project root.", { details: { argument: "out" } });
  await checkDir(ws, dir);
  if (await fsp.lstat(lexical).catch(() => null)) throw new EmberscopeError("INVALID_ARGUMENTS", "A file of that name exists: an export never replaces a file. Name a new one (or omit out).", { details: { argument: "out" } });
  return { dir, names: () => path.basename(lexical), chosen: true };
}

/** The folder, with every link followed, is inside the project root and outside any workspace folder. */
async function checkDir(ws: Workspace, dir: string): Promise<void> {
  const root = await realpathOr(ws.layout.projectRoot);
  const workspace = await realpathOr(ws.layout.dir);
  const real = await fsp.realpath(dir).catch(() => null);
  if (!real || (real !== root && !isInside(root, real))) throw denied(OUTSIDE_ROOT);
  if (inAnyWorkspace(real) || real === workspace || isInside(workspace, real)) throw denied(`An export is never written into a workspace folder (${WORKSPACE_DIR_NAME}/).`);
}

/**
 * Writes `html` as a new file: staged beside it (O_EXCL, no link followed), its folder checked
 * again through the open file, then hard-linked to its name — which fails rather than replace
 * anything that appeared meanwhile.
 */
async function writeNew(ws: Workspace, target: Awaited<ReturnType<typeof exportTarget>>, html: string): Promise<string> {
  const staged = path.join(target.dir, `.${randomBytes(6).toString("hex")}.export-partial`);
  const handle = await fsp.open(staged, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0), 0o644);
  try {
    await handle.writeFile(html);
    await checkDir(ws, path.dirname(await fsp.realpath(staged)));
  } finally {
    await handle.close();
  }
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      const file = path.join(target.dir, target.names(attempt));
      try {
        await fsp.link(staged, file);
        return file;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || target.chosen) {
          throw new EmberscopeError("INVALID_ARGUMENTS", "A file of that name exists: an export never replaces a file. Name a new one (or omit out).", { details: { argument: "out" } });
        }
      }
    }
    throw new EmberscopeError("INVALID_ARGUMENTS", "Too many exports of that title in the exports folder: name the file with out.", { details: { argument: "out" } });
  } finally {
    await fsp.rm(staged, { force: true });
  }
}

export const WriteExportResult = z.object({
  operation_id: z.string(),
  title: z.string(),
  path: z.string().describe("The file, relative to the project root."),
  size_bytes: z.number().int(),
  manifest_sha256: z.string().describe("The sha256 of the file's manifest (which holds the sha256 of every part); `emberscope export verify FILE` checks it all."),
  redaction_mode: z.literal("redacted"),
  redactions: z.record(z.string(), z.number().int()).describe("Values redacted per kind (PATH, USER, HOST, EMAIL, IP, SECRET, QUERY, ENV, DATA)."),
  evidence: z.object({ generations: z.number().int(), files: z.number().int(), source_bytes: z.number().int(), bundle_bytes: z.number().int() }),
  elapsed_ms: z.number(),
});

export const writeExport = defineService({
  name: "exports.write",
  summary:
    "Export an investigation (or one run's view) fully redacted into a new file inside the project root, as an export operation: answers its path, size, manifest sha256 and redaction counts by kind. Never wider: leaving a kind unredacted is a person's choice (emberscope export --allow, or the Export dialog).",
  kind: "mutation",
  input: z
    .object({
      subject: ExportSubject,
      out: z.string().min(1).max(1024).optional().describe(`A new .html file inside the project root (relative to it); default ${EXPORTS_DIR_NAME}/<title>.emberscope.html.`),
      choices: KindChoices.optional().describe("Only to narrow: every kind is redacted here; allowing one is refused."),
    })
    .strict(),
  output: WriteExportResult,
  handler: async (input, { ws, ctx }) => {
    // Refusals first, before any operation exists: a wider choice, an unknown subject, a path outside.
    const { allow } = resolveChoices(ctx, input.choices ?? { allow: [], redact: [] });
    if (allow.size) throw new EmberscopeError("POLICY_DENIED", "This export is always fully redacted; a person widens one with `emberscope export … --allow KIND` or the Export dialog.", { details: { argument: "choices", allow: [...allow] } });
    const title = input.subject.kind === "investigation" ? exportDocument(ws.db, input.subject.investigation_id, ws.id).investigation.title : getRun(ws.db, input.subject.run_id).title;
    const target = await exportTarget(ws, input.out, title);
    return runExport(ws, ctx, input.subject, target);
  },
});

async function runExport(ws: Workspace, ctx: ServiceContext, subject: z.output<typeof ExportSubject>, target: Awaited<ReturnType<typeof exportTarget>>): Promise<z.output<typeof WriteExportResult>> {
  const job = startLeasedJob(ws, { kind: "export", intent: { subject, out: path.relative(ws.layout.projectRoot, target.dir), redaction: "redacted" } });
  ctx.operationStarted?.(job.operationId);
  const signal = ctx.signal ? AbortSignal.any([job.signal, ctx.signal]) : job.signal;
  const cancelled = () => (job.signal.aborted ? job.signal.reason : new EmberscopeError("CANCELLED", "The export was cancelled.", { details: { operation_id: job.operationId } }));
  try {
    const progress = { phase: job.phase.bind(job), progress: job.progress.bind(job), signal };
    const built = await buildExport(job.ws, ctx, { subject, choices: { allow: [], redact: [] }, preview: false }, progress);
    signal.throwIfAborted();
    job.assertHeld();
    job.phase("writing", built.result.evidence.files, built.result.evidence.files);
    const file = await writeNew(ws, target, built.html!);
    const result = {
      operation_id: job.operationId,
      title: built.result.title,
      path: path.relative(ws.layout.projectRoot, file),
      size_bytes: built.result.size_bytes,
      manifest_sha256: manifestSha256(built.html!)!,
      redaction_mode: "redacted" as const,
      redactions: Object.fromEntries(TOKEN_KINDS.map((k) => [k, built.result.report.find((e) => e.kind === k)?.count ?? 0])),
      evidence: built.result.evidence,
      elapsed_ms: built.result.elapsed_ms,
    };
    job.finish({ state: "succeeded", result: { path: result.path, size_bytes: result.size_bytes, manifest_sha256: result.manifest_sha256, redaction_mode: "redacted" } });
    return result;
  } catch (error) {
    const failure = toEmberscopeError(signal.aborted ? cancelled() : error);
    try {
      job.finish({ state: failure.code === "CANCELLED" ? "cancelled" : "failed", error: failure.toDocument() });
    } catch {
      // the lease was lost: reconciliation has ended the operation already
    }
    throw failure;
  } finally {
    await job.close();
  }
}
