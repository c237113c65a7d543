import { promises as fsp, type Stats } from "node:fs";
import { z } from "zod";
import { detectFormat, IMPORTERS, importerFor } from "../../analysis/formats/index";
import { recogniseFormat, type Recognition } from "../../analysis/formats/recognise";
import { FORMAT_IDS, type FormatImporter } from "../../analysis/formats/types";
import { headText } from "../../analysis/io/text";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { EmberscopeError } from "../domain/errors";
import { Limitation, Sensitivity } from "../domain/models";
import { extractionFailure, extractStoredArtifact, extractWhileStoring, mayReuseGeneration, THREADED_WRITER_FROM_BYTES, type PublishedEvidence } from "../evidence/extract";
import { prepareWriterThread } from "../evidence/writer-thread";
import { prepareRangeThreadFor } from "../evidence/range-thread";
import { DEFAULT_INPUT_BOUNDS, expectedInputBytes, sniffHead, type InputBounds } from "../evidence/input";
import { registerArtifact } from "../store/artifacts";
import { writeTransaction } from "../store/control-store";
import { patchRun } from "../store/runs";
import type { ObjectId, StagedFile, StoredObject } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { startLeasedOperation, type LeasedOperation } from "./leased-operation";
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

function unsupported(reason: string, recognised: Recognition | null = null): EmberscopeError {
  return new EmberscopeError("UNSUPPORTED_FORMAT", `${reason} Supported formats: ${FORMAT_IDS.join(", ")}.`, {
    details: { argument: "format", recognised, supported: IMPORTERS.map((i) => ({ format: i.id, title: i.title, extensions: i.extensions })) },
  });
}

/** Why no importer took the file: what it looks like, when that is known (analysis/formats/recognise.ts). */
function unrecognised(head: Uint8Array, text: string): EmberscopeError {
  const recognised = recogniseFormat(head, text);
  if (!recognised) return unsupported("The file's format was not recognised; name it with --format.");
  const hint = recognised.hint ? ` (${recognised.hint})` : "";
  return unsupported(`This looks like ${recognised.title}, which Emberscope cannot import${hint}.`, recognised);
}

async function chooseImporter(file: string, fileName: string, format: string | undefined, bounds: InputBounds): Promise<FormatImporter> {
  if (format) return importerFor(format as (typeof FORMAT_IDS)[number]);
  const head = await sniffHead(file, bounds);
  if (head.length === 0) {
    throw new EmberscopeError("ARTIFACT_PARSE_FAILED", "The file is empty.", { details: { format: null, offset: 0, reason: "empty input" } });
  }
  const text = headText(head);
  const found = detectFormat(head, text, fileName);
  if (!found) throw unrecognised(head, text);
  return found;
}

function rowsOf(ws: Workspace, generationId: string): Record<string, number> {
  const rows = ws.db.prepare("SELECT table_name, row_count FROM generation_files WHERE generation_id = ?").all(generationId) as { table_name: string; row_count: number }[];
  return Object.fromEntries(TABLE_NAMES.map((t) => [t, rows.find((r) => r.table_name === t)?.row_count ?? 0]));
}

/** Fails with ARTIFACT_CHANGED when the file is no longer the one `before` describes; `retry` is the import to repeat. */
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

  // The import holds a lease from here on: a process killed at any point leaves an operation that
  // reconciliation ends (its run failed with INTERRUPTED), and staging in tmp/<operation id>/
  // that gc can tell from a live import's.
  const lease = startLeasedOperation(ws, {
    kind: "import",
    intent: retry ?? input,
    run: { kind: "import", source: importer.id, title: fileName, status: "running", extraction_state: "running", details: { file_name: fileName, format: importer.id, size_bytes: stat.size } },
  });
  try {
    return await importUnderLease(lease, { file, stat, fileName, importer, bounds, input, retry, started });
  } finally {
    await lease.close();
  }
}

interface ImportJob {
  file: string;
  stat: Stats;
  fileName: string;
  importer: FormatImporter;
  bounds: InputBounds;
  input: z.output<typeof UploadOptions>;
  /** The request to repeat should the file change while it is read (none for an upload). */
  retry: Record<string, unknown> | null;
  started: number;
}

