import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import type { Commit, Generation, GenerationFile, Limitation, PinnedCommit } from "../domain/models";
import { writeTransaction, type SqliteDatabase } from "./control-store";
import type { ObjectId } from "./object-store";
import type { Workspace } from "./workspace";

/** The commit id a reader names: a concrete id or "HEAD" (the latest commit). */
export type CommitRef = string;

interface CommitRow {
  id: string;
  seq: number;
  parent_id: string | null;
  message: string;
  created_at: string;
  generation_count: number;
}

const COMMIT_COLUMNS = `c.id, c.seq, c.parent_id, c.message, c.created_at,
  (SELECT count(*) FROM commit_generations cg WHERE cg.commit_id = c.id) AS generation_count`;

export function commitFromRow(row: CommitRow): Commit {
  return {
    commit_id: row.id,
    seq: row.seq,
    parent_id: row.parent_id,
    message: row.message,
    generation_count: row.generation_count,
    created_at: row.created_at,
  };
}

/** The id of the latest commit. */
function headCommitId(db: SqliteDatabase): string {
  const row = db.prepare("SELECT id FROM commits ORDER BY seq DESC LIMIT 1").get() as { id: string } | undefined;
  if (!row) throw new EmberscopeError("WORKSPACE_INVALID", "The workspace has no root commit.");
  return row.id;
}

export function headCommit(db: SqliteDatabase): Commit {
  return getCommit(db, headCommitId(db));
}

export function getCommit(db: SqliteDatabase, ref: CommitRef): Commit {
  if (ref === "HEAD") return headCommit(db);
  const row = db.prepare(`SELECT ${COMMIT_COLUMNS} FROM commits c WHERE c.id = ?`).get(ref) as CommitRow | undefined;
  if (!row) {
    throw new EmberscopeError("COMMIT_NOT_FOUND", "No corpus commit has that id.", {
      details: { commit_id: ref },
      recovery: { operation: "commits.list", arguments: {}, safe_to_repeat: true },
    });
  }
  return commitFromRow(row);
}

/** Commits newest first; with `runId`, only those that hold some generation of that run's artifacts. */
export function listCommitRows(db: SqliteDatabase, beforeSeq: number | null, limit: number, runId: string | null = null): Commit[] {
  const rows = db
    .prepare(
      `SELECT ${COMMIT_COLUMNS} FROM commits c WHERE (? IS NULL OR c.seq < ?)
         AND (? IS NULL OR EXISTS (SELECT 1 FROM commit_generations cg JOIN generations g ON g.id = cg.generation_id
                                     JOIN registrations r ON r.artifact_id = g.artifact_id
                                   WHERE cg.commit_id = c.id AND r.run_id = ?))
       ORDER BY c.seq DESC LIMIT ?`,
    )
    .all(beforeSeq, beforeSeq, runId, runId, limit) as CommitRow[];
  return rows.map(commitFromRow);
}

interface GenerationRow {
  id: string;
  artifact_id: string;
  run_id: string | null;
  extractor: string;
  extractor_version: string;
  evidence_schema_version: number;
  created_at: string;
}

function generationsWithFiles(db: SqliteDatabase, rows: GenerationRow[]): Generation[] {
  const files = db.prepare(
    "SELECT table_name, object_id, size_bytes, row_count FROM generation_files WHERE generation_id = ? ORDER BY table_name",
  );
  return rows.map((row) => ({
    generation_id: row.id,
    artifact_id: row.artifact_id,
    run_id: row.run_id,
    extractor: row.extractor,
    extractor_version: row.extractor_version,
    evidence_schema_version: row.evidence_schema_version,
    created_at: row.created_at,
    files: (files.all(row.id) as { table_name: string; object_id: string; size_bytes: number; row_count: number }[]).map(
      (f) => ({ table: f.table_name, object_id: f.object_id, size_bytes: f.size_bytes, row_count: f.row_count }),
    ),
  }));
}

/**
 * Pinned commits per connection, by commit id. A commit never changes once written (no code
 * updates or deletes commits or generations), so an entry is exact for as long as its connection
 * lives; "HEAD" is resolved to an id on every call, so a new commit is seen at once. Entries are
 * frozen: callers share them read-only.
 */
const pinnedByConnection = new WeakMap<SqliteDatabase, Map<string, PinnedCommit>>();
const MAX_PINNED_PER_CONNECTION = 64;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}


