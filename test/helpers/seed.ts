import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import type { Run } from "../../server/domain/models";
import { extractAndPublish, type Extraction } from "../../server/evidence/extract";
import { registerArtifact } from "../../server/store/artifacts";
import { publishGeneration, type Published } from "../../server/store/corpus";
import type { ObjectId } from "../../server/store/object-store";
import { writeTransaction } from "../../server/store/control-store";
import { createRun, updateRun, type RunDraft } from "../../server/store/runs";
import type { Workspace } from "../../server/store/workspace";

export interface SeededImport {
  run: Run;
  artifactId: ObjectId;
  published: Published;
  fileObjectIds: ObjectId[];
}

/**
 * Records an import the way the import service will: stores the native bytes, registers them
 * for a new run, stores the generation's files and publishes them as one commit.
 */
export async function seedImport(ws: Workspace, options: { title: string; native: string; tables?: Record<string, string> }): Promise<SeededImport> {
  const run = createRun(ws.db, { kind: "import", source: "folded", title: options.title, status: "running", extraction_state: "running" });
  const stored = await ws.objects.put(Buffer.from(options.native));
  registerArtifact(ws.db, stored, { runId: run.run_id, kind: "native", producer: "test", mediaType: "text/plain", format: "folded", sensitivity: "normal" });
  const files = [];
  for (const [table, content] of Object.entries(options.tables ?? { samples: `samples of ${options.native}`, frames: `frames of ${options.native}` })) {
    const object = await ws.objects.put(Buffer.from(content));
    files.push({ table, object_id: object.id, size_bytes: object.size, row_count: content.length });
  }
  const published = publishGeneration(ws, {
    artifactId: stored.id,
    runId: run.run_id,
    extractor: "test-extractor",
    extractorVersion: "1",
    evidenceSchemaVersion: 1,
    files,
  });
  const done = updateRun(ws.db, run.run_id, run.revision, { status: "succeeded", extraction_state: "succeeded" });
  return { run: done, artifactId: stored.id, published, fileObjectIds: files.map((f) => f.object_id as ObjectId) };
}

/** Publishes evidence a test builds by hand (real Parquet files, a real commit) for a new run. */
export async function publishEvidence(ws: Workspace, label: string, produce: (b: EvidenceBuilder) => void): Promise<Extraction & { run_id: string }> {
  const run = createRun(ws.db, { kind: "import", source: "test", title: label });
  const stored = await ws.objects.put(Buffer.from(label));
  registerArtifact(ws.db, stored, { runId: run.run_id, kind: "native", producer: "test", mediaType: "text/plain", sensitivity: "normal" });
  const published = await extractAndPublish(ws, { artifactId: stored.id, runId: run.run_id, extractor: "test", extractorVersion: "1", produce: async (b) => produce(b) });
  return { ...published, run_id: run.run_id };
}

/**
 * Many runs at once, through the run store (no files, no evidence): the i-th draft comes from
 * `draft(i)`. One transaction, so 10 k take well under a second.
 */
export function seedRuns(ws: Workspace, count: number, draft: (i: number) => RunDraft): Run[] {
  return writeTransaction(ws.db, () => Array.from({ length: count }, (_, i) => createRun(ws.db, draft(i))));
}
