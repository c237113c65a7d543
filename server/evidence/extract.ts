import { EvidenceBuilder, type EvidenceSummary } from "../../analysis/evidence/builder";
import { EmptyEvidenceError, EvidenceParseError, InputBoundError, UnsupportedVersionError } from "../../analysis/formats/errors";
import { parseEvidence } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS, type FormatImporter } from "../../analysis/formats/types";
import { EmberscopeError } from "../domain/errors";
import type { Limitation } from "../domain/models";
import { writeTransaction } from "../store/control-store";
import { claimForOperation } from "../store/operations";
import { decompressedChunks, expectedInputBytes, type InputBounds } from "./input";
import { EVIDENCE_SCHEMA_VERSION } from "../../analysis/evidence/schema";
import { newId } from "../domain/ids";
import { publishGeneration, type Published } from "../store/corpus";
import type { ObjectId } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { ParquetGenerationWriter } from "./parquet-writer";
import { splittableFile } from "./range-thread";
import { ThreadedGenerationWriter } from "./writer-thread";

/**
 * What an extraction needs of the operation it runs under (an import's lease: LeasedOperation in
 * server/services/operations.ts): its cancel or lost lease, progress, and the claim that lets one
 * operation at a time extract an artifact with an extractor version.
 */
export interface ExtractionLease {
  readonly operationId: string;
  /** Aborted (its reason a typed error) on a cancel or a lost lease. */
  readonly signal: AbortSignal;
  /** Throws unless the lease is still held: called inside the publishing transaction. */
  assertHeld(): void;
  phase(name: string, completed?: number | null, total?: number | null): void;
  progress(completed: number, total: number | null): void;
  /** Resolves once no live operation holds `claim`. */
  waitForClaim(claim: string): Promise<void>;
}

/** A published generation as an extraction reports it. */
export interface PublishedEvidence {
  generation_id: string;
  commit_id: string;
  limitations: Limitation[];
  /** True when the generation is one made before (the same bytes by the same extractor version). */
  reused: boolean;
}

export interface ExtractionRequest {
  /** The artifact, or how to get its id once the input is read (a staged file hashed meanwhile). */
  artifactId: ObjectId | (() => Promise<ObjectId>);
  runId: string | null;
  extractor: string;
  extractorVersion: string;
  message?: string;
  /** Fills the builder (an importer's parse, or a capture adapter's collector). */
  produce: (builder: EvidenceBuilder) => Promise<void>;
  /** Bytes the producer will read, when known: large inputs get the writer on its own thread. */
  inputBytes?: number;
  /** Nothing is published once this is aborted (the producer's reads stop at it too). */
  signal?: AbortSignal;
  /** Checked inside the publishing transaction: a lease lost meanwhile publishes nothing. */
  lease?: ExtractionLease;
  /** Runs inside the publishing transaction, so that what the caller records commits with it (a run's end). */
  onPublish?: (published: PublishedEvidence) => void;
}

/**
 * From this input size the Parquet writer runs on its own thread. Starting the thread costs about
 * a second (a fresh isolate loads the bundle's thread entry and DuckDB), which smaller inputs would not win back.
 */
export const THREADED_WRITER_FROM_BYTES = 16 * 1024 * 1024;

/** Milliseconds per extraction phase: parse and build, derived totals, Parquet files written. */
export interface ExtractionPhases {
  parse: number;
  totals: number;
  write: number;
}

export interface Extraction extends Published {
  summary: EvidenceSummary;
  phases: ExtractionPhases;
  /** True when another extraction of the same bytes published first, and its generation was kept. */
  reused: boolean;
}

/**
 * The version recorded for a generation: the extractor's own version and the evidence schema it
 * wrote, so that a schema change re-extracts instead of reusing files of the older shape.
 */
export function extractorVersion(version: string): string {
  return `${version}+schema${EVIDENCE_SCHEMA_VERSION}`;
}

/** An existing generation of the same artifact by the same extractor version, if any. */
export function existingGeneration(ws: Workspace, artifactId: string, extractor: string, version: string): string | null {
  const row = ws.db
    .prepare("SELECT id FROM generations WHERE artifact_id = ? AND extractor = ? AND extractor_version = ?")
    .get(artifactId, extractor, version) as { id: string } | undefined;
  return row?.id ?? null;
}

