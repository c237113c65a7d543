import { promises as fsp } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import { recordAudit } from "../store/audit";
import { referencedObjects } from "../store/reachability";
import { listStaging } from "../store/staging";
import type { Workspace } from "../store/workspace";
import { reconcileOperations } from "./operations";
import { defineService } from "./service";

/** Trash is restorable for at least this long; purge refuses younger manifests. */
export const PURGE_AFTER_MS = 24 * 60 * 60 * 1000;
const MANIFEST_ID = z.string().regex(/^gcm_[0-9a-z]{26}$/, "expected a manifest id gcm_…");

const Entry = z.object({
  kind: z.enum(["object", "tmp"]),
  path: z.string().describe("Relative to .emberscope/."),
  size_bytes: z.number().int(),
});
type Entry = z.infer<typeof Entry>;

const Manifest = z.object({
  manifest_id: z.string(),
  created_at: z.string(),
  entries: z.array(Entry),
});
type Manifest = z.infer<typeof Manifest>;

const TrashSummary = z.object({
  manifest_id: z.string(),
  created_at: z.string(),
  entries: z.number().int(),
  bytes: z.number().int(),
  purgeable: z.boolean(),
});

export const GcReport = z.object({
  applied: z.boolean(),
  manifest_id: z.string().nullable(),
  collectable: z.array(Entry).describe("Unreachable objects and stale staging files (bounded to 1000 listed)."),
  collectable_count: z.number().int(),
  collectable_bytes: z.number().int(),
  kept_recent: z.number().int().describe("Unreachable but younger than min_age_seconds: possibly being published."),
  kept_live: z
    .number()
    .int()
    .describe("Kept for live operations: staging their leases own, and unreachable objects written since the oldest of them began (possibly theirs, not yet published)."),
  trash: z.array(TrashSummary),
});

const LISTED = 1000;

/** Objects' modification times are compared with operation start times this loosely (clocks, timestamp granularity). */
const MTIME_SLACK_MS = 2000;

/** When the oldest live operation began (ms), or null when none is live. */
function oldestLiveOperation(ws: Workspace): number | null {
  const row = ws.db.prepare("SELECT min(created_at) AS at FROM operations WHERE state IN ('queued', 'running', 'cancelling')").get() as { at: string | null };
  return row.at === null ? null : Date.parse(row.at);
}

interface Collectable {
  entries: Entry[];
  /** Each listed object's modification time when it was listed. */
  listedMtimes: Map<string, number>;
  keptRecent: number;
  keptLive: number;
}

/**
 * What gc may move: unreachable objects older than the grace period and than every live
 * operation, and abandoned staging (an ended operation's, or unattributed and older than the
 * grace period). Leases are reconciled first, so a dead holder's staging counts as abandoned.
 */
async function collectable(ws: Workspace, minAgeMs: number, now: number): Promise<Collectable> {
  reconcileOperations(ws);
  const referenced = new Set(referencedObjects(ws.db).map((r) => r.id));
  const liveSince = oldestLiveOperation(ws);
  const entries: Entry[] = [];
  const listedMtimes = new Map<string, number>();
  let keptRecent = 0;
  let keptLive = 0;
  for await (const object of ws.objects.list()) {
    if (referenced.has(object.id)) continue;
    const stat = await fsp.stat(object.file).catch(() => null);
    if (!stat) continue;
    // A live operation's objects are unreachable until it publishes (an artifact, Parquet files).
    if (liveSince !== null && stat.mtimeMs >= liveSince - MTIME_SLACK_MS) {
      keptLive++;
      continue;
    }
    // An object younger than the grace period may belong to a publish whose commit is not in yet.
    if (now - stat.mtimeMs < minAgeMs) {
      keptRecent++;
      continue;
    }
    const entry: Entry = { kind: "object", path: path.relative(ws.layout.dir, object.file), size_bytes: stat.size };
    entries.push(entry);
    listedMtimes.set(entry.path, stat.mtimeMs);
  }
  for (const entry of await listStaging(ws, { graceMs: minAgeMs, now })) {
    if (entry.status === "live") keptLive++;
    else if (entry.status === "recent") keptRecent++;
    else entries.push({ kind: "tmp", path: entry.path, size_bytes: entry.size_bytes });
  }
  return { entries, listedMtimes, keptRecent, keptLive };
}

