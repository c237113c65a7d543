import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { flameTimelineQuery } from "../../analysis/queries";
import { openEvidence } from "../../server/evidence/engine";
import { type Workspace } from "../../server/store/workspace";
import { flameTimeline } from "../../server/services/evidence";
import { callService } from "../../server/services/service";
import { withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

const publish = (ws: Workspace, produce: (b: EvidenceBuilder) => void) => publishEvidence(ws, "timeline", produce);

/** One sample every 10 ns on the main thread; a second thread's samples interleave at +5 ns. */
const MAIN = ["main;a;b", "main;a;b", "main;a;c", "main;d", "main;a;b", "main", "main;a;a;b"];

let mainTrack = -1;

function fixture(b: EvidenceBuilder) {
  const samples = b.metric({ name: "samples", unit: "count", kind: "sampled" });
  const main = b.track({ threadId: 1, threadName: "main", kind: "thread" });
  mainTrack = main;
  const other = b.track({ threadId: 2, threadName: "other", kind: "thread" });
  const stack = (path: string) => b.stackOf(path.split(";").map((name) => b.frame({ name, file: `${name}.js`, line: 1, kind: "js" })))!;
  MAIN.forEach((path, i) => b.sample(stack(path), main, i * 10, samples, 1));
  for (let i = 0; i < 3; i++) b.sample(stack("worker;z"), other, i * 10 + 5, samples, 1);
}

type Cell = { cell_id: string; parent_id: string | null; name: string; depth: number; start_ns: number; end_ns: number; total: number; self: number; dropped_cells: number };
const shape = (rows: Omit<Cell, "dropped_cells">[]) => rows.map((r) => `${r.depth} ${r.name} [${r.start_ns},${r.end_ns}) total ${r.total} self ${r.self}`);

describe("flame_timeline: consecutive samples sharing a stack prefix merge into cells", () => {
  it("merges per frame in time order, links each cell to its parent and lasts each sample until the next", async () => {
    await withWorkspace(async (ws) => {
      const published = await publish(ws, fixture);
      const ev = await openEvidence(ws, "HEAD");
      const base = { generations: [published.generation_id], metric: "samples", start_ns: null, end_ns: null, min_width_ns: 0, budget: 1000 };
      const rows = (await ev.run(flameTimelineQuery, { ...base, track_id: mainTrack })) as Cell[];
      // Worked out by hand from MAIN: the last sample lasts the median interval (10 ns).
      expect(shape(rows)).toEqual([
        "0 main [0,70) total 7 self 1",
        "1 a [0,30) total 3 self 0",
        "1 d [30,40) total 1 self 1",
        "1 a [40,50) total 1 self 0",
        "1 a [60,70) total 1 self 0",
        "2 b [0,20) total 2 self 2",
        "2 c [20,30) total 1 self 1",
        "2 b [40,50) total 1 self 1",
        "2 a [60,70) total 1 self 0",
        "3 b [60,70) total 1 self 1",
      ]);
      const byId = new Map(rows.map((r) => [r.cell_id, r]));
      const parentName = (r: Cell) => (r.parent_id === null ? null : `${byId.get(r.parent_id)!.name}@${byId.get(r.parent_id)!.start_ns}`);
      expect(rows.map((r) => `${r.name}@${r.start_ns} <- ${parentName(r)}`)).toEqual([
        "main@0 <- null",
        "a@0 <- main@0",
        "d@30 <- main@0",
        "a@40 <- main@0",
        "a@60 <- main@0",
        "b@0 <- a@0",
        "c@20 <- a@0",
        "b@40 <- a@40",
        "a@60 <- a@60",
        "b@60 <- a@60",
      ]);
      expect(new Set(rows.map((r) => r.cell_id)).size).toBe(rows.length);
      expect(rows.every((r) => r.dropped_cells === 0)).toBe(true);
    });
  });

  it("prunes to a minimum width and a cell budget, keeping every kept cell's ancestors", async () => {
    await withWorkspace(async (ws) => {
      const published = await publish(ws, fixture);
      const ev = await openEvidence(ws, "HEAD");
      const base = { generations: [published.generation_id], metric: "samples", start_ns: null, end_ns: null, track_id: mainTrack };
      const wide = (await ev.run(flameTimelineQuery, { ...base, min_width_ns: 15, budget: 1000 })) as Cell[];
      expect(shape(wide)).toEqual(["0 main [0,70) total 7 self 1", "1 a [0,30) total 3 self 0", "2 b [0,20) total 2 self 2"]);
      // Left out: d@30, a@40 and a@60 under main (a@60 with its b), c@20 under a@0.
      expect(wide[0].dropped_cells).toBe(4);
      const two = (await ev.run(flameTimelineQuery, { ...base, min_width_ns: 0, budget: 2 })) as Cell[];
      expect(shape(two)).toEqual(["0 main [0,70) total 7 self 1", "1 a [0,30) total 3 self 0"]);
      expect(two[1].parent_id).toBe(two[0].cell_id);
      expect(two[0].dropped_cells).toBe(8);
    });
  });

  it("reads a time window, and without a track interleaved threads break the merges", async () => {
    await withWorkspace(async (ws) => {
      const published = await publish(ws, fixture);
      const ev = await openEvidence(ws, "HEAD");
      const base = { generations: [published.generation_id], metric: "samples", min_width_ns: 0, budget: 1000 };
      const window = (await ev.run(flameTimelineQuery, { ...base, start_ns: 20, end_ns: 50, track_id: mainTrack })) as Cell[];
      expect(shape(window)).toEqual([
        "0 main [20,50) total 3 self 0",
        "1 a [20,30) total 1 self 0",
        "1 d [30,40) total 1 self 1",
        "1 a [40,50) total 1 self 0",
        "2 c [20,30) total 1 self 1",
        "2 b [40,50) total 1 self 1",
      ]);
      // Both threads in one time order: main (0) worker (5) main (10) worker (15) main (20) worker (25) main (30) …
      const mixed = (await ev.run(flameTimelineQuery, { ...base, start_ns: 0, end_ns: 30, track_id: null })) as Cell[];
      expect(shape(mixed.filter((r) => r.depth === 0))).toEqual([
        "0 main [0,5) total 1 self 0",
        "0 worker [5,10) total 1 self 0",
        "0 main [10,15) total 1 self 0",
        "0 worker [15,20) total 1 self 0",
        "0 main [20,25) total 1 self 0",
        "0 worker [25,30) total 1 self 0",
      ]);
    });
  });
});

describe("evidence.flame_timeline (the service)", () => {
  it("orders one thread at a time, the busiest by default, and counts what it leaves undrawn", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, fixture);
      const ctx = { locator: { cwd: ws.layout.projectRoot, projectRoot: ws.layout.projectRoot }, actor: "test" as const };
      const busiest = await callService(flameTimeline, ctx, { run_id, metric: "samples", min_width_ns: 0 });
      expect(busiest.track_id).toBe(mainTrack);
      expect(busiest.sampled_tracks.map((t) => [t.thread_name, t.samples])).toEqual([["main", 7], ["other", 3]]);
      expect(shape(busiest.cells.filter((c) => c.depth === 0))).toEqual(["0 main [0,70) total 7 self 1"]);
      expect(busiest.dropped_total).toBe(0);
      const other = await callService(flameTimeline, ctx, { run_id, metric: "samples", min_width_ns: 0, track_id: busiest.sampled_tracks[1].track_id });
      expect(shape(other.cells.filter((c) => c.depth === 0))).toEqual(["0 worker [5,35) total 3 self 0"]);
      // Nothing is 1000 ns wide: every sample of the thread is left undrawn, and said so.
      const none = await callService(flameTimeline, ctx, { run_id, metric: "samples", min_width_ns: 1000 });
      expect(none).toMatchObject({ cells: [], dropped_cells: 1, dropped_total: 7, status: { state: "partial" } });
    });
  });
});

describe("flame_timeline when nothing is wide enough", () => {
  it("still reports how many cells were left out", async () => {
    await withWorkspace(async (ws) => {
      const published = await publish(ws, fixture);
      const ev = await openEvidence(ws, "HEAD");
      const rows = (await ev.run(flameTimelineQuery, { generations: [published.generation_id], metric: "samples", start_ns: null, end_ns: null, track_id: mainTrack, min_width_ns: 1000, budget: 10 })) as Cell[];
      // main is the only depth-0 island and it is 70 ns long: one narrow cell.
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ depth: -1, dropped_cells: 1 });
    });
  });
});
