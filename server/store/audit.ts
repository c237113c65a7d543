import { nowIso } from "../domain/ids";
import type { SqliteDatabase } from "./control-store";

export interface AuditEntry {
  actor: string;
  action: string;
  target?: string | null;
  argumentsDigest?: string | null;
  resultCode: string;
  durationMs?: number | null;
  details?: Record<string, unknown>;
}

/** Appends one audit event; the log is append-only. */
export function recordAudit(db: SqliteDatabase, entry: AuditEntry): void {
  db.prepare(
    `INSERT INTO audit_events (at, actor, action, target, arguments_digest, result_code, duration_ms, details)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    nowIso(),
    entry.actor,
    entry.action,
    entry.target ?? null,
    entry.argumentsDigest ?? null,
    entry.resultCode,
    entry.durationMs ?? null,
    JSON.stringify(entry.details ?? {}),
  );
}
