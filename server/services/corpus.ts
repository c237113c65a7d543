import { createReadStream, promises as fsp } from "node:fs";
import type { Readable } from "node:stream";
import { z } from "zod";
import { TABLE_NAMES } from "../../analysis/evidence/schema";
import { EmberscopeError } from "../domain/errors";
import type { PinnedCommit } from "../domain/models";
import { pin } from "../store/corpus";
import type { ObjectId } from "../store/object-store";
import { getRun } from "../store/runs";
import { openWorkspace, type Workspace } from "../store/workspace";
import { defineService, type ServiceContext } from "./service";

/** Where the browser fetches an evidence file: immutable, by content hash (see app/api/corpus). */
export function corpusObjectUrl(objectId: string): string {
  return `/api/corpus/objects/sha256/${objectId.slice("sha256:".length)}`;
}

const CorpusFile = z.object({
  table: z.string(),
  generation_id: z.string(),
  object_id: z.string(),
  url: z.string(),
  size_bytes: z.number().int(),
  row_count: z.number().int(),
});

/** The generations of a run that are visible in a pinned commit (a run's artifacts may be shared). */
export function runGenerationIds(ws: Workspace, commit: PinnedCommit, runId: string): string[] {
  getRun(ws.db, runId);
  const visible = new Set(commit.generations.map((g) => g.generation_id));
  const rows = ws.db
    .prepare(`SELECT DISTINCT g.id FROM generations g JOIN registrations r ON r.artifact_id = g.artifact_id WHERE r.run_id = ? ORDER BY g.id`)
    .all(runId) as { id: string }[];
  return rows.map((r) => r.id).filter((id) => visible.has(id));
}

/** A run whose evidence a commit holds: one row per (run, visible generation), with the run's title. */
export const CommitRun = z.object({
  run_id: z.string(),
  title: z.string(),
  kind: z.string(),
  source: z.string(),
  status: z.string(),
  created_at: z.string(),
  generation_id: z.string(),
});
export type CommitRun = z.infer<typeof CommitRun>;

/** The runs of a pinned commit's generations (a generation's artifact may be registered by several runs), oldest first. */
export function commitRuns(ws: Workspace, commit: PinnedCommit): CommitRun[] {
  const visible = new Set(commit.generations.map((g) => g.generation_id));
  const rows = ws.db
    .prepare(
      `SELECT DISTINCT r.id AS run_id, r.title, r.kind, r.source, r.status, r.created_at, g.id AS generation_id
       FROM generations g JOIN registrations reg ON reg.artifact_id = g.artifact_id JOIN runs r ON r.id = reg.run_id
       ORDER BY r.created_at, r.id, g.id`,
    )
    .all() as CommitRun[];
  return rows.filter((r) => visible.has(r.generation_id));
}

export const listCorpusFiles = defineService({
  name: "corpus.files",
  summary: "The Parquet files of a pinned commit per evidence table, with their content-addressed URLs (for DuckDB-WASM).",
  kind: "query",
  input: z
    .object({
      commit_id: z.string().min(1).max(128).default("HEAD").describe('The commit to read; "HEAD" by default.'),
      run_id: z.string().min(1).max(128).optional().describe("Also name this run's generations in the commit."),
    })
    .strict(),
  output: z.object({
    commit_id: z.string(),
    seq: z.number().int(),
    tables: z.array(z.string()).describe("Every evidence table, including those with no file in this commit."),
    files: z.array(CorpusFile),
    generations: z.array(z.object({ generation_id: z.string(), run_id: z.string().nullable(), extractor: z.string() })),
    run_generations: z.array(z.string()).nullable(),
    runs: z.array(CommitRun).describe("The runs whose evidence the commit holds, with their titles: the SQL console's `runs` table."),
  }),
  handler: (input, { ws }) => {
    const commit = pin(ws.db, input.commit_id);
    const files = commit.generations.flatMap((g) =>
      g.files
        .filter((f) => (TABLE_NAMES as string[]).includes(f.table))
        .map((f) => ({ table: f.table, generation_id: g.generation_id, object_id: f.object_id, url: corpusObjectUrl(f.object_id), size_bytes: f.size_bytes, row_count: f.row_count })),
    );
    return {
      commit_id: commit.commit_id,
      seq: commit.seq,
      tables: [...TABLE_NAMES],
      files,
      generations: commit.generations.map((g) => ({ generation_id: g.generation_id, run_id: g.run_id, extractor: g.extractor })),
      run_generations: input.run_id ? runGenerationIds(ws, commit, input.run_id) : null,
      runs: commitRuns(ws, commit),
    };
  },
});

export interface CorpusObject {
  size: number;
  /** Reads [start, end] inclusive. */
  open(start: number, end: number): Readable;
}

/**
 * The bytes of one evidence file by content hash, for the browser's range requests. Only files
 * that some generation lists are served (native artifacts stay private to the server).
 */
export async function readCorpusObject(ctx: ServiceContext, hex: string): Promise<CorpusObject> {
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new EmberscopeError("INVALID_ARGUMENTS", "Not a sha256 content hash (64 lowercase hex digits).", { details: { argument: "hex" } });
  }
  const id = `sha256:${hex}` as ObjectId;
  const ws = openWorkspace(ctx.locator, { readonly: true });
  try {
    const listed = ws.db.prepare("SELECT 1 FROM generation_files WHERE object_id = ? LIMIT 1").get(id);
    if (!listed) throw new EmberscopeError("ARTIFACT_NOT_FOUND", "No evidence file has that content hash.", { details: { object_id: id } });
    const file = ws.objects.pathOf(id);
    const stat = await fsp.stat(file).catch(() => null);
    if (!stat) throw new EmberscopeError("ARTIFACT_NOT_FOUND", "The evidence file's bytes are missing; run validate.", { details: { object_id: id } });
    return { size: stat.size, open: (start, end) => createReadStream(file, { start, end }) };
  } finally {
    ws.close();
  }
}
