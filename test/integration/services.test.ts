import { LATEST_SCHEMA_VERSION } from "../../server/store/migrations";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import {
  callService,
  collectGarbage,
  listArtifacts,
  listCommits,
  listRuns,
  purgeGarbage,
  restoreGarbage,
  showArtifact,
  showCommit,
  validateWorkspace,
  workspaceStatus,
  type ServiceContext,
} from "../../server/services";
import { createRun } from "../../server/store/runs";
import { sweepStaleStaging } from "../../server/store/staging";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject, withWorkspace } from "../helpers/project";
import { seedImport } from "../helpers/seed";

function contextFor(root: string): ServiceContext {
  return { locator: { cwd: root, projectRoot: root }, actor: "test" };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof EmberscopeError ? error.code : `untyped ${String(error)}`;
  }
  return "no error";
}

describe("services", () => {
  it("pages runs by keyset with opaque cursors bound to the filters", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const ids = Array.from({ length: 7 }, (_, i) => createRun(ws.db, { kind: i % 2 ? "capture" : "import", source: "x", title: `run ${i}` }).run_id);
    ws.close();
    const ctx = contextFor(root);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await callService(listRuns, ctx, { limit: 3, cursor });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((r) => r.run_id));
      cursor = page.next_cursor ?? undefined;
      expect(page.truncated).toBe(page.next_cursor !== null);
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const imports = await callService(listRuns, ctx, { limit: 2, kind: "import" });
    expect(imports.items.every((r) => r.kind === "import")).toBe(true);
    expect(await codeOf(callService(listRuns, ctx, { limit: 2, kind: "capture", cursor: imports.next_cursor! }))).toBe("STALE_CURSOR");
    expect(await codeOf(callService(listArtifacts, ctx, { cursor: imports.next_cursor! }))).toBe("STALE_CURSOR");
    expect(await codeOf(callService(listRuns, ctx, { limit: 0 }))).toBe("INVALID_ARGUMENTS");
    expect(await codeOf(callService(listRuns, ctx, { bogus: 1 }))).toBe("INVALID_ARGUMENTS");
  });

  it("reports workspace status with counts and HEAD", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const seeded = await seedImport(ws, { title: "one", native: "a;b 3" });
    ws.close();
    const status = await callService(workspaceStatus, contextFor(root), {});
    expect(status).toMatchObject({
      schema_version: LATEST_SCHEMA_VERSION,
      project_root: ".",
      head_commit_id: seeded.published.commit_id,
      counts: { runs: 1, artifacts: 1, commits: 2, generations: 1, operations_active: 0 },
    });
    const artifacts = await callService(listArtifacts, contextFor(root), { run_id: seeded.run.run_id });
    expect(artifacts.items.map((a) => a.artifact_id)).toEqual([seeded.artifactId]);
    const artifact = await callService(showArtifact, contextFor(root), { artifact_id: seeded.artifactId });
    expect(artifact).toMatchObject({ sensitivity: "normal", registrations: [{ run_id: seeded.run.run_id, format: "folded" }] });
    expect(JSON.stringify(artifact)).not.toContain(root);
    const commits = await callService(listCommits, contextFor(root), {});
    expect(commits.items.map((c) => c.seq)).toEqual([1, 0]);
    const head = await callService(showCommit, contextFor(root), { commit_id: "HEAD" });
    expect(head.generations[0].files.map((f) => f.table)).toEqual(["frames", "samples"]);
  });

  it("validate reports an object missing from disk and changes nothing", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const seeded = await seedImport(ws, { title: "one", native: "a;b 3" });
    const victim = ws.objects.pathOf(seeded.fileObjectIds[0]);
    ws.close();
    const ctx = contextFor(root);
    expect((await callService(validateWorkspace, ctx, {})).ok).toBe(true);
    rmSync(victim);
    const listing = () => readdirSync(path.join(root, ".emberscope"), { recursive: true }).map(String).sort();
    const before = listing();
    const report = await callService(validateWorkspace, ctx, {});
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([expect.objectContaining({ code: "OBJECT_MISSING", subject: seeded.fileObjectIds[0] })]);
    expect(listing()).toEqual(before);
    expect(existsSync(victim)).toBe(false);
  });

  it("validate --full finds bytes that no longer match their hash", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const seeded = await seedImport(ws, { title: "one", native: "a;b 3" });
    const victim = ws.objects.pathOf(seeded.artifactId);
    ws.close();
    chmodSync(victim, 0o644);
    writeFileSync(victim, "a;b 4");
    const quick = await callService(validateWorkspace, contextFor(root), {});
    expect(quick.ok).toBe(true);
    const full = await callService(validateWorkspace, contextFor(root), { full: true });
    expect(full.problems.map((p) => p.code)).toEqual(["OBJECT_CONTENT_MISMATCH"]);
  });

  it("the server's start-up sweep removes stale staging files and directories and keeps fresh ones", async () => {
    await withWorkspace(async (ws) => {
      const old = (Date.now() - 2 * 3600_000) / 1000;
      const staleFile = path.join(ws.layout.tmp, "object-1-abandoned");
      const staleDir = path.join(ws.layout.tmp, "extract-1-abandoned");
      const freshDir = path.join(ws.layout.tmp, "extract-2-running");
      writeFileSync(staleFile, "partial");
      mkdirSync(path.join(staleDir, "spill"), { recursive: true });
      writeFileSync(path.join(staleDir, "spill", "block.tmp"), "x");
      mkdirSync(freshDir);
      utimesSync(staleFile, old, old);
      utimesSync(staleDir, old, old);
      expect((await sweepStaleStaging(ws)).entries).toBe(2);
      expect(readdirSync(ws.layout.tmp)).toEqual(["extract-2-running"]);
    });
  });

  it("gc lists unreachable objects and stale tmp files, moves them to restorable trash, and purges only old manifests", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const kept = await seedImport(ws, { title: "kept", native: "a;b 3" });
    const orphan = await ws.objects.put(Buffer.from("bytes no commit refers to"));
    const staleTmp = path.join(ws.layout.tmp, "object-123-abandoned");
    writeFileSync(staleTmp, "partial");
    // A crashed import's staging directory (DuckDB's spill and part files).
    const staleDir = path.join(ws.layout.tmp, "extract-123-abandoned");
    mkdirSync(path.join(staleDir, "spill"), { recursive: true });
    writeFileSync(path.join(staleDir, "stacks.part0.parquet"), "12345");
    writeFileSync(path.join(staleDir, "spill", "block.tmp"), "1234567");
    const old = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(ws.objects.pathOf(orphan.id), old, old);
    utimesSync(staleTmp, old, old);
    utimesSync(staleDir, old, old);
    const fresh = await ws.objects.put(Buffer.from("unreachable but just written"));
    ws.close();
    const ctx = contextFor(root);

    const dry = await callService(collectGarbage, ctx, {});
    expect(dry.applied).toBe(false);
    expect(dry.collectable.map((e) => e.kind).sort()).toEqual(["object", "tmp", "tmp"]);
    expect(dry.collectable.find((e) => e.path.endsWith("extract-123-abandoned"))!.size_bytes).toBe(12);
    expect(dry.kept_recent).toBe(1);
    expect(existsSync(staleTmp)).toBe(true);

    const applied = await callService(collectGarbage, ctx, { apply: true });
    expect(applied.manifest_id).toMatch(/^gcm_/);
    expect(existsSync(staleTmp)).toBe(false);
    expect(existsSync(staleDir)).toBe(false);
    expect(await codeOf(callService(showArtifact, ctx, { artifact_id: kept.artifactId }))).toBe("no error");
    expect((await callService(validateWorkspace, ctx, { full: true })).ok).toBe(true);
    expect(applied.trash).toEqual([expect.objectContaining({ manifest_id: applied.manifest_id, entries: 3, purgeable: false })]);

    expect(await codeOf(callService(purgeGarbage, ctx, { manifest_id: applied.manifest_id! }))).toBe("POLICY_DENIED");
    const restored = await callService(restoreGarbage, ctx, { manifest_id: applied.manifest_id! });
    expect(restored.restored).toBe(3);
    expect(existsSync(staleTmp)).toBe(true);
    expect(existsSync(path.join(staleDir, "spill", "block.tmp"))).toBe(true);

    const again = await callService(collectGarbage, ctx, { apply: true, min_age_seconds: 0 });
    expect(again.collectable_count).toBe(4);
    const manifestFile = path.join(root, ".emberscope", "trash", again.manifest_id!, "manifest.json");
    const manifest = JSON.parse((await import("node:fs")).readFileSync(manifestFile, "utf8"));
    manifest.created_at = new Date(Date.now() - 25 * 3600_000).toISOString();
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const purged = await callService(purgeGarbage, ctx, { manifest_id: again.manifest_id! });
    expect(purged.purged_entries).toBe(4);
    expect(existsSync(path.join(root, ".emberscope", "trash", again.manifest_id!))).toBe(false);
    expect(fresh.created).toBe(true);
    expect(await codeOf(callService(restoreGarbage, ctx, { manifest_id: "gcm_00000000000000000000000000" }))).toBe("INVALID_ARGUMENTS");
  });

  it("every workspace operation on a missing workspace fails with WORKSPACE_NOT_FOUND and recovery workspace.init", async () => {
    const ctx = contextFor(tempProject());
    for (const [def, input] of [
      [workspaceStatus, {}],
      [listRuns, {}],
      [listArtifacts, {}],
      [listCommits, {}],
      [validateWorkspace, {}],
      [collectGarbage, {}],
    ] as const) {
      try {
        await callService(def as never, ctx, input);
        expect.unreachable(def.name);
      } catch (error) {
        expect((error as EmberscopeError).toDocument()).toMatchObject({ code: "WORKSPACE_NOT_FOUND", recovery: { operation: "workspace.init" } });
      }
    }
  });
});
