import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callService, compareRuns, flameTree, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";

/** Two sampled profiles (unit none: weights are samples), stacks root first; frames main, run, step. */
function profiles(main: number[], worker: number[]) {
  return {
    $schema: "https://www.speedscope.app/file-format-schema.json",
    shared: { frames: [{ name: "main" }, { name: "run" }, { name: "step" }] },
    profiles: [
      { type: "sampled", name: "Main thread", unit: "none", startValue: 0, endValue: 1, samples: [[0, 1, 2], [0, 1]], weights: main },
      { type: "sampled", name: "Worker", unit: "none", startValue: 0, endValue: 1, samples: [[0, 2], [0]], weights: worker },
    ],
  };
}

describe("evidence.compare on tracks", () => {
  let root: string;
  let ctx: ServiceContext;
  let base: string;
  let candidate: string;
  let mainKey: string;
  let workerKey: string;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-compare-tracks-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    writeFileSync(path.join(root, "base.speedscope.json"), JSON.stringify(profiles([5, 7], [100, 1])));
    writeFileSync(path.join(root, "candidate.speedscope.json"), JSON.stringify(profiles([11, 7], [130, 1])));
    base = (await callService(importArtifact, ctx, { path: "base.speedscope.json" })).run_id;
    candidate = (await callService(importArtifact, ctx, { path: "candidate.speedscope.json" })).run_id;
    const choices = (await callService(flameTree, ctx, { run_id: base, tracks: "all" })).track_choices;
    mainKey = choices.find((t) => t.label === "Main thread")!.track_key;
    workerKey = choices.find((t) => t.label === "Worker")!.track_key;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const stepOf = (rows: { name: string; base_self: number; candidate_self: number; delta: number }[]) => rows.find((r) => r.name === "step")!;

  it("each side reads only its chosen tracks: totals and every row are those of the chosen profiles (hand counts)", async () => {
    const all = await callService(compareRuns, ctx, { base_run_id: base, candidate_run_id: candidate, collection: "all" });
    expect([all.base_total, all.candidate_total]).toEqual([113, 149]);
    expect(stepOf(all.rows)).toMatchObject({ base_self: 105, candidate_self: 141, delta: 36 });

    const main = await callService(compareRuns, ctx, { base_run_id: base, candidate_run_id: candidate, collection: "all", base_tracks: [mainKey], candidate_tracks: [mainKey] });
    expect([main.base_total, main.candidate_total]).toEqual([12, 18]);
    expect(stepOf(main.rows)).toMatchObject({ base_self: 5, candidate_self: 11, delta: 6 });
    expect(main.base_tracks?.covered.map((t) => t.label)).toEqual(["Main thread"]);
    // The worker's main self (1) is on no side: main's self is 0 on both, so it is not a change.
    expect(main.rows.find((r) => r.name === "main")).toBeUndefined();

    // One side scoped, the other whole: the worker's step against the candidate's whole run.
    const mixed = await callService(compareRuns, ctx, { base_run_id: base, candidate_run_id: candidate, collection: "all", base_tracks: [workerKey] });
    expect([mixed.base_total, mixed.candidate_total]).toEqual([101, 149]);
    expect(stepOf(mixed.rows)).toMatchObject({ base_self: 100, candidate_self: 141 });
    const busiest = await callService(compareRuns, ctx, { base_run_id: base, candidate_run_id: candidate, base_tracks: "busiest", candidate_tracks: "busiest", normalize: true });
    expect([busiest.base_total, busiest.candidate_total]).toEqual([101, 131]);
  });

  it("a track key the run does not have is INVALID_ARGUMENTS naming the tracks there are; a malformed key is refused by the schema", async () => {
    await expect(callService(compareRuns, ctx, { base_run_id: base, candidate_run_id: candidate, base_tracks: ["0123456789ab"] })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    await expect(callService(compareRuns, ctx, { base_run_id: base, candidate_run_id: candidate, candidate_tracks: ["not-a-key"] as never })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
  });
});
