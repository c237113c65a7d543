import { z } from "zod";
import { Commit } from "../domain/models";
import { LATEST_SCHEMA_VERSION, schemaVersion, type SqliteDatabase } from "../store/control-store";
import { headCommit } from "../store/corpus";
import { displayPath, projectRootForInit } from "../store/layout";
import { initWorkspace, workspaceCreatedAt } from "../store/workspace";
import { recordAudit } from "../store/audit";
import { defineService, defineWorkspacelessService } from "./service";

export const WorkspaceStatus = z.object({
  workspace_id: z.string(),
  schema_version: z.number().int(),
  project_root: z.string().describe("Relative to the caller's directory; never absolute."),
  created_at: z.string(),
  head_commit_id: z.string(),
  head: Commit,
  counts: z.object({
    runs: z.number().int(),
    artifacts: z.number().int(),
    commits: z.number().int(),
    generations: z.number().int(),
    operations_active: z.number().int(),
  }),
});
export type WorkspaceStatus = z.infer<typeof WorkspaceStatus>;

export const initializeWorkspace = defineWorkspacelessService({
  name: "workspace.init",
  summary: "Create the workspace (.emberscope/) in the project root.",
  kind: "mutation",
  input: z.object({}).strict(),
  output: WorkspaceStatus.pick({ workspace_id: true, schema_version: true, project_root: true, head_commit_id: true }),
  handler: (_input, { ctx }) => {
    const ws = initWorkspace(projectRootForInit(ctx.locator));
    try {
      recordAudit(ws.db, { actor: ctx.actor, action: "workspace.init", resultCode: "OK" });
      return {
        workspace_id: ws.id,
        schema_version: schemaVersion(ws.db),
        project_root: displayPath(ws.layout.projectRoot, ctx.locator.cwd),
        head_commit_id: headCommit(ws.db).commit_id,
      };
    } finally {
      ws.close();
    }
  },
});

function count(db: SqliteDatabase, sql: string): number {
  return (db.prepare(sql).get() as { n: number }).n;
}

export const workspaceStatus = defineService({
  name: "workspace.status",
  summary: "Show the workspace: id, schema version, HEAD and record counts.",
  kind: "query",
  input: z.object({}).strict(),
  output: WorkspaceStatus,
  handler: (_input, { ws, ctx }) => {
    const read = ws.db.transaction(() => {
      const head = headCommit(ws.db);
      return {
        workspace_id: ws.id,
        schema_version: schemaVersion(ws.db),
        project_root: displayPath(ws.layout.projectRoot, ctx.locator.cwd),
        created_at: workspaceCreatedAt(ws),
        head_commit_id: head.commit_id,
        head,
        counts: {
          runs: count(ws.db, "SELECT count(*) AS n FROM runs"),
          artifacts: count(ws.db, "SELECT count(*) AS n FROM artifacts"),
          commits: count(ws.db, "SELECT count(*) AS n FROM commits"),
          generations: count(ws.db, "SELECT count(*) AS n FROM generations"),
          operations_active: count(ws.db, "SELECT count(*) AS n FROM operations WHERE state IN ('queued', 'running', 'cancelling')"),
        },
      };
    });
    return read.deferred();
  },
});

export { LATEST_SCHEMA_VERSION };
