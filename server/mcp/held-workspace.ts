import { statSync } from "node:fs";
import type { Statement } from "better-sqlite3";
import type { WorkspaceLocator } from "../store/layout";
import { openWorkspace, type Workspace } from "../store/workspace";

/**
 * One workspace handle per project, kept open for a long-lived server's life (the HTTP endpoint):
 * token checks, the access switch, the tools' services and audit writes all use it. Opening the
 * control store costs more than most tool calls (file open, pragmas, migration check), and every
 * `prepare` compiles its SQL again, so the handle also keeps its compiled statements.
 *
 * Sharing one connection between concurrent requests is safe because better-sqlite3 is
 * synchronous: a statement or a transaction (`db.transaction(fn)` takes a synchronous fn) runs
 * to completion before another request's code runs. The access switch, detail and token hash are
 * read where they are used (the token at admission, the switch as a call starts, the detail as its
 * answer is projected) through `agentAccess`, which reads SQLite again whenever any other connection
 * (the CLI, the web UI) committed since: a person's change applies to the very next check.
 */

interface Held {
  ws: Workspace;
  /** Identity of the database file when it was opened: a deleted or re-created workspace is reopened. */
  dev: number;
  ino: number;
}

const held = new Map<string, Held>();

/** Compiled statements kept per connection (the SQL the services run is a small fixed set). */
const MAX_STATEMENTS = 256;

function cacheStatements(ws: Workspace): void {
  const db = ws.db;
  const prepare = db.prepare.bind(db) as (sql: string) => Statement;
  const statements = new Map<string, Statement>();
  // Reusing a statement is safe as long as no caller changes its mode (pluck/raw/expand/bind) or
  // holds an iterator across calls; the store and services do neither (they call get/all/run).
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (statement) {
      statements.delete(sql);
    } else {
      statement = prepare(sql);
      if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
    }
    statements.set(sql, statement);
    return statement;
  }) as typeof db.prepare;
}

function fileIdentity(file: string): { dev: number; ino: number } | null {
  try {
    const stat = statSync(file);
    return { dev: stat.dev, ino: stat.ino };
  } catch {
    return null;
  }
}

/** The held handle of the locator's workspace, opened on first use; null while there is none. */
export function heldWorkspace(locator: WorkspaceLocator): Workspace | null {
  const key = JSON.stringify(locator);
  const entry = held.get(key);
  if (entry) {
    const identity = entry.ws.db.open ? fileIdentity(entry.ws.layout.database) : null;
    if (identity && identity.dev === entry.dev && identity.ino === entry.ino) return entry.ws;
    // Not closed at once: a call still running on the old handle (a long capture) finishes on it.
    held.delete(key);
    retire(entry.ws);
  }
  let ws: Workspace;
  try {
    ws = openWorkspace(locator);
  } catch {
    return null;
  }
  const identity = fileIdentity(ws.layout.database);
  if (!identity) {
    ws.close();
    return null;
  }
  cacheStatements(ws);
  // The services must not close the shared handle: `callService` closes only what it opened.
  held.set(key, { ws, ...identity });
  return ws;
}

/**
 * A replaced handle (its workspace was deleted or re-created) is closed this long after, when any
 * call still running on it has long finished; its database file is gone or no longer the live one.
 */
export const RETIRED_HANDLE_CLOSE_MS = 10 * 60 * 1000;

function retire(ws: Workspace): void {
  const timer = setTimeout(() => {
    if (ws.db.open) ws.close();
  }, RETIRED_HANDLE_CLOSE_MS);
  timer.unref();
}

/** Closes every held handle (tests; a server's exit closes them anyway). */
export function releaseHeldWorkspaces(): void {
  for (const { ws } of held.values()) if (ws.db.open) ws.close();
  held.clear();
}