/**
 * Normalizes evidence into Parquet files in the object store, then publishes them as one
 * generation and a new commit. If `produce` throws, nothing is published (staging is removed).
 */
export async function extractAndPublish(ws: Workspace, request: ExtractionRequest): Promise<Extraction> {
  const version = extractorVersion(request.extractorVersion);
  const generationId = newId("gen");
  const threaded = (request.inputBytes ?? 0) >= THREADED_WRITER_FROM_BYTES;
  const writer = threaded ? ThreadedGenerationWriter.open(ws, generationId) : await ParquetGenerationWriter.open(ws, generationId);
  let summary: EvidenceSummary;
  let files;
  const phases: ExtractionPhases = { parse: 0, totals: 0, write: 0 };
  try {
    const builder = new EvidenceBuilder(writer, undefined, request.extractor);
    let mark = performance.now();
    const lap = (phase: keyof ExtractionPhases) => {
      const now = performance.now();
      phases[phase] = now - mark;
      mark = now;
    };
    await request.produce(builder);
    lap("parse");
    request.lease?.phase("totals");
    summary = await builder.finish();
    lap("totals");
    request.lease?.phase("writing");
    files = await writer.finish();
    lap("write");
  } catch (error) {
    await writer.close();
    throw error;
  }
  request.signal?.throwIfAborted();
  request.lease?.phase("publishing");
  const artifactId = typeof request.artifactId === "function" ? await request.artifactId() : request.artifactId;
  const limitations = limitationsOf(summary);
  const published = writeTransaction(ws.db, () => {
    request.lease?.assertHeld();
    const made = publishGeneration(ws, {
      generationId,
      artifactId,
      runId: request.runId,
      extractor: request.extractor,
      extractorVersion: version,
      evidenceSchemaVersion: EVIDENCE_SCHEMA_VERSION,
      files,
      limitations,
      metadata: summary.metadata,
      message: request.message,
    });
    // Without a claim, another extraction of the same bytes may have published first: its generation stands.
    request.onPublish?.({ generation_id: made.generation_id, commit_id: made.commit_id, limitations, reused: made.generation_id !== generationId });
    return made;
  });
  return { ...published, summary, phases, reused: published.generation_id !== generationId };
}

export function limitationsOf(summary: EvidenceSummary): Limitation[] {
  return summary.limitations.map((l) => ({ code: l.code, message: l.count > 1 ? `${l.message} (${l.count}×)` : l.message }));
}

export interface StoredExtraction extends PublishedEvidence {
  /** Null when reused. */
  phases: ExtractionPhases | null;
}

/** What extracting an artifact with a format importer takes. */
export interface ArtifactExtraction {
  runId: string;
  importer: FormatImporter;
  fileName: string;
  bounds: InputBounds;
  /** The operation the extraction runs under: with one, a single live operation extracts the same bytes at a time (the others wait and reuse its generation). */
  lease?: ExtractionLease;
  onPublish?: (published: PublishedEvidence) => void;
}

/** The claim one live operation holds while it extracts an artifact with one importer version. */
export function extractionClaim(artifactId: ObjectId, importer: FormatImporter): string {
  return `extract ${importer.id} ${extractorVersion(importer.version)} ${artifactId}`;
}

/** Publishes the generation this importer version already made of the artifact, for this run. */
function publishReused(ws: Workspace, request: ArtifactExtraction & { artifactId: ObjectId }, generationId: string): StoredExtraction {
  const { importer } = request;
  return writeTransaction(ws.db, () => {
    request.lease?.assertHeld();
    const published = publishGeneration(ws, { artifactId: request.artifactId, runId: request.runId, extractor: importer.id, extractorVersion: extractorVersion(importer.version), evidenceSchemaVersion: EVIDENCE_SCHEMA_VERSION, files: [] });
    const row = ws.db.prepare("SELECT limitations FROM generations WHERE id = ?").get(generationId) as { limitations: string };
    const outcome: PublishedEvidence = { generation_id: generationId, commit_id: published.commit_id, limitations: JSON.parse(row.limitations) as Limitation[], reused: true };
    request.onPublish?.(outcome);
    return { ...outcome, phases: null };
  });
}