async function importUnderLease(lease: LeasedOperation, job: ImportJob): Promise<ImportResult> {
  const { ws, runId } = lease;
  const { file, stat, fileName, importer, bounds, input, retry, started } = job;
  let staging: Promise<StagedFile> | null = null;
  let stored: StoredObject | null = null;
  const register = (object: StoredObject) => {
    registerArtifact(ws.db, object, { runId, kind: "native", producer: "import", mediaType: "application/octet-stream", format: importer.id, fileName, sensitivity: input.sensitivity });
    return object;
  };
  /** The stored, registered artifact: a staged one once copied and hashed. */
  let storing: Promise<StoredObject> | null = null;
  const artifact = (): Promise<StoredObject> =>
    (storing ??= stored ? Promise.resolve(stored) : staging ? staging.then((s) => s.store()).then((object) => (stored = register(object))) : Promise.reject(new Error("the artifact was never stored")));
  /** The artifact of what the parse read: the copy, if the file did not change while both were read. */
  const parsedArtifact = async (): Promise<ObjectId> => {
    const { id } = await artifact();
    await assertUnchanged(file, stat, retry);
    return id;
  };
  // The run and the operation end in the transaction that publishes the generation.
  const onPublish = (published: PublishedEvidence) => {
    patchRun(ws.db, runId, (run) => ({
      status: "succeeded",
      extraction_state: "succeeded",
      limitations: published.limitations,
      details: { ...run.details, generation_id: published.generation_id, commit_id: published.commit_id },
    }));
    lease.finish({ state: "succeeded", result: { run_id: runId, generation_id: published.generation_id, commit_id: published.commit_id, reused_generation: published.reused } });
  };

  try {
    lease.phase("storing");
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
    staging = large ? ws.objects.stageFile(file) : null;
    staging?.catch(() => undefined);
    if (!staging) stored = register(await ws.objects.putFile(file));
    const storeMs = performance.now() - storeStarted;

    const request = { runId, importer, fileName, bounds, lease, onPublish };
    const extraction = stored
      ? await extractStoredArtifact(ws, { ...request, artifactId: stored.id })
      : await extractWhileStoring(ws, { ...request, file, stored: artifact().then((a) => a.id), publishAs: parsedArtifact });
    const timings = { store: storeMs, parse: extraction.phases?.parse ?? 0, totals: extraction.phases?.totals ?? 0, write: extraction.phases?.write ?? 0, total: performance.now() - started };
    const timings_ms = Object.fromEntries(Object.entries(timings).map(([phase, ms]) => [phase, Math.round(ms)])) as ImportResult["timings_ms"];
    return {
      run_id: runId,
      artifact_id: (await artifact()).id,
      generation_id: extraction.generation_id,
      commit_id: extraction.commit_id,
      format: importer.id,
      rows: rowsOf(ws, extraction.generation_id),
      limitations: extraction.limitations,
      reused_generation: extraction.reused,
      timings_ms,
    };
  } catch (error) {
    // The native artifact is kept with the failed run, whatever the extraction made of it.
    let failure: EmberscopeError;
    try {
      failure = extractionFailure(error, importer.id, runId, (await artifact()).id);
    } catch (storeError) {
      const stopped = error instanceof EmberscopeError && (error.code === "CANCELLED" || error.code === "INTERRUPTED");
      failure = stopped ? error : storeError instanceof EmberscopeError ? storeError : new EmberscopeError("INTERNAL_ERROR", "The artifact could not be stored.", { cause: storeError, details: { run_id: runId } });
    }
    const state = failure.code === "CANCELLED" ? "cancelled" : "failed";
    const doc = failure.toDocument();
    writeTransaction(ws.db, () => {
      patchRun(ws.db, runId, (run) => ({ status: state, extraction_state: state, details: { ...run.details, error: doc } }));
      lease.finish({ state, error: doc });
    });
    throw failure;
  }
}
