import { promises as fsp, type Stats } from "node:fs";
import { z } from "zod";
import { detectFormat, IMPORTERS, importerFor } from "../../analysis/formats/index";
import { FORMAT_IDS, type FormatImporter } from "../../analysis/formats/types";
import { headText } from "../../analysis/io/text";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { EmberscopeError } from "../domain/errors";
import { Limitation, Sensitivity } from "../domain/models";
import { extractArtifactFile, extractionFailure, extractStoredArtifact, mayReuseGeneration, THREADED_WRITER_FROM_BYTES, type ExtractionPhases } from "../evidence/extract";
import { prepareWriterThread } from "../evidence/writer-thread";
import { prepareRangeThreadFor } from "../evidence/range-thread";
import { DEFAULT_INPUT_BOUNDS, expectedInputBytes, sniffHead, type InputBounds } from "../evidence/input";
import { registerArtifact } from "../store/artifacts";
import { createRun, getRun, updateRun } from "../store/runs";
import type { ObjectId, StoredObject } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { openRequestedFile, openStagedFile, type InputFile } from "./input-file";
import { callService, defineService, type ServiceContext } from "./service";

const ImportTimings = z.object({
  store: z.number().describe("Waiting to store the artifact: a large one is copied and hashed while it is parsed, unless its generation may be reused."),
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

/** Fails with ARTIFACT_CHANGED when the file is no longer the one `before` describes; `retry` is the import to repeat (none for an upload). */
async function assertUnchanged(file: string, before: Stats, retry: Record<string, unknown> | null): Promise<void> {
  const after = await fsp.stat(file).catch(() => null);
  if (after && after.ino === before.ino && after.size === before.size && after.mtimeMs === before.mtimeMs) return;
  throw new EmberscopeError("ARTIFACT_CHANGED", "The file changed while it was being imported; import it again once it is complete.", {
    details: { argument: "path" },
    ...(retry ? { recovery: { operation: "imports.import", arguments: retry, safe_to_repeat: true } } : {}),
  });
}

const UploadOptions = z
  .object({
    format: z.enum(FORMAT_IDS).optional(),
    sensitivity: Sensitivity.default("normal"),
    max_bytes: z.number().int().min(1).max(64 * 1024 ** 3).optional(),
  })
  .strict();

const ImportInput = z.object({ path: z.string().min(1).max(4096), ...UploadOptions.shape }).strict();

export const importArtifact = defineService({
  name: "imports.import",
  summary: "Import a profile or trace file: store it, normalize it to Parquet evidence, publish a commit.",
  kind: "mutation",
  input: ImportInput,
  output: ImportResult,
  handler: async (input, { ws, ctx }) => {
    const source = await openRequestedFile(ctx, ws, input.path);
    try {
      return await importFile(ws, source, input, input);
    } finally {
      await source.close();
    }
  },
});

/**
 * The browser's upload route: imports the file it streamed into the workspace's tmp/. No request
 * names that path (imports.import refuses every path inside a workspace folder); the route hands
 * it over in-process, and the import goes through callService as any other (`options` are
 * validated as imports.import's are).
 */
export function importUploadedFile(ctx: ServiceContext, staged: string, options: { format?: string }): Promise<ImportResult> {
  const upload = defineService({
    ...importArtifact,
    input: UploadOptions,
    handler: async (input, { ws }) => {
      const source = await openStagedFile(ws, staged);
      try {
        return await importFile(ws, source, input, null);
      } finally {
        await source.close();
      }
    },
  });
  return callService(upload, ctx, options);
}

/** Stores, extracts and publishes one opened input; `retry` is the request to repeat should the file change meanwhile. */
async function importFile(ws: Workspace, source: InputFile, input: z.output<typeof UploadOptions>, retry: Record<string, unknown> | null): Promise<ImportResult> {
  const started = performance.now();
  const bounds: InputBounds = { ...DEFAULT_INPUT_BOUNDS, maxBytes: input.max_bytes ?? DEFAULT_INPUT_BOUNDS.maxBytes };
  const { file, stat, name: fileName } = source;
  if (stat.size > bounds.maxBytes) {
    throw new EmberscopeError("ARTIFACT_TOO_LARGE", `The file is larger than the ${bounds.maxBytes}-byte import limit.`, {
      details: { bound: "size", limit: bounds.maxBytes, size_bytes: stat.size },
    });
  }
  const importer = await chooseImporter(file, fileName, input.format, bounds);

  // A large input is parsed from the file itself while the kernel copies it into the store and
  // another thread hashes the copy; its threads (writer, range parser) load their code meanwhile.
  // The file must not change until the copy is stored (checked by its size and times). Unless
  // the same bytes may have a generation already: then the hash comes first, to reuse it.
  const large = (await expectedInputBytes(file)) >= THREADED_WRITER_FROM_BYTES && !mayReuseGeneration(ws, stat.size, importer);
  if (large) {
    prepareWriterThread();
    await prepareRangeThreadFor(importer, file);
  }
  const storeStarted = performance.now();
  const staging = large ? ws.objects.stageFile(file) : null;
  staging?.catch(() => undefined);
  let stored: StoredObject | null = staging ? null : await ws.objects.putFile(file);
  const storeMs = performance.now() - storeStarted;
  const run = createRun(ws.db, {
    kind: "import",
    source: importer.id,
    title: fileName,
    status: "running",
    extraction_state: "running",
    details: { file_name: fileName, format: importer.id, size_bytes: stored?.size ?? stat.size },
  });
  const register = (object: StoredObject) => {
    registerArtifact(ws.db, object, { runId: run.run_id, kind: "native", producer: "import", mediaType: "application/octet-stream", format: importer.id, fileName, sensitivity: input.sensitivity });
    return object;
  };
  /** The stored, registered artifact: a staged one once copied and hashed. */
  const artifact = async (): Promise<StoredObject> => (stored ??= register(await (await staging!).store()));
  /** The artifact of what the parse read: the copy, if the file did not change while both were read. */
  const parsedArtifact = async (): Promise<ObjectId> => {
    const { id } = await artifact();
    await assertUnchanged(file, stat, retry);
    return id;
  };
  if (stored) register(stored);

  const finish = (artifactId: string, generationId: string, commitId: string, limitations: Limitation[], reused: boolean, phases: ExtractionPhases | null): ImportResult => {
    const current = getRun(ws.db, run.run_id);
    updateRun(ws.db, run.run_id, current.revision, {
      status: "succeeded",
      extraction_state: "succeeded",
      limitations,
      details: { ...current.details, generation_id: generationId, commit_id: commitId },
    });
    const timings = { store: storeMs, parse: phases?.parse ?? 0, totals: phases?.totals ?? 0, write: phases?.write ?? 0, total: performance.now() - started };
    const timings_ms = Object.fromEntries(Object.entries(timings).map(([phase, ms]) => [phase, Math.round(ms)])) as ImportResult["timings_ms"];
    return { run_id: run.run_id, artifact_id: artifactId, generation_id: generationId, commit_id: commitId, format: importer.id, rows: rowsOf(ws, generationId), limitations, reused_generation: reused, timings_ms };
  };

  let failure: EmberscopeError;
  try {
    const request = { runId: run.run_id, importer, fileName, bounds };
    const extraction = stored
      ? await extractStoredArtifact(ws, { ...request, artifactId: stored.id })
      : await extractArtifactFile(ws, { ...request, file, artifactId: parsedArtifact });
    return finish((await artifact()).id, extraction.generation_id, extraction.commit_id, extraction.limitations, extraction.reused, extraction.phases);
  } catch (error) {
    // The native artifact is kept with the failed run, whatever the extraction made of it.
    try {
      failure = extractionFailure(error, importer.id, run.run_id, (await artifact()).id);
    } catch (storeError) {
      failure = storeError instanceof EmberscopeError ? storeError : new EmberscopeError("INTERNAL_ERROR", "The artifact could not be stored.", { cause: storeError, details: { run_id: run.run_id } });
    }
    const current = getRun(ws.db, run.run_id);
    updateRun(ws.db, run.run_id, current.revision, {
      status: "failed",
      extraction_state: "failed",
      details: { ...current.details, error: failure.toDocument() },
    });
    throw failure;
  }
}
