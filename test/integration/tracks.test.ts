import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import {
  calleesQuery,
  callersQuery,
  flameTreeQuery,
  flameTreeRangeQuery,
  hotspotsQuery,
  metricTotalsQuery,
  stackExamplesQuery,
  timelineSamplesQuery,
  type EvidenceQuery,
} from "../../analysis/queries";
import { scopeToTracks, storedTrackTotalsQuery, trackLabel, trackTotalsQuery } from "../../analysis/queries/tracks";
import { storesTrackTotals } from "../../server/services/evidence-tracks";
import { openEvidence, type EvidenceReader } from "../../server/evidence/engine";
import { runCli } from "../helpers/cli";
import { tempProject, withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

/**
 * Two threads of one process and a second process: the main thread recurses (a;a;b), the worker
 * calls b from another caller, the other process has its own frames. Each entry: stack → samples.
 */
const THREADS = {
  main: { pid: 10, tid: 10, name: "main", stacks: { "main;a;b": 3, "main;a;c": 2, "main;a;a;b": 1 } },
  worker: { pid: 10, tid: 11, name: "worker", stacks: { "run;b": 5, "run;w": 4, "run;a;b": 2 } },
  other: { pid: 20, tid: 20, name: "other", stacks: { "idle;x": 9 } },
} as const;
type ThreadName = keyof typeof THREADS;

/**
 * One generation with the samples of the named threads (two metrics, timed). A sample's time is
 * its place in THREADS (1000 ns apart) in every generation: main 1–6, worker 7–17, other 18–26.
 */
function threads(names: readonly ThreadName[]) {
  return (b: EvidenceBuilder) => {
    const samples = b.metric({ name: "samples", unit: "count", kind: "sampled" });
    const cpu = b.metric({ name: "cpu_ns", unit: "ns", kind: "sampled" });
    const starts = { main: 0, worker: 6_000, other: 17_000 };
    for (const name of names) {
      const th = THREADS[name];
      let t = starts[name];
      const track = b.track({ processId: th.pid, processName: name === "other" ? "other" : "app", threadId: th.tid, threadName: th.name, kind: "thread" });
      for (const [stack, n] of Object.entries(th.stacks)) {
        const leaf = b.stackOf(stack.split(";").map((frame) => b.frame({ name: frame, file: `${frame}.c`, line: 1, kind: "native" })))!;
        for (let i = 0; i < n; i++) {
          b.sample(leaf, track, (t += 1000), samples, 1);
          b.sample(leaf, track, t, cpu, 1000);
        }
      }
    }
  };
}

/** Rows in a canonical order (keys sorted, numbers rounded), so two answers compare whatever their ties. */
function canonical(rows: readonly Record<string, unknown>[]): string[] {
  return rows.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, typeof r[k] === "number" ? Number((r[k] as number).toPrecision(12)) : r[k]]))).sort();
}

async function keysOf(ev: EvidenceReader, generations: string[]): Promise<Record<string, string>> {
  const rows = await ev.run(trackTotalsQuery, { generations, metric: "samples" });
  return Object.fromEntries(rows.map((r) => [r.thread_name ?? "", r.track_key]));
}

