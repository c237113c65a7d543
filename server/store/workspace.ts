import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import { openControlStore, writeTransaction, type SqliteDatabase } from "./control-store";
import { DATABASE_FILE, layoutFor, locateWorkspace, type WorkspaceLayout, type WorkspaceLocator } from "./layout";
import { ObjectStore } from "./object-store";

/** An open workspace: its layout, control store and object store. Close it when done. */
export interface Workspace {
  layout: WorkspaceLayout;
  db: SqliteDatabase;
  objects: ObjectStore;
  id: string;
  /** Per-workspace secret for cursor MACs (and later redaction keys); never leaves the process. */
  secret: Buffer;
  close(): void;
}

function readMeta(db: SqliteDatabase, key: string): string | undefined {
  const row = db.prepare("SELECT value FROM workspace_meta WHERE key = ?").get(key) as { value: string } | undefined;
  return row?.value;
}

function wrap(layout: WorkspaceLayout, db: SqliteDatabase): Workspace {
  const id = readMeta(db, "workspace_id");
  const secret = readMeta(db, "secret");
  if (!id || !secret) {
    db.close();
    throw new EmberscopeError("WORKSPACE_INVALID", "The control store lacks its workspace identity.");
  }
  return {
    layout,
    db,
    objects: new ObjectStore(layout.objects, layout.tmp),
    id,
    secret: Buffer.from(secret, "hex"),
    close: () => db.close(),
  };
}

export function openWorkspace(locator: WorkspaceLocator, options: { readonly?: boolean } = {}): Workspace {
  const layout = locateWorkspace(locator);
  if (!existsSync(layout.database)) {
    throw new EmberscopeError("WORKSPACE_INVALID", "The workspace folder has no control store.", {
      details: { missing: ".emberscope/emberscope.sqlite" },
    });
  }
  return wrap(layout, openControlStore(layout.database, { readonly: options.readonly }));
}

/**
 * Creates `.emberscope/` with its stores and the empty root commit that HEAD starts at.
 * It is built under a temporary name and renamed into place, so a crash leaves no half workspace.
 */
export function initWorkspace(projectRoot: string): Workspace {
  const layout = layoutFor(projectRoot);
  if (existsSync(layout.dir)) {
    throw new EmberscopeError("WORKSPACE_EXISTS", "A workspace already exists in this project root.", {
      recovery: { operation: "workspace.status", arguments: {}, safe_to_repeat: true },
    });
  }
  if (!existsSync(layout.projectRoot)) {
    throw new EmberscopeError("INVALID_ARGUMENTS", "The project root does not exist.", {
      details: { argument: "project_root" },
    });
  }
  const staging = layoutFor(projectRoot);
  staging.dir = `${layout.dir}.init-${randomBytes(6).toString("hex")}`;
  mkdirSync(staging.dir);
  try {
    for (const sub of ["objects", "tmp", "trash"]) mkdirSync(path.join(staging.dir, sub));
    const db = openControlStore(path.join(staging.dir, DATABASE_FILE), { create: true });
    const now = nowIso();
    writeTransaction(db, () => {
      const meta = db.prepare("INSERT INTO workspace_meta (key, value) VALUES (?, ?)");
      meta.run("workspace_id", newId("ws"));
      meta.run("secret", randomBytes(32).toString("hex"));
      meta.run("created_at", now);
      db.prepare("INSERT INTO commits (id, seq, parent_id, message, created_at) VALUES (?, 0, NULL, ?, ?)").run(
        newId("cmt"),
        "workspace initialized",
        now,
      );
    });
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    renameSync(staging.dir, layout.dir);
  } catch (error) {
    rmSync(staging.dir, { recursive: true, force: true });
    if (existsSync(layout.dir)) {
      throw new EmberscopeError("WORKSPACE_EXISTS", "A workspace was created concurrently in this project root.");
    }
    throw error;
  }
  return wrap(layout, openControlStore(layout.database));
}

export function workspaceCreatedAt(ws: Workspace): string {
  return readMeta(ws.db, "created_at") ?? "";
}