/**
 * Drops the objects that became reachable, or were stored again (a publish reusing identical
 * bytes touches them), since they were listed: the listing and the move are not one transaction.
 */
async function stillCollectable(ws: Workspace, listed: Collectable): Promise<Entry[]> {
  const referenced = new Set<string>(referencedObjects(ws.db).map((r) => r.id));
  const kept: Entry[] = [];
  for (const entry of listed.entries) {
    if (entry.kind === "object") {
      const file = path.join(ws.layout.dir, entry.path);
      const stat = await fsp.stat(file).catch(() => null);
      if (!stat || referenced.has(`sha256:${path.basename(file)}`) || stat.mtimeMs !== listed.listedMtimes.get(entry.path)) continue;
    }
    kept.push(entry);
  }
  return kept;
}

async function readManifest(ws: Workspace, manifestId: string): Promise<Manifest> {
  const file = path.join(ws.layout.trash, manifestId, "manifest.json");
  const text = await fsp.readFile(file, "utf8").catch(() => null);
  if (text === null) {
    throw new EmberscopeError("INVALID_ARGUMENTS", "No gc manifest has that id.", {
      details: { argument: "manifest_id", manifest_id: manifestId },
      recovery: { operation: "workspace.gc", arguments: {}, safe_to_repeat: true },
    });
  }
  const parsed = Manifest.safeParse(JSON.parse(text));
  if (!parsed.success) throw new EmberscopeError("WORKSPACE_INVALID", "The gc manifest is unreadable.", { details: { manifest_id: manifestId } });
  return parsed.data;
}

async function trashSummaries(ws: Workspace, now: number): Promise<z.infer<typeof TrashSummary>[]> {
  const ids = (await fsp.readdir(ws.layout.trash).catch(() => [] as string[])).filter((n) => MANIFEST_ID.safeParse(n).success);
  const out = [];
  for (const id of ids.sort()) {
    const manifest = await readManifest(ws, id).catch(() => null);
    if (!manifest) continue;
    out.push({
      manifest_id: id,
      created_at: manifest.created_at,
      entries: manifest.entries.length,
      bytes: manifest.entries.reduce((sum, e) => sum + e.size_bytes, 0),
      purgeable: now - Date.parse(manifest.created_at) >= PURGE_AFTER_MS,
    });
  }
  return out;
}

