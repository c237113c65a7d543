import Database from "better-sqlite3";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import { APPLICATION_ID, openControlStore, schemaVersion } from "../../server/store/control-store";
import { MIGRATIONS, LATEST_SCHEMA_VERSION } from "../../server/store/migrations";
import { recordAudit } from "../../server/store/audit";
import { createRun, getRun, runRevisions, updateRun } from "../../server/store/runs";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof EmberscopeError ? error.code : `untyped: ${String(error)}`;
  }
  return undefined;
}

describe("control store", () => {
  it("opens in WAL mode with foreign keys on, STRICT tables and the schema version recorded", () => {
    const ws = initWorkspace(tempProject());
    try {
      expect(ws.db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(ws.db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(schemaVersion(ws.db)).toBe(LATEST_SCHEMA_VERSION);
      const tables = ws.db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string; sql: string }[];
      expect(tables.map((t) => t.name)).toEqual(
        expect.arrayContaining(["runs", "run_revisions", "artifacts", "registrations", "generations", "generation_files", "commits", "commit_generations", "operations", "plans", "idempotency_keys", "audit_events", "workspace_meta"]),
      );
      for (const t of tables) expect(t.sql, t.name).toMatch(/STRICT$/);
      expect(ws.db.prepare("SELECT version FROM schema_migrations").all()).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
      expect(() => ws.db.prepare("INSERT INTO registrations (id, artifact_id, run_id, kind, producer, media_type, sensitivity, created_at) VALUES ('r', 'sha256:x', 'run_missing', 'k', 'p', 'm', 'normal', 'now')").run()).toThrow(/FOREIGN KEY/);
    } finally {
      ws.close();
    }
  });

  it("migrates a workspace written by an older schema forward, keeping its data", () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const run = createRun(ws.db, { kind: "import", source: "folded", title: "kept across the upgrade" });
    ws.close();
    const next = [...MIGRATIONS, { version: LATEST_SCHEMA_VERSION + 1, name: "test: add runs.note", sql: "ALTER TABLE runs ADD COLUMN note TEXT;" }];
    const db = openControlStore(path.join(root, ".emberscope", "emberscope.sqlite"), { migrations: next });
    try {
      expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION + 1);
      expect(db.prepare("SELECT title, note FROM runs WHERE id = ?").get(run.run_id)).toEqual({ title: "kept across the upgrade", note: null });
    } finally {
      db.close();
    }
  });

  it("indexes audit events by target only where they name one, and reads an investigation's activity through that index", () => {
    const ws = initWorkspace(tempProject());
    try {
      recordAudit(ws.db, { actor: "agent", action: "mcp.analyze_hotspots", resultCode: "OK" });
      recordAudit(ws.db, { actor: "agent", action: "mcp.add_cell", target: "inv_1", resultCode: "OK" });
      const index = ws.db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'audit_events_by_target'").get() as { sql: string };
      expect(index.sql).toMatch(/WHERE target IS NOT NULL$/);
      const byTarget = "SELECT action FROM audit_events WHERE target = ? AND actor = 'agent' ORDER BY seq DESC";
      expect(ws.db.prepare(`EXPLAIN QUERY PLAN ${byTarget}`).all("inv_1")).toEqual([expect.objectContaining({ detail: expect.stringContaining("USING INDEX audit_events_by_target") })]);
      expect(ws.db.prepare(byTarget).all("inv_1")).toEqual([{ action: "mcp.add_cell" }]);
    } finally {
      ws.close();
    }
  });

  it("moves audit events off AUTOINCREMENT keeping every row and its seq; numbering goes on after the last", () => {
    const root = tempProject();
    const file = path.join(root, ".emberscope", "emberscope.sqlite");
    mkdirSync(path.dirname(file), { recursive: true });
    const before = MIGRATIONS.filter((m) => m.version < 12);
    const old = openControlStore(file, { create: true, migrations: before });
    for (let i = 0; i < 5; i++) recordAudit(old, { actor: "agent", action: `mcp.call_${i}`, target: i % 2 ? "inv_1" : null, resultCode: "OK", details: { i } });
    const kept = old.prepare("SELECT * FROM audit_events ORDER BY seq").all();
    expect(old.prepare("SELECT sql FROM sqlite_schema WHERE name = 'audit_events'").pluck().get()).toMatch(/AUTOINCREMENT/);
    old.close();
    const db = openControlStore(file, { migrations: MIGRATIONS });
    try {
      expect(db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'audit_events'").pluck().get()).not.toMatch(/AUTOINCREMENT/);
      expect(db.prepare("SELECT * FROM audit_events ORDER BY seq").all()).toEqual(kept);
      expect(db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'audit_events_by_target'").pluck().get()).toMatch(/WHERE target IS NOT NULL$/);
      recordAudit(db, { actor: "agent", action: "mcp.after", resultCode: "OK" });
      expect(db.prepare("SELECT seq FROM audit_events WHERE action = 'mcp.after'").pluck().get()).toBe(6);
    } finally {
      db.close();
    }
  });

  it("refuses a workspace from a newer schema with WORKSPACE_TOO_NEW and leaves it untouched", () => {
    const root = tempProject();
    initWorkspace(root).close();
    const file = path.join(root, ".emberscope", "emberscope.sqlite");
    const raw = new Database(file);
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 5}`);
    raw.close();
    expect(errorCode(() => openWorkspace({ cwd: root }))).toBe("WORKSPACE_TOO_NEW");
    const check = new Database(file, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(LATEST_SCHEMA_VERSION + 5);
    check.close();
  });

  it("refuses a foreign SQLite file and a corrupt file with WORKSPACE_INVALID", () => {
    const root = tempProject();
    initWorkspace(root).close();
    const file = path.join(root, ".emberscope", "emberscope.sqlite");
    const foreign = new Database(file + ".foreign");
    foreign.exec("CREATE TABLE notes (body TEXT)");
    foreign.close();
    for (const suffix of ["-wal", "-shm"]) rmSync(file + suffix, { force: true });
    renameSync(file + ".foreign", file);
    expect(errorCode(() => openWorkspace({ cwd: root }))).toBe("WORKSPACE_INVALID");

    writeFileSync(file, "this is not a database, just text that happens to be here".repeat(100));
    expect(errorCode(() => openWorkspace({ cwd: root }))).toBe("WORKSPACE_INVALID");
  });

  it("marks the file with Emberscope's application id", () => {
    const ws = initWorkspace(tempProject());
    expect(ws.db.pragma("application_id", { simple: true })).toBe(APPLICATION_ID);
    ws.close();
  });

  it("updates runs by compare-and-set on expected_revision and keeps every revision", () => {
    const ws = initWorkspace(tempProject());
    try {
      const run = createRun(ws.db, { kind: "capture", source: "node-cpuprofile", title: "demo" });
      const second = updateRun(ws.db, run.run_id, 1, { status: "running", execution_state: "running" });
      expect(second.revision).toBe(2);
      expect(errorCode(() => updateRun(ws.db, run.run_id, 1, { status: "failed" }))).toBe("REVISION_CONFLICT");
      expect(getRun(ws.db, run.run_id).status).toBe("running");
      updateRun(ws.db, run.run_id, 2, { status: "succeeded" });
      expect(runRevisions(ws.db, run.run_id).map((r) => [r.revision, r.status])).toEqual([
        [1, "pending"],
        [2, "running"],
        [3, "succeeded"],
      ]);
      expect(errorCode(() => getRun(ws.db, "run_nope"))).toBe("RUN_NOT_FOUND");
    } finally {
      ws.close();
    }
  });

  it("init refuses an existing workspace with WORKSPACE_EXISTS", () => {
    const root = tempProject();
    initWorkspace(root).close();
    expect(errorCode(() => initWorkspace(root))).toBe("WORKSPACE_EXISTS");
  });
});
