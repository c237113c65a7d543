import { EvidenceBuilder, type EvidenceSummary } from "../../analysis/evidence/builder";
import { EVIDENCE_SCHEMA_VERSION } from "../../analysis/evidence/schema";
import { newId } from "../domain/ids";
import { publishGeneration, type Published } from "../store/corpus";
import type { ObjectId } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { ParquetGenerationWriter } from "./parquet-writer";

export interface ExtractionRequest {
  artifactId: ObjectId;
  runId: string | null;
  extractor: string;
  extractorVersion: string;
  message?: string;
  /** Fills the builder (an importer's parse, or a capture adapter's collector). */
  produce: (builder: EvidenceBuilder) => Promise<void>;
}

export interface Extraction extends Published {
  summary: EvidenceSummary;
}

/** An existing generation of the same artifact by the same extractor version, if any. */
export function existingGeneration(ws: Workspace, artifactId: string, extractor: string, extractorVersion: string): string | null {
  const row = ws.db
    .prepare("SELECT id FROM generations WHERE artifact_id = ? AND extractor = ? AND extractor_version = ?")
    .get(artifactId, extractor, extractorVersion) as { id: string } | undefined;
  return row?.id ?? null;
}

/**
 * Normalizes evidence into Parquet files in the object store, then publishes them as one
 * generation and a new commit. If `produce` throws, nothing is published (staging is removed).
 */
export async function extractAndPublish(ws: Workspace, request: ExtractionRequest): Promise<Extraction> {
  const generationId = newId("gen");
  const writer = await ParquetGenerationWriter.open(ws, generationId);
  let summary: EvidenceSummary;
  let files;
  try {
    const builder = new EvidenceBuilder(writer);
    await request.produce(builder);
    summary = await builder.finish();
    files = await writer.finish();
  } catch (error) {
    await writer.close();
    throw error;
  }
  const published = publishGeneration(ws, {
    generationId,
    artifactId: request.artifactId,
    runId: request.runId,
    extractor: request.extractor,
    extractorVersion: request.extractorVersion,
    evidenceSchemaVersion: EVIDENCE_SCHEMA_VERSION,
    files,
    limitations: summary.limitations.map((l) => ({ code: l.code, message: l.count > 1 ? `${l.message} (${l.count}×)` : l.message })),
    message: request.message,
  });
  return { ...published, summary };
}
