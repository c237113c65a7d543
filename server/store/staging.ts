import { mkdirSync, promises as fsp, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { ObjectStore } from "./object-store";
import { isProcessAlive } from "./operations";
import type { Workspace } from "./workspace";

/**
 * Staging is everything under `.emberscope/tmp/`: files being hashed into the object store, a
 * Parquet writer's directory (DuckDB's spill, part files, span drafts), a reader's spill, a
 * capture's output. An entry whose name carries an operation id (`tmp/op_…/`, `capture-op_…-…`)
 * belongs to that operation: it is live while the operation holds its lease, and abandoned as
 * soon as the operation has ended. Any other entry is judged by age alone.
 */

/** Unattributed staging older than this was abandoned by a crashed writer. */
export const STALE_TMP_MS = 60 * 60 * 1000;

const OPERATION_ID = /op_[0-9a-z]{26}/;

export interface StagingEntry {
  /** Relative to `.emberscope/`, e.g. `tmp/op_…`. */
  path: string;
  size_bytes: number;
  age_seconds: number;
  /** The operation whose staging it is, when its name says so. */
  operation_id: string | null;
  run_id: string | null;
  /**
   * live: its operation holds a lease (never collected); stale: abandoned — its operation ended,
   * or unattributed and older than the grace period; recent: unattributed and younger than it.
   */
  status: "live" | "stale" | "recent";
}

/** The directory an operation stages in: `tmp/<operation id>/`. */
export function operationStagingDir(ws: Workspace, operationId: string): string {
  return path.join(ws.layout.tmp, operationId);
}

/**
 * The workspace as an operation works on it: the same stores, with staging (`layout.tmp`, and the
 * object store's staging) in the operation's own directory, created now. Close the original.
 */
export function stagingWorkspace(ws: Workspace, operationId: string): Workspace {
  const tmp = operationStagingDir(ws, operationId);
  mkdirSync(tmp, { recursive: true });
  return { ...ws, layout: { ...ws.layout, tmp }, objects: new ObjectStore(ws.layout.objects, tmp), close: () => undefined };
}

interface OperationState {
  state: string;
  run_id: string | null;
  /** When the operation last changed: for an ended one, when it ended. */
  updated_at: string;
  /** The process that held the lease, while its worker row has not stopped (null otherwise). */
  holder_pid: number | null;
  holder_start: string | null;
}

function operationStates(ws: Workspace): Map<string, OperationState> {
  const rows = ws.db
    .prepare(
      `SELECT o.id, o.state, o.run_id, o.updated_at, w.pid AS holder_pid, w.process_start AS holder_start
       FROM operations o LEFT JOIN workers w ON w.id = o.lease_owner AND w.stopped_at IS NULL`,
    )
    .all() as ({ id: string } & OperationState)[];
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * How long after an operation ends its staging stays its holder's to remove (an import records its
 * outcome as it publishes, then removes its staging as it closes, within moments).
 */
const ENDED_STAGING_SETTLE_MS = 60_000;

/**
 * Whether an operation's staging is still in use: the operation is live, or it ended less than a
 * minute ago and the process that held it is still running and has not stopped its worker. A dead
 * holder's staging is not; nor is staging left a minute after its operation ended (a long-lived
 * pool worker that could not remove it, a reused pid where process start times are unknown).
 */
function stagingInUse(owner: OperationState, now: number): boolean {
  if (LIVE.has(owner.state)) return true;
  if (now - Date.parse(owner.updated_at) >= ENDED_STAGING_SETTLE_MS) return false;
  return owner.holder_pid !== null && isProcessAlive(owner.holder_pid, owner.holder_start);
}

const LIVE = new Set(["queued", "running", "cancelling"]);

/** Bytes of a file, or of the files under a directory. */
async function storedBytes(target: string): Promise<number> {
  const stat = await fsp.stat(target);
  if (!stat.isDirectory()) return stat.size;
  let bytes = 0;
  for (const entry of await fsp.readdir(target, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += (await fsp.stat(path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return bytes;
}

function storedBytesSync(target: string): number {
  const stat = statSync(target, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.size;
  let bytes = 0;
  for (const entry of readdirSync(target, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += statSync(path.join(entry.parentPath, entry.name), { throwIfNoEntry: false })?.size ?? 0;
  }
  return bytes;
}

/**
 * Every entry of tmp/ with its size, age and owner. Call after reconciling leases, so that an
 * operation whose holder died counts as ended. `graceMs` is how old unattributed staging must be
 * to count as abandoned.
 */
export async function listStaging(ws: Workspace, { graceMs = STALE_TMP_MS, now = Date.now() }: { graceMs?: number; now?: number } = {}): Promise<StagingEntry[]> {
  const names = await fsp.readdir(ws.layout.tmp).catch(() => [] as string[]);
  const operations = operationStates(ws);
  const entries: StagingEntry[] = [];
  for (const name of names.sort()) {
    const file = path.join(ws.layout.tmp, name);
    const stat = await fsp.stat(file).catch(() => null);
    if (!stat) continue;
    const size = await storedBytes(file).catch(() => null);
    if (size === null) continue;
    const operationId = OPERATION_ID.exec(name)?.[0] ?? null;
    const owner = operationId ? operations.get(operationId) : undefined;
    const age = now - stat.mtimeMs;
    const status = owner ? (stagingInUse(owner, now) ? "live" : "stale") : age >= graceMs ? "stale" : "recent";
    entries.push({
      path: path.relative(ws.layout.dir, file),
      size_bytes: size,
      age_seconds: Math.max(0, Math.floor(age / 1000)),
      operation_id: owner ? operationId : null,
      run_id: owner?.run_id ?? null,
      status,
    });
  }
  return entries;
}

/** The staging an operation left (for reporting an interrupted one): paths relative to `.emberscope/`, and sizes. */
export function stagingOfOperation(ws: Workspace, operationId: string): { path: string; size_bytes: number }[] {
  let names: string[];
  try {
    names = readdirSync(ws.layout.tmp);
  } catch {
    return [];
  }
  return names
    .filter((name) => OPERATION_ID.exec(name)?.[0] === operationId)
    .sort()
    .map((name) => {
      const file = path.join(ws.layout.tmp, name);
      return { path: path.relative(ws.layout.dir, file), size_bytes: storedBytesSync(file) };
    });
}

/**
 * Removes abandoned staging (run when a server starts, after reconciling leases): entries of
 * operations that have ended, and unattributed ones older than an hour. Live staging is kept.
 */
export async function sweepStaleStaging(ws: Workspace): Promise<{ entries: number; bytes: number }> {
  let entries = 0;
  let bytes = 0;
  for (const entry of await listStaging(ws)) {
    if (entry.status !== "stale") continue;
    await fsp.rm(path.join(ws.layout.dir, entry.path), { recursive: true, force: true });
    entries++;
    bytes += entry.size_bytes;
  }
  return { entries, bytes };
}
