import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import type { Artifact, Registration, Sensitivity } from "../domain/models";
import { writeTransaction, type SqliteDatabase } from "./control-store";
import type { StoredObject } from "./object-store";

const SENSITIVITY_ORDER: Sensitivity[] = ["normal", "internal", "sensitive"];

export function highestSensitivity(values: Sensitivity[]): Sensitivity {
  return values.reduce<Sensitivity>(
    (max, s) => (SENSITIVITY_ORDER.indexOf(s) > SENSITIVITY_ORDER.indexOf(max) ? s : max),
    "normal",
  );
}

interface RegistrationRow {
  id: string;
  artifact_id: string;
  run_id: string;
  kind: string;
  producer: string;
  media_type: string;
  format: string | null;
  file_name: string | null;
  sensitivity: Sensitivity;
  created_at: string;
}

function registrationFromRow(row: RegistrationRow): Registration {
  return {
    registration_id: row.id,
    artifact_id: row.artifact_id,
    run_id: row.run_id,
    kind: row.kind,
    producer: row.producer,
    media_type: row.media_type,
    format: row.format,
    file_name: row.file_name,
    sensitivity: row.sensitivity,
    created_at: row.created_at,
  };
}

export interface RegistrationDraft {
  runId: string;
  kind: string;
  producer: string;
  mediaType: string;
  format?: string | null;
  fileName?: string | null;
  sensitivity: Sensitivity;
}

/**
 * Records stored bytes as an artifact (once per content) and registers them for a run.
 * Identical bytes registered again reuse the artifact row.
 */
export function registerArtifact(db: SqliteDatabase, stored: StoredObject, draft: RegistrationDraft): Registration {
  const now = nowIso();
  return writeTransaction(db, () => {
    db.prepare("INSERT OR IGNORE INTO artifacts (id, size_bytes, created_at) VALUES (?, ?, ?)").run(
      stored.id,
      stored.size,
      now,
    );
    const existing = db
      .prepare("SELECT * FROM registrations WHERE artifact_id = ? AND run_id = ? AND kind = ?")
      .get(stored.id, draft.runId, draft.kind) as RegistrationRow | undefined;
    if (existing) return registrationFromRow(existing);
    const row: RegistrationRow = {
      id: newId("reg"),
      artifact_id: stored.id,
      run_id: draft.runId,
      kind: draft.kind,
      producer: draft.producer,
      media_type: draft.mediaType,
      format: draft.format ?? null,
      file_name: draft.fileName ?? null,
      sensitivity: draft.sensitivity,
      created_at: now,
    };
    db.prepare(
      `INSERT INTO registrations (id, artifact_id, run_id, kind, producer, media_type, format, file_name, sensitivity, created_at)
       VALUES (@id, @artifact_id, @run_id, @kind, @producer, @media_type, @format, @file_name, @sensitivity, @created_at)`,
    ).run(row);
    return registrationFromRow(row);
  });
}

interface ArtifactRow {
  id: string;
  size_bytes: number;
  created_at: string;
}

function artifactsWithRegistrations(db: SqliteDatabase, rows: ArtifactRow[]): Artifact[] {
  const regs = db.prepare("SELECT * FROM registrations WHERE artifact_id = ? ORDER BY created_at, id");
  return rows.map((row) => {
    const registrations = (regs.all(row.id) as RegistrationRow[]).map(registrationFromRow);
    return {
      artifact_id: row.id,
      size_bytes: row.size_bytes,
      sensitivity: highestSensitivity(registrations.map((r) => r.sensitivity)),
      registrations,
      created_at: row.created_at,
    };
  });
}

export function getArtifact(db: SqliteDatabase, artifactId: string): Artifact {
  const row = db.prepare("SELECT * FROM artifacts WHERE id = ?").get(artifactId) as ArtifactRow | undefined;
  if (!row) {
    throw new EmberscopeError("ARTIFACT_NOT_FOUND", "No artifact has that id.", {
      details: { artifact_id: artifactId },
      recovery: { operation: "artifacts.list", arguments: {}, safe_to_repeat: true },
    });
  }
  return artifactsWithRegistrations(db, [row])[0];
}

export interface ArtifactFilters {
  run_id?: string;
}

export function listArtifactRows(
  db: SqliteDatabase,
  filters: ArtifactFilters,
  after: [string, string] | null,
  limit: number,
): Artifact[] {
  const rows = db
    .prepare(
      `SELECT a.* FROM artifacts a
       WHERE (@run_id IS NULL OR EXISTS (SELECT 1 FROM registrations r WHERE r.artifact_id = a.id AND r.run_id = @run_id))
         AND (@after_at IS NULL OR (a.created_at, a.id) < (@after_at, @after_id))
       ORDER BY a.created_at DESC, a.id DESC LIMIT @limit`,
    )
    .all({
      run_id: filters.run_id ?? null,
      after_at: after?.[0] ?? null,
      after_id: after?.[1] ?? null,
      limit,
    }) as ArtifactRow[];
  return artifactsWithRegistrations(db, rows);
}
