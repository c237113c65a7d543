import { promises as fsp } from "node:fs";
import { z } from "zod";
import { LATEST_SCHEMA_VERSION, schemaVersion } from "../store/control-store";
import { referencedObjects } from "../store/reachability";
import { listStaging } from "../store/staging";
import { reconcileOperations } from "./operations";
import { defineService } from "./service";

export const Problem = z.object({
  code: z.enum([
    "SQLITE_INTEGRITY",
    "FOREIGN_KEY_VIOLATION",
    "SCHEMA_VERSION",
    "COMMIT_CHAIN_BROKEN",
    "OBJECT_MISSING",
    "OBJECT_SIZE_MISMATCH",
    "OBJECT_CONTENT_MISMATCH",
  ]),
  message: z.string(),
  subject: z.string().nullable(),
});
export type Problem = z.infer<typeof Problem>;

const LISTED_STAGING = 100;

const StaleStaging = z.object({
  path: z.string().describe("Relative to .emberscope/."),
  size_bytes: z.number().int(),
  age_seconds: z.number().int(),
  operation_id: z.string().nullable().describe("The operation that staged it, when known (it has ended)."),
  run_id: z.string().nullable(),
});

export const ValidationReport = z.object({
  ok: z.boolean(),
  full: z.boolean(),
  schema_version: z.number().int(),
  checked: z.object({
    commits: z.number().int(),
    referenced_objects: z.number().int(),
    rehashed_objects: z.number().int(),
  }),
  problems: z.array(Problem),
  notes: z.object({
    unreachable_objects: z.number().int().describe("Collectable by `gc`; not a problem."),
    stale_tmp_files: z.number().int().describe("Staging entries in tmp/ left by interrupted writers; collectable by `gc`."),
    stale_tmp_bytes: z.number().int().describe("Their size in all."),
    stale_tmp: z.array(StaleStaging).describe(`The stale staging entries, largest first (at most ${LISTED_STAGING}).`),
    interrupted_operations: z
      .array(z.string())
      .describe("Operations whose holder had stopped, ended by this validation (their runs failed with INTERRUPTED)."),
  }),
});
export type ValidationReport = z.infer<typeof ValidationReport>;

const MAX_PROBLEMS = 1000;

/** Checks the workspace and reports; never repairs. `full` also re-hashes every object. */
export const validateWorkspace = defineService({
  name: "workspace.validate",
  summary: "Check the control store, commit chain and stored objects; report problems, repair nothing.",
  kind: "query",
  input: z.object({ full: z.boolean().default(false) }).strict(),
  output: ValidationReport,
  handler: async (input, { ws }) => {
    // Operations whose holder died end first (not a repair: the lease says they are over), so
    // that their staging counts as abandoned.
    const interrupted = reconcileOperations(ws);
    const problems: Problem[] = [];
    const report = (p: Problem) => {
      if (problems.length < MAX_PROBLEMS) problems.push(p);
    };

    const integrity = ws.db.pragma(input.full ? "integrity_check" : "quick_check") as Record<string, string>[];
    for (const row of integrity) {
      const text = Object.values(row)[0];
      if (text !== "ok") report({ code: "SQLITE_INTEGRITY", message: text, subject: null });
    }
    const fk = ws.db.pragma("foreign_key_check") as { table: string; rowid: number; parent: string }[];
    for (const row of fk) {
      report({ code: "FOREIGN_KEY_VIOLATION", message: `${row.table} row ${row.rowid} names a missing ${row.parent}`, subject: row.table });
    }
    const version = schemaVersion(ws.db);
    if (version !== LATEST_SCHEMA_VERSION) {
      report({ code: "SCHEMA_VERSION", message: `schema ${version}, expected ${LATEST_SCHEMA_VERSION}`, subject: null });
    }

    const commits = ws.db
      .prepare(
        `SELECT c.id, c.seq, p.seq AS parent_seq, c.parent_id FROM commits c LEFT JOIN commits p ON p.id = c.parent_id ORDER BY c.seq`,
      )
      .all() as { id: string; seq: number; parent_seq: number | null; parent_id: string | null }[];
    for (const c of commits) {
      const rootOk = c.seq === 0 && c.parent_id === null;
      if (!rootOk && c.parent_seq !== c.seq - 1) {
        report({ code: "COMMIT_CHAIN_BROKEN", message: `commit ${c.seq} does not follow its parent`, subject: c.id });
      }
    }
    if (!commits.some((c) => c.seq === 0)) report({ code: "COMMIT_CHAIN_BROKEN", message: "no root commit", subject: null });

    const referenced = referencedObjects(ws.db);
    const known = new Set<string>();
    let rehashed = 0;
    for (const ref of referenced) {
      if (known.has(`${ref.id}:${ref.size}`)) continue;
      known.add(`${ref.id}:${ref.size}`);
      const stat = await fsp.stat(ws.objects.pathOf(ref.id)).catch(() => null);
      if (!stat) {
        report({ code: "OBJECT_MISSING", message: `object referenced by ${ref.referrer} is missing`, subject: ref.id });
      } else if (stat.size !== ref.size) {
        report({ code: "OBJECT_SIZE_MISMATCH", message: `object is ${stat.size} bytes, recorded ${ref.size}`, subject: ref.id });
      } else if (input.full) {
        rehashed++;
        if (!(await ws.objects.verifyContent(ref.id))) {
          report({ code: "OBJECT_CONTENT_MISMATCH", message: "stored bytes no longer match their hash", subject: ref.id });
        }
      }
    }

    const referencedIds = new Set(referenced.map((r) => r.id));
    let unreachable = 0;
    for await (const object of ws.objects.list()) if (!referencedIds.has(object.id)) unreachable++;

    const stale = (await listStaging(ws)).filter((e) => e.status === "stale").sort((a, b) => b.size_bytes - a.size_bytes);

    return {
      ok: problems.length === 0,
      full: input.full,
      schema_version: version,
      checked: { commits: commits.length, referenced_objects: known.size, rehashed_objects: rehashed },
      problems,
      notes: {
        unreachable_objects: unreachable,
        stale_tmp_files: stale.length,
        stale_tmp_bytes: stale.reduce((sum, e) => sum + e.size_bytes, 0),
        stale_tmp: stale.slice(0, LISTED_STAGING).map(({ path, size_bytes, age_seconds, operation_id, run_id }) => ({ path, size_bytes, age_seconds, operation_id, run_id })),
        interrupted_operations: interrupted,
      },
    };
  },
});
