import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { detectFormat, IMPORTERS, importerFor } from "../../analysis/formats/index";
import { FORMAT_IDS, type FormatImporter } from "../../analysis/formats/types";
import { headText } from "../../analysis/io/text";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { EmberscopeError } from "../domain/errors";
import { Limitation, Sensitivity } from "../domain/models";
import { extractionFailure, extractStoredArtifact, THREADED_WRITER_FROM_BYTES, type ExtractionPhases } from "../evidence/extract";
import { prepareWriterThread } from "../evidence/writer-thread";
import { prepareRangeThreadFor } from "../evidence/range-thread";
import { DEFAULT_INPUT_BOUNDS, expectedInputBytes, sniffHead, type InputBounds } from "../evidence/input";
import { registerArtifact } from "../store/artifacts";
import { createRun, getRun, updateRun } from "../store/runs";
import type { Workspace } from "../store/workspace";
import { defineService, type ServiceContext } from "./service";

const ImportTimings = z.object({
  store: z.number().describe("Hashing and storing the artifact."),
  parse: z.number().describe("Parsing and building the evidence (the writer appends meanwhile)."),
  totals: z.number().describe("Derived totals and the last batches."),
  write: z.number().describe("Writing the Parquet files into the object store."),
  total: z.number().describe("The whole import, from reading the request to publishing."),
});

export const ImportResult = z.object({
  run_id: z.string(),
  artifact_id: z.string(),
  generation_id: z.string(),
  commit_id: z.string(),
  format: z.enum(FORMAT_IDS),
  rows: z.record(z.string(), z.number().int()),
  limitations: z.array(Limitation),
  reused_generation: z.boolean().describe("True when the same bytes were already extracted by this importer version."),
  timings_ms: ImportTimings.describe("Where the import's time went, in milliseconds (extraction phases are 0 when the generation was reused)."),
});
export type ImportResult = z.infer<typeof ImportResult>;

/** Agents may only name files inside the project root; people may name any file they can read. */
function resolveInputPath(ctx: ServiceContext, ws: Workspace, requested: string): string {
  const resolved = path.resolve(ctx.locator.cwd, requested);
  if (ctx.actor === "agent") {
    const rel = path.relative(ws.layout.projectRoot, resolved);
    if (rel.startsWith("..") || path.isAbsolute(rel)) {
      throw new EmberscopeError("POLICY_DENIED", "Agents may import only files inside the project root.", { details: { argument: "path" } });
    }
  }
  return resolved;
}

function unsupported(reason: string): EmberscopeError {
  return new EmberscopeError("UNSUPPORTED_FORMAT", `${reason} Supported formats: ${FORMAT_IDS.join(", ")}.`, {
    details: { argument: "format", supported: IMPORTERS.map((i) => ({ format: i.id, title: i.title, extensions: i.extensions })) },
  });
}

async function chooseImporter(file: string, fileName: string, format: string | undefined, bounds: InputBounds): Promise<FormatImporter> {
  if (format) return importerFor(format as (typeof FORMAT_IDS)[number]);
  const head = await sniffHead(file, bounds);
  if (head.length === 0) {
    throw new EmberscopeError("ARTIFACT_PARSE_FAILED", "The file is empty.", { details: { format: null, offset: 0, reason: "empty input" } });
  }
  const found = detectFormat(head, headText(head), fileName);
  if (!found) throw unsupported("The file's format was not recognised; name it with --format.");
  return found;
}

function rowsOf(ws: Workspace, generationId: string): Record<string, number> {
  const rows = ws.db.prepare("SELECT table_name, row_count FROM generation_files WHERE generation_id = ?").all(generationId) as { table_name: string; row_count: number }[];
  return Object.fromEntries(TABLE_NAMES.map((t) => [t, rows.find((r) => r.table_name === t)?.row_count ?? 0]));
}

