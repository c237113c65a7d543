import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { EmberscopeError, type ErrorDocument } from "../../server/domain/errors";
import type { Run } from "../../server/domain/models";
import { callService, importArtifact, listRunFacets, listRuns, renameRun, runCapture, showRun, type ServiceContext } from "../../server/services";
import { captureTitle } from "../../server/services/captures";
import { runRevisions } from "../../server/store/runs";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";
import { demoProject } from "../helpers/demo";
import { tempProject } from "../helpers/project";
import { seedRuns } from "../helpers/seed";

const ctxFor = (root: string): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor: "test" });

async function refusal(promise: Promise<unknown>): Promise<ErrorDocument> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EmberscopeError) return error.toDocument();
    throw error;
  }
  throw new Error("expected a typed error");
}

type ListInput = z.input<typeof listRuns.input>;

/** Every run the list gives for `input`, following next_cursor to the end; also returns each page's ids. */
async function walkForward(ctx: ServiceContext, input: ListInput) {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await callService(listRuns, ctx, { ...input, cursor });
    pages.push(page.items.map((r) => r.run_id));
    expect(page.truncated).toBe(page.next_cursor !== null);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return pages;
}

/** The 300-run library: titles with case-only differences and repeats, three sources, two workloads. */
function seedLibrary(root: string): Run[] {
  const ws = initWorkspace(root);
  try {
    return seedRuns(ws, 300, (i) =>
      i % 3 === 0
        ? { kind: "capture", source: i % 2 ? "node-cpuprofile" : "perf", title: `${i % 2 ? "Demo" : "demo"} capture ${i % 10}`, status: i % 9 === 0 ? "failed" : "succeeded", details: { workload: i % 2 ? "demo" : "bench", adapter: "node-cpuprofile" } }
        : { kind: "import", source: "folded", title: `profile-${String(i).padStart(3, "0")}.folded`, status: "succeeded", details: { file_name: `profile-${String(i).padStart(3, "0")}.folded`, format: "folded" } },
    );
  } finally {
    ws.close();
  }
}