export const collectGarbage = defineService({
  name: "workspace.gc",
  summary: "List (or with apply, move to trash/) unreachable objects and stale staging files.",
  kind: "mutation",
  input: z
    .object({
      apply: z.boolean().default(false),
      min_age_seconds: z.number().int().min(0).max(30 * 24 * 3600).default(3600),
    })
    .strict(),
  output: GcReport,
  handler: async (input, { ws, ctx }) => {
    const now = Date.now();
    const listed = await collectable(ws, input.min_age_seconds * 1000, now);
    const entries = input.apply ? await stillCollectable(ws, listed) : listed.entries;
    const { keptRecent, keptLive } = listed;
    let manifestId: string | null = null;
    if (input.apply && entries.length > 0) {
      manifestId = newId("gcm");
      const base = path.join(ws.layout.trash, manifestId);
      await fsp.mkdir(path.join(base, "files"), { recursive: true });
      const manifest: Manifest = { manifest_id: manifestId, created_at: nowIso(now), entries };
      // The manifest is written first, so an interrupted apply can still be restored.
      await fsp.writeFile(path.join(base, "manifest.json"), JSON.stringify(manifest, null, 2));
      const moved: typeof entries = [];
      for (const entry of entries) {
        const target = path.join(base, "files", entry.path);
        await fsp.mkdir(path.dirname(target), { recursive: true });
        try {
          await fsp.rename(path.join(ws.layout.dir, entry.path), target);
          moved.push(entry);
        } catch (error) {
          // Its owner removed it meanwhile (an import that ended cleans its staging): nothing to collect.
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
      if (moved.length !== entries.length) {
        entries.splice(0, entries.length, ...moved);
        await fsp.writeFile(path.join(base, "manifest.json"), JSON.stringify({ ...manifest, entries }, null, 2));
      }
      recordAudit(ws.db, {
        actor: ctx.actor,
        action: "workspace.gc",
        target: manifestId,
        resultCode: "OK",
        details: { entries: entries.length },
      });
    }
    return {
      applied: input.apply,
      manifest_id: manifestId,
      collectable: entries.slice(0, LISTED),
      collectable_count: entries.length,
      collectable_bytes: entries.reduce((sum, e) => sum + e.size_bytes, 0),
      kept_recent: keptRecent,
      kept_live: keptLive,
      trash: await trashSummaries(ws, now),
    };
  },
});

export const restoreGarbage = defineService({
  name: "workspace.gc_restore",
  summary: "Move everything a gc manifest put in trash/ back where it was.",
  kind: "mutation",
  input: z.object({ manifest_id: MANIFEST_ID }).strict(),
  output: z.object({ manifest_id: z.string(), restored: z.number().int() }),
  handler: async (input, { ws, ctx }) => {
    const manifest = await readManifest(ws, input.manifest_id);
    const base = path.join(ws.layout.trash, input.manifest_id);
    let restored = 0;
    for (const entry of manifest.entries) {
      const from = path.join(base, "files", entry.path);
      const to = path.join(ws.layout.dir, entry.path);
      if (!(await fsp.stat(from).catch(() => null))) continue;
      await fsp.mkdir(path.dirname(to), { recursive: true });
      await fsp.rename(from, to);
      restored++;
    }
    await fsp.rm(base, { recursive: true, force: true });
    recordAudit(ws.db, { actor: ctx.actor, action: "workspace.gc_restore", target: input.manifest_id, resultCode: "OK" });
    return { manifest_id: input.manifest_id, restored };
  },
});

export const purgeGarbage = defineService({
  name: "workspace.gc_purge",
  summary: "Delete a gc manifest's trash for good; only manifests older than 24 h.",
  kind: "mutation",
  input: z.object({ manifest_id: MANIFEST_ID }).strict(),
  output: z.object({ manifest_id: z.string(), purged_entries: z.number().int(), purged_bytes: z.number().int() }),
  handler: async (input, { ws, ctx }) => {
    const manifest = await readManifest(ws, input.manifest_id);
    const age = Date.now() - Date.parse(manifest.created_at);
    if (!(age >= PURGE_AFTER_MS)) {
      throw new EmberscopeError("POLICY_DENIED", "Trash is kept restorable for 24 hours before it can be purged.", {
        details: { manifest_id: input.manifest_id, age_hours: Math.floor(age / 36e5), purge_after_hours: 24 },
        recovery: { operation: "workspace.gc_restore", arguments: { manifest_id: input.manifest_id }, safe_to_repeat: false },
      });
    }
    await fsp.rm(path.join(ws.layout.trash, input.manifest_id), { recursive: true, force: true });
    recordAudit(ws.db, { actor: ctx.actor, action: "workspace.gc_purge", target: input.manifest_id, resultCode: "OK" });
    return {
      manifest_id: input.manifest_id,
      purged_entries: manifest.entries.length,
      purged_bytes: manifest.entries.reduce((sum, e) => sum + e.size_bytes, 0),
    };
  },
});