export const importArtifact = defineService({
  name: "imports.import",
  summary: "Import a profile or trace file: store it, normalize it to Parquet evidence, publish a commit.",
  kind: "mutation",
  input: z
    .object({
      path: z.string().min(1).max(4096),
      format: z.enum(FORMAT_IDS).optional(),
      sensitivity: Sensitivity.default("normal"),
      max_bytes: z.number().int().min(1).max(64 * 1024 ** 3).optional(),
    })
    .strict(),
  output: ImportResult,
  handler: async (input, { ws, ctx }) => {
    const started = performance.now();
    const bounds: InputBounds = { ...DEFAULT_INPUT_BOUNDS, maxBytes: input.max_bytes ?? DEFAULT_INPUT_BOUNDS.maxBytes };
    const file = resolveInputPath(ctx, ws, input.path);
    const stat = await fsp.stat(file).catch(() => null);
    if (!stat?.isFile()) {
      throw new EmberscopeError("INVALID_ARGUMENTS", "No readable file at that path.", { details: { argument: "path" } });
    }
    if (stat.size > bounds.maxBytes) {
      throw new EmberscopeError("ARTIFACT_TOO_LARGE", `The file is larger than the ${bounds.maxBytes}-byte import limit.`, {
        details: { bound: "size", limit: bounds.maxBytes, size_bytes: stat.size },
      });
    }
    const fileName = path.basename(file);
    const importer = await chooseImporter(file, fileName, input.format, bounds);

    // A large input's writer thread loads its code while the artifact is stored.
    if ((await expectedInputBytes(file)) >= THREADED_WRITER_FROM_BYTES) prepareWriterThread();
    await prepareRangeThreadFor(importer, file);
    // 1 MiB reads: about half the CPU of the 64 KiB default for a large file (fewer calls and chunks).
    const storeStarted = performance.now();
    const stored = await ws.objects.putFile(file);
    const storeMs = performance.now() - storeStarted;
    const run = createRun(ws.db, {
      kind: "import",
      source: importer.id,
      title: fileName,
      status: "running",
      extraction_state: "running",
      details: { file_name: fileName, format: importer.id, size_bytes: stored.size },
    });
    registerArtifact(ws.db, stored, { runId: run.run_id, kind: "native", producer: "import", mediaType: "application/octet-stream", format: importer.id, fileName, sensitivity: input.sensitivity });

    const finish = (generationId: string, commitId: string, limitations: Limitation[], reused: boolean, phases: ExtractionPhases | null): ImportResult => {
      const current = getRun(ws.db, run.run_id);
      updateRun(ws.db, run.run_id, current.revision, {
        status: "succeeded",
        extraction_state: "succeeded",
        limitations,
        details: { ...current.details, generation_id: generationId, commit_id: commitId },
      });
      const timings = { store: storeMs, parse: phases?.parse ?? 0, totals: phases?.totals ?? 0, write: phases?.write ?? 0, total: performance.now() - started };
      const timings_ms = Object.fromEntries(Object.entries(timings).map(([phase, ms]) => [phase, Math.round(ms)])) as ImportResult["timings_ms"];
      return { run_id: run.run_id, artifact_id: stored.id, generation_id: generationId, commit_id: commitId, format: importer.id, rows: rowsOf(ws, generationId), limitations, reused_generation: reused, timings_ms };
    };

    try {
      const extraction = await extractStoredArtifact(ws, { artifactId: stored.id, runId: run.run_id, importer, fileName, bounds });
      return finish(extraction.generation_id, extraction.commit_id, extraction.limitations, extraction.reused, extraction.phases);
    } catch (error) {
      const failure = extractionFailure(error, importer.id, run.run_id, stored.id);
      const current = getRun(ws.db, run.run_id);
      updateRun(ws.db, run.run_id, current.revision, {
        status: "failed",
        extraction_state: "failed",
        details: { ...current.details, error: failure.toDocument() },
      });
      throw failure;
    }
  },
});
