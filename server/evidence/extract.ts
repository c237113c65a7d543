import { EvidenceBuilder, type EvidenceSummary } from "../../analysis/evidence/builder";
import { EvidenceParseError, InputBoundError, UnsupportedVersionError } from "../../analysis/formats/errors";
import { DEFAULT_IMPORT_LIMITS, type FormatImporter } from "../../analysis/formats/types";
import { EmberscopeError } from "../domain/errors";
import type { Limitation } from "../domain/models";
import { headCommit } from "../store/corpus";
import { decompressedChunks, expectedInputBytes, type InputBounds } from "./input";
import { EVIDENCE_SCHEMA_VERSION } from "../../analysis/evidence/schema";
import { newId } from "../domain/ids";
import { publishGeneration, type Published } from "../store/corpus";
import type { ObjectId } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { ParquetGenerationWriter } from "./parquet-writer";
import { splittableFile } from "./range-thread";
import { ThreadedGenerationWriter } from "./writer-thread";

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
    const builder = new EvidenceBuilder(writer);
    let mark = performance.now();
    const lap = (phase: keyof ExtractionPhases) => {
      const now = performance.now();
      phases[phase] = now - mark;
      mark = now;
    };
    await request.produce(builder);
    lap("parse");
    summary = await builder.finish();
    lap("totals");
    files = await writer.finish();
    lap("write");
  } catch (error) {
    await writer.close();
    throw error;
  }
  const artifactId = typeof request.artifactId === "function" ? await request.artifactId() : request.artifactId;
  const published = publishGeneration(ws, {
    generationId,
    artifactId,
    runId: request.runId,
    extractor: request.extractor,
    extractorVersion: version,
    evidenceSchemaVersion: EVIDENCE_SCHEMA_VERSION,
    files,
    limitations: limitationsOf(summary),
    message: request.message,
  });
  return { ...published, summary, phases };
}

export function limitationsOf(summary: EvidenceSummary): Limitation[] {
  return summary.limitations.map((l) => ({ code: l.code, message: l.count > 1 ? `${l.message} (${l.count}×)` : l.message }));
}

export interface StoredExtraction {
  generation_id: string;
  commit_id: string;
  limitations: Limitation[];
  /** True when the same bytes were already extracted by this importer version. */
  reused: boolean;
  /** Null when reused. */
  phases: ExtractionPhases | null;
}

/**
 * Extracts a stored artifact with a format importer and publishes it — or reuses the generation
 * this importer version already made of the same bytes (re-extraction is idempotent).
 */
export async function extractStoredArtifact(
  ws: Workspace,
  request: { artifactId: ObjectId; runId: string; importer: FormatImporter; fileName: string; bounds: InputBounds },
): Promise<StoredExtraction> {
  const { importer } = request;
  const existing = existingGeneration(ws, request.artifactId, importer.id, extractorVersion(importer.version));
  if (existing) {
    const published = publishGeneration(ws, { artifactId: request.artifactId, runId: request.runId, extractor: importer.id, extractorVersion: extractorVersion(importer.version), evidenceSchemaVersion: EVIDENCE_SCHEMA_VERSION, files: [] });
    const row = ws.db.prepare("SELECT limitations FROM generations WHERE id = ?").get(existing) as { limitations: string };
    return { generation_id: existing, commit_id: published.created ? published.commit_id : headCommit(ws.db).commit_id, limitations: JSON.parse(row.limitations) as Limitation[], reused: true, phases: null };
  }
  return extractArtifactFile(ws, { ...request, file: ws.objects.pathOf(request.artifactId) });
}

/**
 * Extracts an artifact's bytes read from `file` and publishes the generation. The artifact id may
 * come only once the file is read: a large import parses its staged copy while it is hashed. Should
 * the same bytes have been extracted meanwhile, publishing keeps that generation.
 */
export async function extractArtifactFile(
  ws: Workspace,
  request: { file: string; artifactId: ObjectId | (() => Promise<ObjectId>); runId: string; importer: FormatImporter; fileName: string; bounds: InputBounds },
): Promise<StoredExtraction> {
  const { importer } = request;
  // A plain file's ranges can be parsed on another thread (importers that split large inputs use it).
  const split = (await splittableFile(request.file)) ?? undefined;
  const extraction = await extractAndPublish(ws, {
    artifactId: request.artifactId,
    runId: request.runId,
    extractor: importer.id,
    extractorVersion: importer.version,
    message: `extract ${importer.id} ${request.fileName}`,
    inputBytes: await expectedInputBytes(request.file),
    produce: (builder) =>
      importer.parse({
        source: { fileName: request.fileName, chunks: (options) => decompressedChunks(request.file, request.bounds, options?.reuse) },
        builder,
        limits: DEFAULT_IMPORT_LIMITS,
        split,
      }),
  });
  return { generation_id: extraction.generation_id, commit_id: extraction.commit_id, limitations: limitationsOf(extraction.summary), reused: false, phases: extraction.phases };
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
      details: { format: error.format, offset: error.at.offset ?? null, line: error.at.line ?? null, reason: error.reason, run_id: runId, artifact_id: artifactId },
    });
  }
  if (error instanceof InputBoundError) {
    return new EmberscopeError("ARTIFACT_TOO_LARGE", error.message, {
      details: { bound: error.bound, limit: error.limit, format, run_id: runId, artifact_id: artifactId },
    });
  }
  return error instanceof EmberscopeError ? error : new EmberscopeError("INTERNAL_ERROR", "Extraction failed unexpectedly.", { cause: error, details: { run_id: runId } });
}

