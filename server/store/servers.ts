import { nowIso } from "../domain/ids";
import type { SqliteDatabase } from "./control-store";
import { isProcessAlive, processStartTime } from "./operations";

/**
 * The web servers running for this workspace (`emberscope serve`), so that other processes (the
 * CLI) can tell what they do: each registers at start with its pid, process start time (pid
 * reuse), URL and launch time, and removes itself at stop. A registration whose process is gone
 * (killed) is ignored, and removed by the next server start or access change.
 *
 * A person's CLI can also leave a one-time sign-in code (its hash) with a running server
 * (`emberscope serve link`); the server takes it once, like the one it announced itself.
 */

export interface ServerRegistration {
  launch_id: string;
  pid: number;
  url: string;
  started_at: string;
}

interface Row extends ServerRegistration {
  process_start: string | null;
}

export function registerServer(db: SqliteDatabase, server: ServerRegistration): void {
  db.prepare("INSERT OR REPLACE INTO servers (launch_id, pid, process_start, url, started_at) VALUES (?, ?, ?, ?, ?)").run(
    server.launch_id,
    server.pid,
    processStartTime(server.pid),
    server.url,
    server.started_at,
  );
}

export function unregisterServer(db: SqliteDatabase, launchId: string): void {
  db.prepare("DELETE FROM servers WHERE launch_id = ?").run(launchId);
}

function rows(db: SqliteDatabase): Row[] {
  return db.prepare("SELECT launch_id, pid, process_start, url, started_at FROM servers ORDER BY started_at, launch_id").all() as Row[];
}

/** Registered servers whose process is alive now. */
export function liveServers(db: SqliteDatabase): ServerRegistration[] {
  return rows(db)
    .filter((r) => isProcessAlive(r.pid, r.process_start))
    .map(({ launch_id, pid, url, started_at }) => ({ launch_id, pid, url, started_at }));
}

/** Removes registrations whose process is gone; returns how many. */
export function pruneDeadServers(db: SqliteDatabase): number {
  let removed = 0;
  for (const r of rows(db)) {
    if (!isProcessAlive(r.pid, r.process_start)) removed += db.prepare("DELETE FROM servers WHERE launch_id = ?").run(r.launch_id).changes;
  }
  return removed;
}

/** Leaves a sign-in code's hash with a server (replacing an unused one), valid until `expiresAt`. */
export function offerSignInCode(db: SqliteDatabase, launchId: string, codeHash: string, expiresAt: string): void {
  db.prepare("UPDATE servers SET sign_in_code_hash = ?, sign_in_code_expires_at = ? WHERE launch_id = ?").run(codeHash, expiresAt, launchId);
}

/** Takes the code left with this server, once: true when it matched and had not expired. */
export function takeSignInCode(db: SqliteDatabase, launchId: string, codeHash: string): boolean {
  return (
    db
      .prepare(
        `UPDATE servers SET sign_in_code_hash = NULL, sign_in_code_expires_at = NULL
         WHERE launch_id = ? AND sign_in_code_hash = ? AND sign_in_code_expires_at > ?`,
      )
      .run(launchId, codeHash, nowIso()).changes === 1
  );
}
