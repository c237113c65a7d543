import { newId, nowIso } from "../domain/ids";
import type { SqliteDatabase } from "./control-store";
import { isProcessAlive, LEASE_MS, processStartTime, type WorkerIdentity } from "./operations";

export type WorkerMode = "supervised" | "detached" | "inline";

/** Registers this process as a worker; its heartbeat keeps it counted as alive. */
export function registerWorker(db: SqliteDatabase, mode: WorkerMode): WorkerIdentity {
  const identity: WorkerIdentity = { id: newId("op").replace(/^op_/, "wkr_"), pid: process.pid, processStart: processStartTime(process.pid) };
  const now = nowIso();
  db.prepare("INSERT INTO workers (id, pid, process_start, mode, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)").run(identity.id, identity.pid, identity.processStart, mode, now, now);
  return identity;
}

export function heartbeatWorker(db: SqliteDatabase, worker: WorkerIdentity): void {
  db.prepare("UPDATE workers SET heartbeat_at = ? WHERE id = ?").run(nowIso(), worker.id);
}

export function stopWorker(db: SqliteDatabase, worker: WorkerIdentity): void {
  db.prepare("UPDATE workers SET stopped_at = ? WHERE id = ?").run(nowIso(), worker.id);
}

/** Workers that claim queued operations (not inline ones) and are alive right now. */
export function liveWorkers(db: SqliteDatabase, now = Date.now()): { id: string; pid: number; mode: WorkerMode }[] {
  const rows = db
    .prepare("SELECT id, pid, process_start, mode, heartbeat_at FROM workers WHERE stopped_at IS NULL AND mode <> 'inline'")
    .all() as { id: string; pid: number; process_start: string | null; mode: WorkerMode; heartbeat_at: string }[];
  return rows.filter((w) => now - Date.parse(w.heartbeat_at) < LEASE_MS && isProcessAlive(w.pid, w.process_start)).map(({ id, pid, mode }) => ({ id, pid, mode }));
}