describe("evidence queries scoped to tracks", () => {
  it("track_totals lists each track's samples and value, heaviest first, adding up to the metric's total", async () => {
    await withWorkspace(async (ws) => {
      const all = await publishEvidence(ws, "all", threads(["main", "worker", "other"]));
      const ev = await openEvidence(ws, "HEAD");
      const rows = await ev.run(trackTotalsQuery, { generations: [all.generation_id], metric: "cpu_ns" });
      // Hand counts from THREADS: worker 11, other 9, main 6 samples of 1000 ns.
      expect(rows.map((r) => [r.thread_name, r.samples, r.value])).toEqual([
        ["worker", 11, 11_000],
        ["other", 9, 9_000],
        ["main", 6, 6_000],
      ]);
      expect(rows.every((r) => /^[0-9a-f]{12}$/.test(r.track_key))).toBe(true);
      expect(new Set(rows.map((r) => r.track_key)).size).toBe(3);
      expect(trackLabel(rows[0])).toBe("worker tid 11 · app pid 10");
      expect(trackLabel(rows[1])).toBe("other · pid 20");
    });
  });

  it("extraction stores each track's totals (track_totals): the same rows as the scan of every sample, samples on no track included", async () => {
    await withWorkspace(async (ws) => {
      const first = await publishEvidence(ws, "first", threads(["main", "worker"]));
      const second = await publishEvidence(ws, "second", (b) => {
        threads(["other", "main"])(b);
        // Samples on no track: their own row, '(none)'.
        const samples = b.metric({ name: "samples", unit: "count", kind: "sampled" });
        const leaf = b.stackOf([b.frame({ name: "loose", kind: "native" })])!;
        for (let i = 0; i < 4; i++) b.sample(leaf, null, null, samples, 2);
      });
      const ev = await openEvidence(ws, "HEAD");
      const generations = [first.generation_id, second.generation_id];
      for (const metric of ["samples", "cpu_ns"]) {
        const scanned = await ev.run(trackTotalsQuery, { generations, metric });
        const stored = await ev.run(storedTrackTotalsQuery, { generations, metric });
        expect(stored, metric).toEqual(scanned);
      }
      // Hand counts from THREADS: main in both generations (6 + 6), worker 11, other 9, and 4 loose samples of 2.
      const stored = await ev.run(storedTrackTotalsQuery, { generations, metric: "samples" });
      expect(stored.map((r) => [r.thread_name ?? r.track_key, r.samples, r.value])).toEqual([
        ["main", 12, 12],
        ["worker", 11, 11],
        ["other", 9, 9],
        ["(none)", 4, 8],
      ]);
      // The service reads the stored rows when every generation with samples has them, else scans.
      const evidence = { reader: ev, generations, metrics: [], limitations: [], metadata: {} };
      expect(storesTrackTotals(evidence)).toBe(true);
      const older = { ...ev, commit: { ...ev.commit, generations: ev.commit.generations.map((g) => (g.generation_id === first.generation_id ? { ...g, files: g.files.filter((f) => f.table !== "track_totals") } : g)) } };
      expect(storesTrackTotals({ ...evidence, reader: older as typeof ev })).toBe(false);
    });
  });

  it("a track key names the same thread in every generation, whatever its dense id there", async () => {
    await withWorkspace(async (ws) => {
      const all = await publishEvidence(ws, "all", threads(["main", "worker", "other"]));
      const reversed = await publishEvidence(ws, "reversed", threads(["other", "worker"]));
      const ev = await openEvidence(ws, "HEAD");
      const a = await keysOf(ev, [all.generation_id]);
      const b = await keysOf(ev, [reversed.generation_id]);
      expect(b.worker).toBe(a.worker);
      expect(b.other).toBe(a.other);
    });
  });

  // The oracle: a query scoped to some tracks of a run answers exactly what the unscoped query
  // answers over a run that holds only those tracks' samples (whose totals extraction derived).
  const QUERIES: [string, EvidenceQuery<any, any>, Record<string, unknown>][] = [
    ["hotspots", hotspotsQuery, { metric: "cpu_ns", limit: 100 }],
    ["flame_tree", flameTreeQuery, { metric: "cpu_ns", budget: 1000 }],
    ["flame_tree_range", flameTreeRangeQuery, { metric: "samples", start_ns: 3000, end_ns: 20_000, budget: 1000 }],
    ["metric_totals", metricTotalsQuery, {}],
  ];
  const SELECTIONS: ThreadName[][] = [["main"], ["worker"], ["main", "worker"], ["worker", "other"]];

  for (const selection of SELECTIONS) {
    it(`scoped to ${selection.join(" + ")}: hotspots, flame trees, metric totals, callers, callees and stacks equal those of a run of only those threads`, async () => {
      await withWorkspace(async (ws) => {
        const all = await publishEvidence(ws, "all", threads(["main", "worker", "other"]));
        const only = await publishEvidence(ws, "only", threads(selection));
        const ev = await openEvidence(ws, "HEAD");
        const keys = await keysOf(ev, [all.generation_id]);
        const tracks = selection.map((name) => keys[name]);
        for (const [name, query, params] of QUERIES) {
          const scoped = await ev.run(scopeToTracks(query as never), { ...params, generations: [all.generation_id], tracks } as never);
          const expected = await ev.run(query, { ...params, generations: [only.generation_id] });
          expect(canonical(scoped as never), name).toEqual(canonical(expected as never));
        }
        const b = (await ev.run(hotspotsQuery, { generations: [only.generation_id], metric: "cpu_ns", limit: 100 })).find((r) => r.name === "b")!;
        for (const query of [callersQuery, calleesQuery, stackExamplesQuery] as EvidenceQuery<any, any>[]) {
          const params = { metric: "samples", frame_key: b.frame_key, limit: 100 };
          const scoped = await ev.run(scopeToTracks(query), { ...params, generations: [all.generation_id], tracks });
          const expected = await ev.run(query, { ...params, generations: [only.generation_id] });
          expect(canonical(scoped as never), query.name).toEqual(canonical(expected as never));
        }
      });
    });
  }

  it("a time range scoped to a track counts only its samples in the range (hand count)", async () => {
    await withWorkspace(async (ws) => {
      const all = await publishEvidence(ws, "all", threads(["main", "worker", "other"]));
      const ev = await openEvidence(ws, "HEAD");
      const keys = await keysOf(ev, [all.generation_id]);
      const tree = await ev.run(scopeToTracks(flameTreeRangeQuery), { generations: [all.generation_id], metric: "samples", start_ns: 4000, end_ns: 10_000, budget: 100, tracks: [keys.main, keys.worker] });
      const roots = Object.fromEntries(tree.filter((n) => n.parent_id === null).map((n) => [n.name, n.total]));
      // In [4000, 10000): main's samples 4, 5, 6 and worker's 7, 8, 9.
      expect(roots).toEqual({ main: 3, run: 3 });
      const timeline = await ev.run(scopeToTracks(timelineSamplesQuery), { generations: [all.generation_id], metric_id: null, start_ns: null, end_ns: null, track_id: null, tracks: [keys.other] });
      expect(timeline).toHaveLength(9 * 2);
      expect(Math.min(...timeline.map((s) => s.time_ns))).toBe(18_000);
    });
  });

  it("no track named means no samples; an unknown key matches nothing; a bad key is refused by the schema", async () => {
    await withWorkspace(async (ws) => {
      const all = await publishEvidence(ws, "all", threads(["main", "worker"]));
      const ev = await openEvidence(ws, "HEAD");
      expect(await ev.run(scopeToTracks(hotspotsQuery), { generations: [all.generation_id], metric: "samples", limit: 10, tracks: [] })).toEqual([]);
      expect(await ev.run(scopeToTracks(flameTreeQuery), { generations: [all.generation_id], metric: "samples", budget: 10, tracks: ["0123456789ab"] })).toEqual([]);
      await expect(ev.run(scopeToTracks(hotspotsQuery), { generations: [all.generation_id], metric: "samples", limit: 10, tracks: ["x'); DROP TABLE frames; --"] })).rejects.toThrow(/track_key/);
    });
  });

  it("the CLI takes --tracks and says which tracks an answer covers; a bad key exits non-zero with INVALID_ARGUMENTS", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const fixture = path.join(import.meta.dirname, "..", "fixtures", "tracks", "perf-system-wide.txt");
    copyFileSync(fixture, path.join(cwd, "system-wide.perf.txt"));
    // The independent count: the busy process's sample headers in the perf script text.
    const busy = readFileSync(fixture, "utf8").split("\n").filter((l) => /^busy\s+\d+\/\d+\s+\[/.test(l)).length;
    const imported = await runCli(["import", "system-wide.perf.txt", "--json"], { cwd });
    expect(imported.code, imported.stderr).toBe(0);
    const runId = (imported.json as { run_id: string }).run_id;
    const hot = await runCli(["analyze", "hotspots", runId, "--tracks", "busiest", "--json"], { cwd });
    expect(hot.code, hot.stderr).toBe(0);
    expect(hot.json).toMatchObject({ grand_total: busy, tracks: { selection: "busiest", covered_count: 1, covered: [{ thread_name: "busy" }] } });
    const human = await runCli(["analyze", "hotspots", runId, "--tracks", "busiest"], { cwd });
    expect(human.stdout).toMatch(/Tracks: 1 of \d+ tracks: busy · pid \d+\./);
    const summary = await runCli(["analyze", "summary", runId], { cwd });
    expect(summary.stdout).toContain("Tracks with samples of samples, heaviest first:");
    const bad = await runCli(["analyze", "hotspots", runId, "--tracks", "nope", "--json"], { cwd });
    expect(bad.code).not.toBe(0);
    expect(bad.json).toMatchObject({ code: "INVALID_ARGUMENTS" });
  }, 60_000);
});
