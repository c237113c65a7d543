import Database from "better-sqlite3";
import { EmberscopeError } from "../domain/errors";
import { nowIso } from "../domain/ids";
import { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from "./migrations";

export type SqliteDatabase = Database.Database;

/** 'EMBR' — marks a SQLite file as an Emberscope control store, so a foreign file is refused. */
export const APPLICATION_ID = 0x454d4252;
const BUSY_TIMEOUT_MS = 5000;

/** SQLite failures as typed errors: lock contention is retryable, a damaged file is not. */
export function translateSqliteError(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") return error;
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new EmberscopeError("LOCK_TIMEOUT", "The control store stayed locked by another writer.", {
      details: { waited_ms: BUSY_TIMEOUT_MS },
      cause: error,
    });
  }
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_CANTOPEN") {
    return new EmberscopeError("WORKSPACE_INVALID", "The control store is not a readable SQLite database.", {
      details: { sqlite_code: code },
      cause: error,
    });
  }
  return error;
}

export interface OpenOptions {
  create?: boolean;
  readonly?: boolean;
  /** For tests of the upgrade path only. */
  migrations?: readonly Migration[];
}

/** Opens the control store, refuses foreign or newer files, and applies pending migrations. */
export function openControlStore(file: string, options: OpenOptions = {}): SqliteDatabase {
  const migrations = options.migrations ?? MIGRATIONS;
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  let db: SqliteDatabase;
  try {
    db = new Database(file, { fileMustExist: !options.create, readonly: options.readonly ?? false });
  } catch (error) {
    throw translateSqliteError(error);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const appId = db.pragma("application_id", { simple: true }) as number;
    const version = db.pragma("user_version", { simple: true }) as number;
    const isNew = appId === 0 && version === 0 && isEmpty(db);
    if (!isNew && appId !== APPLICATION_ID) {
      throw new EmberscopeError("WORKSPACE_INVALID", "The control store belongs to another application.", {
        details: { application_id: appId },
      });
    }
    if (isNew && !options.create) {
      throw new EmberscopeError("WORKSPACE_INVALID", "The control store is empty; the workspace was never initialized.");
    }
    if (version > latest) {
      throw new EmberscopeError("WORKSPACE_TOO_NEW", "The workspace was written by a newer version of Emberscope.", {
        details: { schema_version: version, supported_schema_version: latest },
      });
    }
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
    }
    db.pragma("foreign_keys = ON");
    if (version < latest && !options.readonly) applyMigrations(db, version, migrations);
    return db;
  } catch (error) {
    db.close();
    throw translateSqliteError(error);
  }
}

function isEmpty(db: SqliteDatabase): boolean {
  const row = db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number };
  return row.n === 0;
}

function applyMigrations(db: SqliteDatabase, from: number, migrations: readonly Migration[]): void {
  const pending = migrations.filter((m) => m.version > from);
  const apply = db.transaction(() => {
    for (const migration of pending) {
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        nowIso(),
      );
      db.pragma(`user_version = ${migration.version}`);
    }
    db.pragma(`application_id = ${APPLICATION_ID}`);
  });
  apply.immediate();
}

export function schemaVersion(db: SqliteDatabase): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/** Runs `fn` in a write transaction taken at BEGIN IMMEDIATE, so writers serialize up front. */
export function writeTransaction<T>(db: SqliteDatabase, fn: () => T): T {
  try {
    return db.transaction(fn).immediate();
  } catch (error) {
    throw translateSqliteError(error);
  }
}

export { LATEST_SCHEMA_VERSION };