/**
 * Extracts a stored artifact with a format importer and publishes it — or reuses the generation
 * this importer version already made of the same bytes (re-extraction is idempotent). Under a
 * lease, the extraction is claimed first: while another live operation extracts the same bytes,
 * this one waits for it, then reuses its generation (or, should it have failed, extracts itself).
 */
export async function extractStoredArtifact(ws: Workspace, request: ArtifactExtraction & { artifactId: ObjectId }): Promise<StoredExtraction> {
  const { importer, lease } = request;
  const version = extractorVersion(importer.version);
  const made = () => existingGeneration(ws, request.artifactId, importer.id, version);
  for (;;) {
    const claim = lease ? claimForOperation(ws.db, lease.operationId, extractionClaim(request.artifactId, importer), () => made() !== null) : made() ? "done" : "claimed";
    if (claim === "done") return publishReused(ws, request, made()!);
    if (claim === "claimed") return extractArtifactFile(ws, { ...request, file: ws.objects.pathOf(request.artifactId) });
    await lease!.waitForClaim(extractionClaim(request.artifactId, importer));
  }
}

/**
 * Extracts a large input while its copy is stored: the parse reads `file` from the start, and once
 * the copy is hashed (`stored`) the extraction is claimed. Should another live operation hold the
 * claim, or the generation exist already, the parse stops and the stored artifact's generation is
 * waited for and reused instead. `publishAs` gives the artifact id to publish under (it may check
 * the file did not change while it was read).
 */
export async function extractWhileStoring(
  ws: Workspace,
  request: ArtifactExtraction & { file: string; stored: Promise<ObjectId>; publishAs: () => Promise<ObjectId> },
): Promise<StoredExtraction> {
  const { importer, lease } = request;
  if (!lease) return extractArtifactFile(ws, { ...request, artifactId: request.publishAs });
  const attempt = new AbortController();
  const stopAttempt = () => attempt.abort(lease.signal.reason);
  if (lease.signal.aborted) stopAttempt();
  else lease.signal.addEventListener("abort", stopAttempt, { once: true });
  try {
    const parse = extractArtifactFile(ws, { ...request, artifactId: request.publishAs, signal: attempt.signal });
    parse.catch(() => undefined);
    let artifactId: ObjectId;
    try {
      artifactId = await request.stored;
    } catch (error) {
      attempt.abort(error);
      await parse.catch(() => undefined);
      throw error;
    }
    const version = extractorVersion(importer.version);
    const claim = claimForOperation(ws.db, lease.operationId, extractionClaim(artifactId, importer), () => existingGeneration(ws, artifactId, importer.id, version) !== null);
    if (claim === "claimed") return await parse;
    // Another operation has made, or is making, this generation: this parse is not needed.
    attempt.abort(new EmberscopeError("CANCELLED", "Another operation is extracting the same bytes."));
    await parse.catch(() => undefined);
    lease.signal.throwIfAborted();
    return await extractStoredArtifact(ws, { ...request, artifactId });
  } finally {
    lease.signal.removeEventListener("abort", stopAttempt);
  }
}

/** The input's chunks, stopping at `signal` and counting what was read for the lease's progress. */
async function* watchedChunks(chunks: AsyncIterable<Uint8Array>, signal: AbortSignal | undefined, lease: ExtractionLease | undefined, total: number): AsyncGenerator<Uint8Array> {
  let read = 0;
  for await (const chunk of chunks) {
    signal?.throwIfAborted();
    read += chunk.length;
    lease?.progress(Math.min(read, total), total);
    yield chunk;
  }
}

/**
 * Extracts an artifact's bytes read from `file` and publishes the generation. The artifact id may
 * come only once the file is read: a large import parses its staged copy while it is hashed. Should
 * the same bytes have been extracted meanwhile, publishing keeps that generation.
 */