const byNewest = (a: Run, b: Run) => (a.created_at === b.created_at ? (a.run_id < b.run_id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);
// SQLite's NOCASE folds ASCII letters only, as toLowerCase does for these ASCII titles.
const byTitle = (a: Run, b: Run) => {
  const [x, y] = [a.title.toLowerCase(), b.title.toLowerCase()];
  return x === y ? (a.run_id < b.run_id ? -1 : 1) : x < y ? -1 : 1;
};

describe("the runs library (runs.list, runs.facets, runs.update)", () => {
  it("pages through 300 runs in each order without duplicates or gaps, forward and back", async () => {
    const root = tempProject();
    const runs = seedLibrary(root);
    const ctx = ctxFor(root);
    const expected = {
      newest: [...runs].sort(byNewest).map((r) => r.run_id),
      oldest: [...runs].sort(byNewest).reverse().map((r) => r.run_id),
      title: [...runs].sort(byTitle).map((r) => r.run_id),
    };
    for (const order of ["newest", "oldest", "title"] as const) {
      const pages = await walkForward(ctx, { limit: 40, order });
      expect(pages.map((p) => p.length)).toEqual([40, 40, 40, 40, 40, 40, 40, 20]);
      expect(pages.flat()).toEqual(expected[order]);

      // From the last page back to the first by previous_cursor: the same pages, in reverse.
      let cursor: string | undefined;
      for (let i = 0; i < pages.length - 1; i++) cursor = (await callService(listRuns, ctx, { limit: 40, order, cursor })).next_cursor!;
      const last = await callService(listRuns, ctx, { limit: 40, order, cursor });
      const back: string[][] = [last.items.map((r) => r.run_id)];
      let previous = last.previous_cursor;
      while (previous) {
        const page = await callService(listRuns, ctx, { limit: 40, order, cursor: previous });
        back.unshift(page.items.map((r) => r.run_id));
        expect(page.next_cursor).not.toBeNull();
        previous = page.previous_cursor;
      }
      expect(back).toEqual(pages);
    }
    const first = await callService(listRuns, ctx, { limit: 40 });
    expect(first.previous_cursor).toBeNull();
  });

  it("filters by text (title, file name, id, source), kind, status, source, workload and creation time", async () => {
    const root = tempProject();
    const runs = seedLibrary(root);
    const ctx = ctxFor(root);
    const all = async (input: ListInput) => (await walkForward(ctx, { limit: 500, ...input })).flat();
    const ids = (pick: (r: Run) => boolean) => runs.filter(pick).sort(byNewest).map((r) => r.run_id);

    expect(await all({ text: "PROFILE-01" })).toEqual(ids((r) => r.title.startsWith("profile-01")));
    expect(await all({ text: runs[7].run_id.slice(-12) })).toEqual([runs[7].run_id]);
    expect(await all({ text: "node-cpu" })).toEqual(ids((r) => r.source === "node-cpuprofile"));
    // LIKE's wildcards are literal characters in the text.
    expect(await all({ text: "%" })).toEqual([]);
    expect(await all({ text: "profile_0" })).toEqual([]);
    // A renamed import is still found by its file name.
    await callService(renameRun, ctx, { run_id: runs[1].run_id, title: "baseline before the cache change" });
    expect(await all({ text: "profile-001" })).toEqual([runs[1].run_id]);
    expect(await all({ text: "cache change" })).toEqual([runs[1].run_id]);

    expect(await all({ kind: "capture" })).toEqual(ids((r) => r.kind === "capture"));
    // Each page says how many runs match in all.
    expect(await callService(listRuns, ctx, { kind: "capture", limit: 5 })).toMatchObject({ matching: 100, items: expect.any(Array) });
    expect((await callService(listRuns, ctx, { text: "profile-01", limit: 5 })).matching).toBe(7);
    expect(await all({ status: "failed" })).toEqual(ids((r) => r.status === "failed"));
    expect(await all({ source: "node-cpuprofile", status: "succeeded" })).toEqual(ids((r) => r.source === "node-cpuprofile" && r.status === "succeeded"));
    expect(await all({ workload: "bench", order: "title" })).toEqual(runs.filter((r) => r.details.workload === "bench").sort(byTitle).map((r) => r.run_id));

    const middle = runs[150].created_at;
    expect(await all({ created_from: middle })).toEqual(ids((r) => r.created_at >= middle));
    expect(await all({ created_to: middle })).toEqual(ids((r) => r.created_at <= middle));
    const today = middle.slice(0, 10);
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    expect(await all({ created_from: yesterday, created_to: today })).toHaveLength(runs.filter((r) => r.created_at.startsWith(today)).length);
    expect(await all({ created_from: tomorrow })).toEqual([]);
    expect(await all({ created_to: yesterday })).toEqual([]);

    const facets = await callService(listRunFacets, ctx, {});
    expect(facets.total).toBe(300);
    expect(facets.sources).toEqual([
      { source: "folded", kind: "import", runs: 200 },
      { source: "node-cpuprofile", kind: "capture", runs: 50 },
      { source: "perf", kind: "capture", runs: 50 },
    ]);
    expect(facets.workloads).toEqual([
      { workload: "bench", runs: 50 },
      { workload: "demo", runs: 50 },
    ]);
  });

  it("refuses bad filters naming the argument, and a cursor of other filters or another order as STALE_CURSOR", async () => {
    const root = tempProject();
    seedLibrary(root);
    const ctx = ctxFor(root);
    expect(await refusal(callService(listRuns, ctx, { created_from: "yesterday" }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "created_from" } });
    expect(await refusal(callService(listRuns, ctx, { created_to: "2026-02-30" }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "created_to" } });
    expect(await refusal(callService(listRuns, ctx, { created_from: "2026-12-02", created_to: "2026-12-01" }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "created_to" } });
    expect(await refusal(callService(listRuns, ctx, { order: "size" }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "order" } });
    expect(await refusal(callService(listRuns, ctx, { kind: "upload" }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "kind" } });
    expect(await refusal(callService(listRuns, ctx, { text: "x".repeat(201) }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "text" } });

    const profiles = await callService(listRuns, ctx, { limit: 10, text: "profile" });
    const otherText = await refusal(callService(listRuns, ctx, { limit: 10, text: "demo", cursor: profiles.next_cursor! }));
    expect(otherText).toMatchObject({ code: "STALE_CURSOR", details: { argument: "cursor" }, recovery: { operation: "runs.list", arguments: { text: "demo", order: "newest", limit: 10 } } });
    expect(await refusal(callService(listRuns, ctx, { limit: 10, text: "profile", order: "title", cursor: profiles.next_cursor! }))).toMatchObject({ code: "STALE_CURSOR" });
    // The same filters spelled alike keep the cursor valid (surrounding spaces are trimmed).
    expect((await callService(listRuns, ctx, { limit: 10, text: " profile ", cursor: profiles.next_cursor! })).items).toHaveLength(10);
  });

  it("renames a run by compare-and-set: a stale revision is REVISION_CONFLICT and every revision is kept", async () => {
    const root = tempProject();
    const [run] = seedLibrary(root);
    const ctx = ctxFor(root);
    const renamed = await callService(renameRun, ctx, { run_id: run.run_id, title: "  checkout, cold cache  ", expected_revision: run.revision });
    expect(renamed).toMatchObject({ title: "checkout, cold cache", revision: run.revision + 1, status: run.status });

    const stale = await refusal(callService(renameRun, ctx, { run_id: run.run_id, title: "lost update", expected_revision: run.revision }));
    expect(stale).toMatchObject({ code: "REVISION_CONFLICT", retryable: true, details: { current_revision: renamed.revision }, recovery: { operation: "runs.get", arguments: { run_id: run.run_id } } });
    expect((await callService(showRun, ctx, { run_id: run.run_id })).title).toBe("checkout, cold cache");

    expect(await refusal(callService(renameRun, ctx, { run_id: run.run_id, title: "   " }))).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "title" } });
    expect(await refusal(callService(renameRun, ctx, { run_id: "run_missing", title: "x" }))).toMatchObject({ code: "RUN_NOT_FOUND" });

    // The CLI: without --revision the current revision is renamed; with a stale one it exits with the conflict family's code.
    const cli = await runCli(["runs", "rename", run.run_id, "checkout, warm cache", "--json", "--project-root", "."], { cwd: root });
    expect(cli.code).toBe(0);
    expect(cli.json).toMatchObject({ run_id: run.run_id, title: "checkout, warm cache", revision: renamed.revision + 1 });
    const conflict = await runCli(["runs", "rename", run.run_id, "again", "--revision", String(renamed.revision), "--json", "--project-root", "."], { cwd: root });
    expect(conflict.code).toBe(6);
    expect(conflict.json.code).toBe("REVISION_CONFLICT");
    const listed = await runCli(["runs", "list", "--text", "warm cache", "--json", "--project-root", "."], { cwd: root });
    expect(listed.json.items.map((r: Run) => r.run_id)).toEqual([run.run_id]);

    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      expect(runRevisions(ws.db, run.run_id).map((r) => r.title)).toEqual([run.title, "checkout, cold cache", "checkout, warm cache"]);
    } finally {
      ws.close();
    }
  });

  it("titles an import by its file name and a capture by workload, parameters, adapter and time", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const file = path.join(root, "checkout-before.folded");
    writeFileSync(file, "main;checkout;render 7\nmain;idle 3\n");
    const imported = await callService(importArtifact, ctx, { path: file });
    expect((await callService(showRun, ctx, { run_id: imported.run_id })).title).toBe("checkout-before.folded");

    const hash = await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.2, mode: "hash" } });
    const primes = await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.2 } });
    const [a, b] = await Promise.all([hash, primes].map((c) => callService(showRun, ctx, { run_id: c.run_id })));
    expect(a.title).toMatch(/^demo \(seconds=0\.2, mode=hash\) · node-cpuprofile · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(b.title).toMatch(/^demo \(seconds=0\.2, mode=primes\) · node-cpuprofile · /);
    // The time is when the capture was asked for: its run record follows within moments.
    const titled = Date.parse(`${a.title.slice(-23, -4).replace(" ", "T")}Z`);
    expect(Math.abs(Date.parse(a.created_at) - titled)).toBeLessThan(2000);

    expect(captureTitle("w", {}, "perf", "2026-12-01T14:03:07.123Z")).toBe("w · perf · 2026-12-01 14:03:07 UTC");
    const long = captureTitle("w", { text: "x".repeat(300) }, "perf", "2026-12-01T14:03:07.123Z");
    expect(long).toBe(`w (text=${"x".repeat(74)}…) · perf · 2026-12-01 14:03:07 UTC`);
  }, 60_000);
});
