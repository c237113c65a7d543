import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import { callService, cancelOperation, collectGarbage, importArtifact, listOperations, validateWorkspace, type ServiceContext } from "../../server/services";
import { THREADED_WRITER_FROM_BYTES } from "../../server/evidence/extract";
import { headCommit, pin } from "../../server/store/corpus";
import { startLeasedOperation } from "../../server/services/leased-operation";
import { reconcileExpiredLeases } from "../../server/store/operations";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { chromeTraceFile } from "../bench/generators";
import { CLI, runCli } from "../helpers/cli";
import { tempProject } from "../helpers/project";
import { startServer } from "../helpers/server";

// A trace large enough to take the staged path (parsed while its copy is hashed, the writer on its
// own thread), and to be killed mid-way: about 2-4 s per import here.
let bigTrace: string;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), "emberscope-leases-"));
  bigTrace = path.join(scratch, "big.trace.json");
  await chromeTraceFile(bigTrace, 30 * 1024 * 1024);
}, 60_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function project(): { root: string; ctx: ServiceContext } {
  const root = tempProject();
  initWorkspace(root).close();
  return { root, ctx: { locator: { cwd: root, projectRoot: root }, actor: "test" } };
}

/** A CLI import as a child process (kill it to interrupt it). */
function startImport(root: string, file: string): { child: ChildProcess; done: Promise<{ code: number | null; json: any; stderr: string }> } {
  const child = spawn(process.execPath, [CLI, "import", file, "--json"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const done = new Promise<{ code: number | null; json: any; stderr: string }>((resolve) =>
    child.on("exit", (code) => {
      let json: unknown = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        // killed before it printed
      }
      resolve({ code, json, stderr });
    }),
  );
  return { child, done };
}

function sql<T>(root: string, query: string, ...params: unknown[]): T[] {
  const ws = openWorkspace({ cwd: root, projectRoot: root });
  try {
    return ws.db.prepare(query).all(...params) as T[];
  } finally {
    ws.close();
  }
}

async function until<T>(probe: () => T | null | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** HEAD is the last commit, every generation it names has its files, and validate finds no problem. */
async function assertHeadValid(root: string, ctx: ServiceContext): Promise<void> {
  const report = await callService(validateWorkspace, ctx, { full: true });
  expect(report.problems).toEqual([]);
  const ws = openWorkspace({ cwd: root, projectRoot: root });
  try {
    const head = headCommit(ws.db);
    expect(head.seq).toBe((ws.db.prepare("SELECT count(*) AS n FROM commits").get() as { n: number }).n - 1);
    for (const g of pin(ws.db, "HEAD").generations) {
      for (const f of g.files) expect(await ws.objects.verifySize(f.object_id as never, f.size_bytes)).toBe(true);
    }
  } finally {
    ws.close();
  }
}

const tmpEntries = (root: string) => readdirSync(path.join(root, ".emberscope", "tmp"));

describe("imports hold a lease", () => {
  it("an import killed -9 at random points ends failed with INTERRUPTED: validate --full reports its staging, gc --apply collects it, HEAD stays valid", async () => {
    const { root, ctx } = project();
    const KILLS = 5;
    const seen = new Set<string>();
    const killed: string[] = [];
    for (let i = 0; i < KILLS; i++) {
      const { child, done } = startImport(root, bigTrace);
      // Once its run exists: somewhere in the copy, the parse, the write or the publish.
      const run = await until(() => sql<{ id: string }>(root, "SELECT id FROM runs ORDER BY created_at DESC LIMIT 1").find((r) => !seen.has(r.id)), 30_000, "the import's run");
      seen.add(run.id);
      // The first two early (an idle machine imports the file in about a second), the rest anywhere.
      await new Promise((r) => setTimeout(r, Math.random() * (i < 2 ? 300 : 1500)));
      child.kill("SIGKILL");
      const exit = await done;
      if (exit.json === null) killed.push(run.id);
    }
    expect(killed.length).toBeGreaterThan(0);
    // Nothing has reconciled the last one yet (a later import waiting for an earlier one's claim
    // reconciles that one): this is what a kill leaves.
    expect(sql<{ status: string }>(root, "SELECT status FROM runs WHERE id = ?", killed.at(-1))[0].status).toBe("running");
    expect(tmpEntries(root).length).toBeGreaterThan(0);

    const validated = await runCli(["validate", "--full", "--json"], { cwd: root });
    expect(validated.code).toBe(0);
    const notes = validated.json.notes;
    expect(notes.interrupted_operations.length).toBeGreaterThan(0);
    expect(notes.stale_tmp_files).toBe(tmpEntries(root).length);
    expect(notes.stale_tmp_bytes).toBeGreaterThan(0);
    for (const entry of notes.stale_tmp) {
      expect(entry).toMatchObject({ path: expect.stringMatching(/^tmp\/op_/), size_bytes: expect.any(Number), age_seconds: expect.any(Number) });
      expect(killed).toContain(entry.run_id);
    }
    for (const runId of killed) {
      const shown = await runCli(["runs", "show", runId, "--json"], { cwd: root });
      expect(shown.json).toMatchObject({
        status: "failed",
        extraction_state: "failed",
        details: { error: { code: "INTERRUPTED", retryable: true, details: { staging: expect.any(Array) }, recovery: { operation: "imports.import", arguments: { path: bigTrace }, safe_to_repeat: true } } },
      });
    }

    const collected = await runCli(["gc", "--apply", "--json"], { cwd: root });
    expect(collected.code).toBe(0);
    expect(collected.json.collectable.filter((e: { kind: string }) => e.kind === "tmp")).toHaveLength(notes.stale_tmp_files);
    expect(tmpEntries(root)).toEqual([]);
    await assertHeadValid(root, ctx);
    expect((await callService(validateWorkspace, ctx, {})).notes).toMatchObject({ stale_tmp_files: 0, interrupted_operations: [] });

    const again = await runCli(["import", bigTrace, "--json"], { cwd: root });
    expect(again.code).toBe(0);
    expect(again.json.rows.spans).toBeGreaterThan(0);
    await assertHeadValid(root, ctx);
  }, 240_000);

  it("mcp serve, as it starts, ends the imports whose process died and removes their staging", async () => {
    const { root } = project();
    const { child, done } = startImport(root, bigTrace);
    const run = await until(() => sql<{ id: string }>(root, "SELECT id FROM runs WHERE status = 'running'")[0], 30_000, "the import's run");
    await until(() => existsSync(path.join(root, ".emberscope", "tmp")) && tmpEntries(root).length > 0, 30_000, "staging");
    child.kill("SIGKILL");
    await done;

    const server = spawn(process.execPath, [CLI, "mcp", "serve"], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    server.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise((resolve) => server.on("exit", resolve));
    await until(() => stderr.includes("serving on stdio"), 30_000, "mcp serve to start");
    server.stdin!.end();
    await exited;
    expect(stderr).toMatch(/Ended 1 operation\(s\) whose holder had stopped/);
    const [after] = sql<{ status: string; details: string }>(root, "SELECT status, details FROM runs WHERE id = ?", run.id);
    expect(after.status).toBe("failed");
    expect(JSON.parse(after.details).error).toMatchObject({ code: "INTERRUPTED" });
    expect(tmpEntries(root)).toEqual([]);
  }, 120_000);

  it("serve (the web workbench), as it starts, ends the imports whose process died and removes their staging", async () => {
    const { root, ctx } = project();
    const { child, done } = startImport(root, bigTrace);
    const run = await until(() => sql<{ id: string }>(root, "SELECT id FROM runs WHERE status = 'running'")[0], 30_000, "the import's run");
    await until(() => existsSync(path.join(root, ".emberscope", "tmp")) && tmpEntries(root).length > 0, 30_000, "staging");
    child.kill("SIGKILL");
    await done;
    expect(sql<{ status: string }>(root, "SELECT status FROM runs WHERE id = ?", run.id)[0].status).toBe("running");

    // Announced only once its start-up is done (needs the build, as every `serve` test does).
    const server = await startServer(root, ["--workers", "0"]);
    try {
      const [after] = sql<{ status: string; details: string }>(root, "SELECT status, details FROM runs WHERE id = ?", run.id);
      expect(after.status).toBe("failed");
      expect(JSON.parse(after.details).error).toMatchObject({ code: "INTERRUPTED" });
      expect(tmpEntries(root)).toEqual([]);
      expect((await callService(listOperations, ctx, { active: true })).items).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("gc --apply --min-age 0, run again and again during an import, leaves the import intact and it succeeds", async () => {
    const { root, ctx } = project();
    const { done } = startImport(root, bigTrace);
    let finished = false;
    void done.then(() => (finished = true));
    let keptLive = 0;
    let rounds = 0;
    const collected: string[] = [];
    while (!finished) {
      const report = await callService(collectGarbage, ctx, { apply: true, min_age_seconds: 0 });
      keptLive += report.kept_live;
      collected.push(...report.collectable.map((e) => e.path));
      rounds++;
      await new Promise((r) => setTimeout(r, 50));
    }
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ format: "chrome-trace", reused_generation: false });
    expect(rounds).toBeGreaterThan(3);
    expect(keptLive).toBeGreaterThan(0); // gc ran while the import's staging and objects were live
    expect(collected).toEqual([]);
    await assertHeadValid(root, ctx);
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      expect(pin(ws.db, "HEAD").generations.map((g) => g.generation_id)).toEqual([result.json.generation_id]);
    } finally {
      ws.close();
    }
  }, 120_000);

  it("gc keeps an ended operation's staging while its process still holds the lease (an import publishes, then removes its staging as it closes), for a minute at most", async () => {
    const { root, ctx } = project();
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const lease = startLeasedOperation(ws, { kind: "import", intent: { test: "staging held" }, run: { kind: "import", source: "folded", title: "held" } });
      writeFileSync(path.join(lease.ws.layout.tmp, "part.parquet"), "x".repeat(1000));
      lease.finish({ state: "succeeded", result: {} });
      const held = await callService(collectGarbage, ctx, { apply: true, min_age_seconds: 0 });
      expect(held.collectable).toEqual([]);
      expect(held.kept_live).toBe(1);
      expect(existsSync(path.join(lease.ws.layout.tmp, "part.parquet"))).toBe(true);
      // A minute after it ended, the staging is abandoned even though its holder still runs (a pool worker that could not remove it).
      ws.db.prepare("UPDATE operations SET updated_at = ? WHERE id = ?").run(new Date(Date.now() - 61_000).toISOString(), lease.operationId);
      const settled = await callService(collectGarbage, ctx, { apply: true, min_age_seconds: 0 });
      expect(settled.collectable.map((e) => e.path)).toEqual([path.relative(ws.layout.dir, lease.ws.layout.tmp)]);
      await lease.close();
      expect(existsSync(lease.ws.layout.tmp)).toBe(false);
    } finally {
      ws.close();
    }
  });

  it("four concurrent imports of one large file extract it once: one generation, the other three reuse it", async () => {
    const { root, ctx } = project();
    const imports = Array.from({ length: 4 }, () => startImport(root, bigTrace));
    const results = await Promise.all(imports.map((i) => i.done));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    const generations = new Set(results.map((r) => r.json.generation_id));
    expect(generations.size).toBe(1);
    const reused = results.map((r) => r.json.reused_generation).sort();
    expect(reused).toEqual([false, true, true, true]);
    for (const r of results.filter((r) => r.json.reused_generation)) expect(r.json.timings_ms).toMatchObject({ parse: 0, totals: 0, write: 0 });
    expect(sql<{ n: number }>(root, "SELECT count(*) AS n FROM generations")[0].n).toBe(1);
    // Only one set of Parquet files was written: no losers' files lie unreachable.
    const report = await callService(validateWorkspace, ctx, {});
    expect(report.notes).toMatchObject({ unreachable_objects: 0, stale_tmp_files: 0 });
    expect(sql<{ n: number }>(root, "SELECT count(*) AS n FROM runs WHERE status = 'succeeded'")[0].n).toBe(4);
  }, 180_000);

  it("concurrent imports of one small file in one process extract it once", async () => {
    const { root, ctx } = project();
    const file = path.join(root, "app.folded");
    writeFileSync(file, Array.from({ length: 20_000 }, (_, i) => `main;work${i % 97};leaf${i % 13} ${1 + (i % 7)}`).join("\n") + "\n");
    const results = await Promise.all(Array.from({ length: 4 }, () => callService(importArtifact, ctx, { path: file })));
    expect(new Set(results.map((r) => r.generation_id)).size).toBe(1);
    expect(results.map((r) => r.reused_generation).sort()).toEqual([false, true, true, true]);
    expect((await callService(validateWorkspace, ctx, {})).notes.unreachable_objects).toBe(0);
  }, 60_000);

  it("a cancelled import stops, publishes nothing, and its run is cancelled", async () => {
    const { root, ctx } = project();
    expect((await import("node:fs")).statSync(bigTrace).size).toBeGreaterThan(THREADED_WRITER_FROM_BYTES);
    const importing = callService(importArtifact, ctx, { path: bigTrace }).then(
      () => null,
      (error: unknown) => error,
    );
    const op = await until(() => sql<{ id: string; run_id: string }>(root, "SELECT id, run_id FROM operations WHERE kind = 'import' AND phase = 'parsing'")[0], 30_000, "the import to parse");
    const answered = await callService(cancelOperation, ctx, { operation_id: op.id });
    expect(["cancelling", "cancelled"]).toContain(answered.state);
    const error = await importing;
    expect(error).toBeInstanceOf(EmberscopeError);
    expect((error as EmberscopeError).code).toBe("CANCELLED");
    expect(sql<{ status: string }>(root, "SELECT status FROM runs WHERE id = ?", op.run_id)[0].status).toBe("cancelled");
    expect(sql<{ state: string }>(root, "SELECT state FROM operations WHERE id = ?", op.id)[0].state).toBe("cancelled");
    expect(sql<{ n: number }>(root, "SELECT count(*) AS n FROM generations")[0].n).toBe(0);
    expect(tmpEntries(root)).toEqual([]);
    const listed = await callService(listOperations, ctx, { active: true });
    expect(listed.items).toEqual([]);
  }, 60_000);

  it("an import whose lease was reconciled away while it ran publishes nothing and fails with INTERRUPTED", async () => {
    const { root, ctx } = project();
    const importing = callService(importArtifact, ctx, { path: bigTrace }).then(
      () => null,
      (error: unknown) => error,
    );
    const op = await until(() => sql<{ id: string }>(root, "SELECT id FROM operations WHERE kind = 'import' AND phase = 'parsing'")[0], 30_000, "the import to parse");
    // As if its process had been silent past the lease: another process reconciles it.
    const other = openWorkspace({ cwd: root, projectRoot: root });
    try {
      other.db.prepare("UPDATE operations SET lease_expires_at = ? WHERE id = ?").run(new Date(Date.now() - 1000).toISOString(), op.id);
      expect(reconcileExpiredLeases(other.db)).toEqual([op.id]);
    } finally {
      other.close();
    }
    const error = await importing;
    expect(error).toBeInstanceOf(EmberscopeError);
    expect((error as EmberscopeError).code).toBe("INTERRUPTED");
    expect(sql<{ n: number }>(root, "SELECT count(*) AS n FROM generations")[0].n).toBe(0);
    await assertHeadValid(root, ctx);
  }, 60_000);
});