/**
 * Pins one commit: exactly the generations (and their files) visible in it. Readers call this
 * once before their first lookup and use nothing else, so later publishes never change their view.
 * The result is shared and frozen: read it, never change it.
 */
export function pin(db: SqliteDatabase, ref: CommitRef): PinnedCommit {
  const id = ref === "HEAD" ? headCommitId(db) : ref;
  let pinned = pinnedByConnection.get(db);
  const kept = pinned?.get(id);
  if (kept) return kept;
  const read = db.transaction(() => {
    const commit = getCommit(db, id);
    const rows = db
      .prepare(
        `SELECT g.* FROM generations g JOIN commit_generations cg ON cg.generation_id = g.id
         WHERE cg.commit_id = ? ORDER BY g.created_at, g.id`,
      )
      .all(commit.commit_id) as GenerationRow[];
    return { ...commit, generations: generationsWithFiles(db, rows) };
  });
  const commit = deepFreeze(read.deferred());
  // Inside a caller's open transaction the commit could still be rolled back: not kept.
  if (db.inTransaction) return commit;
  if (!pinned) pinnedByConnection.set(db, (pinned = new Map()));
  if (pinned.size >= MAX_PINNED_PER_CONNECTION) pinned.delete(pinned.keys().next().value!);
  pinned.set(id, commit);
  return commit;
}

export interface GenerationDraft {
  /** The id the generation's files were written under (they carry it); new if omitted. */
  generationId?: string;
  artifactId: ObjectId;
  runId: string | null;
  extractor: string;
  extractorVersion: string;
  evidenceSchemaVersion: number;
  /** Files already written to the object store. */
  files: GenerationFile[];
  limitations?: Limitation[];
  /** The importer's metadata (EvidenceSummary.metadata): short strings by key. */
  metadata?: Record<string, string>;
  message?: string;
}

export interface Published {
  generation_id: string;
  commit_id: string;
  /** False when the same artifact × extractor version was already published and visible. */
  created: boolean;
}

/**
 * Publishes one generation as a new commit whose parent is HEAD, in one transaction.
 * Object files must already be in the object store: a crash before the commit leaves only
 * unreachable objects (gc collects them), never a commit naming missing bytes.
 */
export function publishGeneration(ws: Workspace, draft: GenerationDraft): Published {
  const { db } = ws;
  return writeTransaction(db, () => {
    const existing = db
      .prepare("SELECT id FROM generations WHERE artifact_id = ? AND extractor = ? AND extractor_version = ?")
      .get(draft.artifactId, draft.extractor, draft.extractorVersion) as { id: string } | undefined;
    const head = headCommit(db);
    if (existing) {
      const visible = db
        .prepare("SELECT 1 FROM commit_generations WHERE commit_id = ? AND generation_id = ?")
        .get(head.commit_id, existing.id);
      if (visible) return { generation_id: existing.id, commit_id: head.commit_id, created: false };
    }
    const now = nowIso();
    const generationId = existing?.id ?? draft.generationId ?? newId("gen");
    if (!existing) {
      db.prepare(
        `INSERT INTO generations (id, artifact_id, run_id, extractor, extractor_version, evidence_schema_version, limitations, metadata, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        generationId,
        draft.artifactId,
        draft.runId,
        draft.extractor,
        draft.extractorVersion,
        draft.evidenceSchemaVersion,
        JSON.stringify(draft.limitations ?? []),
        JSON.stringify(draft.metadata ?? {}),
        now,
      );
      const insertFile = db.prepare(
        "INSERT INTO generation_files (generation_id, table_name, object_id, size_bytes, row_count) VALUES (?, ?, ?, ?, ?)",
      );
      for (const file of draft.files) {
        insertFile.run(generationId, file.table, file.object_id, file.size_bytes, file.row_count);
      }
    }
    const commitId = newId("cmt");
    db.prepare("INSERT INTO commits (id, seq, parent_id, message, created_at) VALUES (?, ?, ?, ?, ?)").run(
      commitId,
      head.seq + 1,
      head.commit_id,
      draft.message ?? `publish ${draft.extractor} generation of ${draft.artifactId.slice(0, 19)}`,
      now,
    );
    db.prepare(
      `INSERT INTO commit_generations (commit_id, generation_id)
       SELECT ?, generation_id FROM commit_generations WHERE commit_id = ?
       UNION SELECT ?, ?`,
    ).run(commitId, head.commit_id, commitId, generationId);
    return { generation_id: generationId, commit_id: commitId, created: true };
  });
}
