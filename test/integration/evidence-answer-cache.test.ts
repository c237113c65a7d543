import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineQuery } from "../../analysis/queries/define";
import { openEvidence } from "../../server/evidence/engine";
import { analyzeHotspots, callService, flameTimeline, flameTree, importArtifact, summarizeRun, type ServiceContext } from "../../server/services";
import { initWorkspace, openWorkspace, type Workspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

/**
 * The engine keeps answers (by workspace, commit and SQL text) and lets a question asked while the
 * same one runs wait for it. These tests show that no question ever gets another's rows: another
 * commit, other tracks, other transforms; and that rows handed out can be changed by their
 * holder without changing anyone else's.
 */

const FOLDED_A = "main;parse;lex 30\nmain;run;step 20\nmain;run;malloc 10\nmain 3\n";
const FOLDED_B = "main;other;work 7\n";

function project(): { dir: string; ctx: ServiceContext } {
  const dir = tempProject();
  initWorkspace(dir).close();
  return { dir, ctx: { locator: { cwd: dir, projectRoot: dir }, actor: "test" } };
}

async function withWorkspace(dir: string, use: (ws: Workspace) => Promise<void>): Promise<void> {
  const ws = openWorkspace({ cwd: dir, projectRoot: dir });
  try {
    await use(ws);
  } finally {
    ws.close();
  }
}

const frameCount = defineQuery({
  name: "test_frame_count",
  description: "Frames of every generation the commit holds (no generation filter: the answer is the commit's).",
  params: z.object({}),
  row: z.object({ n: z.number() }),
  sql: "SELECT count(*)::DOUBLE AS n FROM frames",
});

describe("the engine's kept answers", () => {
  it("the same SQL over another commit is answered from that commit, not from the kept answer of the first", async () => {
    const { dir, ctx } = project();
    writeFileSync(path.join(dir, "a.folded"), FOLDED_A);
    writeFileSync(path.join(dir, "b.folded"), FOLDED_B);
    const a = await callService(importArtifact, ctx, { path: "a.folded" });
    const b = await callService(importArtifact, ctx, { path: "b.folded" });
    expect(a.commit_id).not.toBe(b.commit_id);
    await withWorkspace(dir, async (ws) => {
      const first = await (await openEvidence(ws, a.commit_id)).run(frameCount, {});
      // Asked twice at the first commit (the second from the kept answer), then at the second commit.
      expect(await (await openEvidence(ws, a.commit_id)).run(frameCount, {})).toEqual(first);
      const second = await (await openEvidence(ws, b.commit_id)).run(frameCount, {});
      expect(second[0].n).toBeGreaterThan(first[0].n);
    });
  });

  it("flame trees of other tracks and other transforms each get their own answer, asked in any order and at once", async () => {
    const { dir, ctx } = project();
    copyFileSync(path.resolve(import.meta.dirname, "../fixtures/tracks/two-profiles.speedscope.json"), path.join(dir, "two.speedscope.json"));
    const run = (await callService(importArtifact, ctx, { path: "two.speedscope.json" })).run_id;
    const summary = await callService(summarizeRun, ctx, { run_id: run });
    const [main, worker] = summary.sampled_tracks.map((t) => t.track_key);
    expect(worker).toBeDefined();
    const names = (nodes: { name: string }[]) => nodes.map((n) => n.name).sort();
    const tree = (input: Record<string, unknown>) => callService(flameTree, ctx, { run_id: run, ...input });

    const all = await tree({ tracks: "all" });
    const onMain = await tree({ tracks: [main] });
    const onWorker = await tree({ tracks: [worker] });
    expect(names(onMain.nodes)).not.toEqual(names(onWorker.nodes));
    expect(onMain.nodes.reduce((s, n) => s + n.self, 0) + onWorker.nodes.reduce((s, n) => s + n.self, 0)).toBe(all.nodes.reduce((s, n) => s + n.self, 0));
    // Asked again, in the other order: the same answers.
    expect(await tree({ tracks: [worker] })).toEqual(onWorker);
    expect(await tree({ tracks: [main] })).toEqual(onMain);
    expect(await tree({ tracks: "all" })).toEqual(all);

    // Two transforms (and the plain tree) asked at once, twice each: every answer is its own question's.
    const hot = await callService(analyzeHotspots, ctx, { run_id: run, tracks: "all", limit: 10 });
    const keyOf = (name: string) => hot.rows.find((r) => r.name === name)!.frame_key;
    const mergeRender = { tracks: "all", transforms: [{ type: "merge-function", frame_key: keyOf("render") }] };
    const dropWorker = { tracks: "all", transforms: [{ type: "drop-function", frame_key: keyOf("onmessage") }] };
    const asked = await Promise.all([tree(mergeRender), tree(dropWorker), tree({ tracks: "all" }), tree(dropWorker), tree(mergeRender)]);
    expect(asked[0]).toEqual(asked[4]);
    expect(asked[1]).toEqual(asked[3]);
    expect(asked[2]).toEqual(all);
    expect(names(asked[0].nodes)).not.toContain("render");
    expect(names(asked[0].nodes)).toContain("onmessage");
    expect(names(asked[1].nodes)).not.toContain("onmessage");
    expect(names(asked[1].nodes)).toContain("render");
    // The transformed answers are not the plain one's under another name.
    expect(asked[0]).not.toEqual(all);
    expect(asked[1]).not.toEqual(all);
  });

  it("time order is kept per commit and question: asked again (or at once) it is the same answer; another thread or cell width is its own; a zoomed window is not kept", async () => {
    const { dir, ctx } = project();
    copyFileSync(path.resolve(import.meta.dirname, "../fixtures/tracks/two-profiles.speedscope.json"), path.join(dir, "two.speedscope.json"));
    const run = (await callService(importArtifact, ctx, { path: "two.speedscope.json" })).run_id;
    const order = (input: Record<string, unknown>) => callService(flameTimeline, ctx, { run_id: run, ...input });
    const [first, joined] = await Promise.all([order({}), order({})]);
    // One merge: the second asker waited for the first's cells, and a later one finds them kept.
    expect(joined.cells).toBe(first.cells);
    expect((await order({})).cells).toBe(first.cells);
    const other = first.sampled_tracks.find((t) => t.track_id !== first.track_id)!;
    const onOther = await order({ track_id: other.track_id });
    expect(onOther.track_id).toBe(other.track_id);
    expect(onOther.cells.map((c) => c.name)).not.toEqual(first.cells.map((c) => c.name));
    // Wider than every cell but the widest: the others are left out.
    const widths = first.cells.map((c) => c.end_ns - c.start_ns).sort((a, b) => b - a);
    expect(widths[1]).toBeLessThan(widths[0]);
    const coarse = { min_width_ns: widths[0] };
    const small = await order(coarse);
    expect(small.cells.length).toBeLessThan(first.cells.length);
    const cut = first.cells[0];
    const window = { start_ns: cut.start_ns, end_ns: cut.start_ns + Math.floor((cut.end_ns - cut.start_ns) / 2) };
    const windowed = await order(window);
    expect(windowed.samples).toBeLessThan(first.samples);
    // A zoomed window is merged again each time, not kept (zooms would push the flame trees out).
    const again = await order(window);
    expect(again.cells).not.toBe(windowed.cells);
    expect(again.cells).toEqual(windowed.cells);
    // Each asked again: its own kept answer, not the first's.
    expect((await order({ track_id: other.track_id })).cells).toBe(onOther.cells);
    expect((await order(coarse)).cells).toBe(small.cells);
  });

  it("two copies of the engine module in one process (the app's route and page bundles) share one reader and its kept answers", async () => {
    const { dir, ctx } = project();
    writeFileSync(path.join(dir, "a.folded"), FOLDED_A);
    const a = await callService(importArtifact, ctx, { path: "a.folded" });
    vi.resetModules();
    const copy = (await import("../../server/evidence/engine")) as typeof import("../../server/evidence/engine");
    expect(copy.openEvidence).not.toBe(openEvidence);
    await withWorkspace(dir, async (ws) => {
      // Asked by one copy (as the upload route's prepareRunView does), then by the other (the run page).
      const first = await (await openEvidence(ws, a.commit_id)).runShared(frameCount, {});
      expect(await (await copy.openEvidence(ws, a.commit_id)).runShared(frameCount, {})).toBe(first);
      // And asked by both at once: one run, the same kept rows.
      const again = defineQuery({ ...frameCount, name: "test_frame_count_again", sql: `${frameCount.sql} WHERE true` });
      const [one, two] = await Promise.all([openEvidence(ws, a.commit_id).then((e) => e.runShared(again, {})), copy.openEvidence(ws, a.commit_id).then((e) => e.runShared(again, {}))]);
      expect(two).toBe(one);
    });
  });

  it("rows handed out, kept or shared by two askers at once, are each asker's own to change", async () => {
    const { dir, ctx } = project();
    writeFileSync(path.join(dir, "a.folded"), FOLDED_A);
    const a = await callService(importArtifact, ctx, { path: "a.folded" });
    await withWorkspace(dir, async (ws) => {
      const ev = await openEvidence(ws, a.commit_id);
      const [one, two] = await Promise.all([ev.run(frameCount, {}), ev.run(frameCount, {})]);
      expect(one).toEqual(two);
      const n = one[0].n;
      one[0].n = -1;
      expect(two[0].n).toBe(n);
      expect((await ev.run(frameCount, {}))[0].n).toBe(n);
    });
  });
});