export async function extractArtifactFile(
  ws: Workspace,
  request: ArtifactExtraction & { file: string; artifactId: ObjectId | (() => Promise<ObjectId>); signal?: AbortSignal },
): Promise<StoredExtraction> {
  const { importer, lease } = request;
  const signal = request.signal ?? lease?.signal;
  // A plain file's ranges can be parsed on another thread (importers that split large inputs use it).
  const split = (await splittableFile(request.file)) ?? undefined;
  const inputBytes = await expectedInputBytes(request.file);
  lease?.phase("parsing", 0, inputBytes);
  const extraction = await extractAndPublish(ws, {
    artifactId: request.artifactId,
    runId: request.runId,
    extractor: importer.id,
    extractorVersion: importer.version,
    message: `extract ${importer.id} ${request.fileName}`,
    inputBytes,
    signal,
    lease,
    onPublish: request.onPublish,
    produce: (builder) =>
      parseEvidence(importer, {
        source: { fileName: request.fileName, chunks: (options) => watchedChunks(decompressedChunks(request.file, request.bounds, options?.reuse), signal, lease, inputBytes) },
        builder,
        limits: DEFAULT_IMPORT_LIMITS,
        split,
      }),
  });
  return { generation_id: extraction.generation_id, commit_id: extraction.commit_id, limitations: limitationsOf(extraction.summary), reused: extraction.reused, phases: extraction.phases };
}

/**
 * Whether some artifact of this size already has a generation by this importer version: only then
 * can identical bytes' generation be reused, and an import hashes before parsing to find out.
 */
export function mayReuseGeneration(ws: Workspace, sizeBytes: number, importer: FormatImporter): boolean {
  const row = ws.db
    .prepare("SELECT 1 FROM generations g JOIN artifacts a ON a.id = g.artifact_id WHERE a.size_bytes = ? AND g.extractor = ? AND g.extractor_version = ? LIMIT 1")
    .get(sizeBytes, importer.id, extractorVersion(importer.version));
  return row !== undefined;
}

/** The typed error for a failed extraction; the run keeps the reason. */
export function extractionFailure(error: unknown, format: string, runId: string, artifactId: string): EmberscopeError {
  if (error instanceof UnsupportedVersionError) {
    return new EmberscopeError("UNSUPPORTED_FORMAT_VERSION", `The ${error.format} file is version ${error.version}, which Emberscope does not read (it reads ${error.supported}): ${error.reason}.`, {
      details: { format: error.format, version: error.version, supported: error.supported, offset: error.at.offset ?? null, reason: error.reason, run_id: runId, artifact_id: artifactId },
    });
  }
  if (error instanceof EvidenceParseError) {
    return new EmberscopeError("ARTIFACT_PARSE_FAILED", `The ${error.format} input is malformed: ${error.reason}.`, {
      details: { format: error.format, offset: error.at.offset ?? null, line: error.at.line ?? null, ...(error.at.field ? { field: error.at.field } : {}), reason: error.reason, run_id: runId, artifact_id: artifactId },
    });
  }
  if (error instanceof EmptyEvidenceError) {
    const skipped = error.skipped.map((l) => ({ code: l.code, message: l.message, count: l.count }));
    const why = skipped.length > 0 ? ` What the importer passed over: ${skipped.map((l) => (l.count > 1 ? `${l.message} (${l.count}×)` : l.message)).join(" ")}` : "";
    return new EmberscopeError("ARTIFACT_EMPTY", `The ${error.format} input was read, but it holds no samples, spans or measurements: there is nothing to show, so the run failed instead of succeeding empty.${why}`, {
      details: { format: error.format, reason: "no samples, spans or measurements", skipped, run_id: runId, artifact_id: artifactId },
    });
  }
  if (error instanceof InputBoundError) {
    return new EmberscopeError("ARTIFACT_TOO_LARGE", error.message, {
      details: { bound: error.bound, limit: error.limit, format, run_id: runId, artifact_id: artifactId },
    });
  }
  return error instanceof EmberscopeError ? error : new EmberscopeError("INTERNAL_ERROR", "Extraction failed unexpectedly.", { cause: error, details: { run_id: runId } });
}

