import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { initWorkspace, type Workspace } from "../../server/store/workspace";
import { flameTimeline, flameTree, importArtifact } from "../../server/services";
import { callService } from "../../server/services/service";
import { tempProject, withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";
import type { Transform } from "../../analysis/queries/transforms";
import { packTimelineCells, TIMELINE_ROW_KEYS, timelineMetricIdsQuery, timelineSamplesQuery, unpackTimelineCells, type TimelineCell } from "../../analysis/queries/flame-timeline";
import { openEvidence } from "../../server/evidence/engine";
import { FLAME_NODE_KEYS } from "../../analysis/queries/flame-tree";
import { packAnswer, packTreeRows, unpackTreeRows } from "../../analysis/queries/packed-rows";

const publish = (ws: Workspace, produce: (b: EvidenceBuilder) => void) => publishEvidence(ws, "timeline", produce);

/** One sample every 10 ns on the main thread; a second thread's samples interleave at +5 ns. */
const MAIN = ["main;a;b", "main;a;b", "main;a;c", "main;d", "main;a;b", "main", "main;a;a;b"];

let mainTrack = -1;
let otherTrack = -1;

function fixture(b: EvidenceBuilder) {
  const samples = b.metric({ name: "samples", unit: "count", kind: "sampled" });
  const main = b.track({ threadId: 1, threadName: "main", kind: "thread" });
  mainTrack = main;
  const other = b.track({ threadId: 2, threadName: "other", kind: "thread" });
  otherTrack = other;
  const stack = (path: string) => b.stackOf(path.split(";").map((name) => b.frame({ name, file: `${name}.js`, line: 1, kind: "js" })))!;
  MAIN.forEach((path, i) => b.sample(stack(path), main, i * 10, samples, 1));
  for (let i = 0; i < 3; i++) b.sample(stack("worker;z"), other, i * 10 + 5, samples, 1);
}

type Cell = { cell_id: string; parent_id: string | null; name: string; depth: number; start_ns: number; end_ns: number; total: number; self: number };
/** The page's transfer of the cells gives back exactly the service's rows, field for field and in order. */
const roundTrips = (rows: TimelineCell[]) => {
  expect(JSON.stringify(unpackTimelineCells(JSON.parse(JSON.stringify(packTimelineCells(rows)))))).toBe(JSON.stringify(rows));
  // The packing the service made beside its cells (what the page sends) is packTreeRows' own.
  expect(JSON.stringify(packAnswer({ cells: rows }, "cells", TIMELINE_ROW_KEYS).packed_cells)).toBe(JSON.stringify(packTreeRows(rows, TIMELINE_ROW_KEYS)));
};
const shape = (rows: Cell[]) => rows.map((r) => `${r.depth} ${r.name} [${r.start_ns},${r.end_ns}) total ${r.total} self ${r.self}`);

async function timeOrder(ws: Workspace, run_id: string, input: Partial<{ start_ns: number; end_ns: number; track_id: number; min_width_ns: number; budget: number; transforms: Transform[] }>) {
  const ctx = { locator: { cwd: ws.layout.projectRoot, projectRoot: ws.layout.projectRoot }, actor: "test" as const };
  return callService(flameTimeline, ctx, { run_id, metric: "samples", min_width_ns: 0, budget: 1000, ...input });
}

describe("flame_timeline: consecutive samples sharing a stack prefix merge into cells", () => {
  it("merges per frame in time order, links each cell to its parent and lasts each sample until the next", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, fixture);
      const result = await timeOrder(ws, run_id, { track_id: mainTrack });
      const rows = result.cells;
      // Worked out by hand from MAIN: the last sample lasts the mean interval (10 ns).
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
      roundTrips(rows);
      expect(result).toMatchObject({ dropped_cells: 0, dropped_total: 0, samples: 7, status: { state: "available" } });
    });
  });

  it("takes the flame graph's transforms: samples merge along the transformed stacks (hand fold of MAIN)", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, fixture);
      const plain = await timeOrder(ws, run_id, { track_id: mainTrack });
      const key = (name: string) => plain.cells.find((c) => c.name === name)!.frame_key;
      // Merge a: b,b,c,d,b,(main),b — main;a;a;b is main;b.
      const merged = await timeOrder(ws, run_id, { track_id: mainTrack, transforms: [{ type: "merge-function", frame_key: key("a") }] });
      expect(shape(merged.cells)).toEqual([
        "0 main [0,70) total 7 self 1",
        "1 b [0,20) total 2 self 2",
        "1 c [20,30) total 1 self 1",
        "1 d [30,40) total 1 self 1",
        "1 b [40,50) total 1 self 1",
        "1 b [60,70) total 1 self 1",
      ]);
      // Focus on b: only the four samples with b, each a stack of b alone; the dropped ones are gaps, not b's time.
      const focused = await timeOrder(ws, run_id, { track_id: mainTrack, transforms: [{ type: "focus-function", frame_key: key("b") }] });
      expect(focused.samples).toBe(4);
      expect(focused.gap_samples).toBe(3);
      expect(shape(focused.cells)).toEqual(["0 b [0,20) total 2 self 2", "0 b [40,50) total 1 self 1", "0 b [60,70) total 1 self 1"]);
      // Drop the samples with d: six left.
      const dropped = await timeOrder(ws, run_id, { track_id: mainTrack, transforms: [{ type: "drop-function", frame_key: key("d") }] });
      expect(dropped.samples).toBe(6);
      expect(dropped.gap_samples).toBe(1);
      expect(merged.gap_samples).toBe(0);
      expect(dropped.cells.some((c) => c.name === "d")).toBe(false);
    });
  });

  it("prunes to a minimum width and a cell budget, keeping every kept cell's ancestors", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, fixture);
      const wide = await timeOrder(ws, run_id, { track_id: mainTrack, min_width_ns: 15 });
      expect(shape(wide.cells)).toEqual(["0 main [0,70) total 7 self 1", "1 a [0,30) total 3 self 0", "2 b [0,20) total 2 self 2"]);
      // Left out: d@30, a@40 and a@60 under main (a@60 with its b), c@20 under a@0.
      expect(wide.dropped_cells).toBe(4);
      // Undrawn: c (1) under a@0, and d, a@40, a@60 (3) under main.
      expect(wide.dropped_total).toBe(4);
      // Ten cells in all: a budget of ten keeps them (the rules for fewer: analysis/flame/time-order.test.ts).
      const budget = await timeOrder(ws, run_id, { track_id: mainTrack, budget: 10 });
      expect([budget.cells.length, budget.dropped_cells]).toEqual([10, 0]);
    });
  });

  it("reads a time window of one thread; the other thread's samples never cut its cells", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, fixture);
      const window = await timeOrder(ws, run_id, { start_ns: 20, end_ns: 50, track_id: mainTrack });
      expect(shape(window.cells)).toEqual([
        "0 main [20,50) total 3 self 0",
        "1 a [20,30) total 1 self 0",
        "1 d [30,40) total 1 self 1",
        "1 a [40,50) total 1 self 0",
        "2 c [20,30) total 1 self 1",
        "2 b [40,50) total 1 self 1",
      ]);
      const other = await timeOrder(ws, run_id, { track_id: otherTrack });
      expect(shape(other.cells)).toEqual(["0 worker [5,35) total 3 self 0", "1 z [5,35) total 3 self 3"]);
    });
  });

  it("puts samples the files hold out of time order in order first (ties in the files' order)", async () => {
    await withWorkspace(async (ws) => {
      const ordered = await publish(ws, fixture);
      // The same samples of the main thread, written in a shuffled order.
      const shuffled = await publishEvidence(ws, "shuffled", (b) => {
        const samples = b.metric({ name: "samples", unit: "count", kind: "sampled" });
        const main = b.track({ threadId: 1, threadName: "main", kind: "thread" });
        const stack = (path: string) => b.stackOf(path.split(";").map((name) => b.frame({ name, file: `${name}.js`, line: 1, kind: "js" })))!;
        for (const i of [3, 0, 6, 1, 5, 2, 4]) b.sample(stack(MAIN[i]), main, i * 10, samples, 1);
      });
      const expected = await timeOrder(ws, ordered.run_id, { track_id: mainTrack });
      const actual = await timeOrder(ws, shuffled.run_id, {});
      expect(shape(actual.cells)).toEqual(shape(expected.cells));
      expect(actual.samples).toBe(7);
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

  it("lists the threads with samples of the ordered metric, each with its samples of that metric, and orders the busiest in it", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, (b) => {
        const cpu = b.metric({ name: "cpu_ns", unit: "ns", kind: "sampled" });
        const alloc = b.metric({ name: "alloc_bytes", unit: "bytes", kind: "sampled" });
        const main = b.track({ threadId: 1, threadName: "main", kind: "thread" });
        const gc = b.track({ threadId: 2, threadName: "gc", kind: "thread" });
        const io = b.track({ threadId: 3, threadName: "io", kind: "thread" });
        const stack = (name: string) => b.stackOf([b.frame({ name, file: `${name}.js`, line: 1, kind: "js" })])!;
        for (let i = 0; i < 4; i++) b.sample(stack("run"), main, i * 10, cpu, 10);
        // gc has more samples, but of another metric; io has none of cpu_ns at all.
        for (let i = 0; i < 6; i++) b.sample(stack("sweep"), gc, i * 10, alloc, 64);
        b.sample(stack("sweep"), gc, 100, cpu, 10);
        for (let i = 0; i < 9; i++) b.sample(stack("read"), io, i * 10, alloc, 8);
      });
      const ctx = { locator: { cwd: ws.layout.projectRoot, projectRoot: ws.layout.projectRoot }, actor: "test" as const };
      const cpu = await callService(flameTimeline, ctx, { run_id, metric: "cpu_ns", min_width_ns: 0 });
      expect(cpu.sampled_tracks.map((t) => [t.thread_name, t.samples, t.spans])).toEqual([["main", 4, 0], ["gc", 1, 0]]);
      expect(cpu.track_id).toBe(cpu.sampled_tracks[0].track_id);
      expect(shape(cpu.cells)).toEqual(["0 run [0,40) total 40 self 40"]);
      const alloc = await callService(flameTimeline, ctx, { run_id, metric: "alloc_bytes", min_width_ns: 0 });
      expect(alloc.sampled_tracks.map((t) => [t.thread_name, t.samples])).toEqual([["gc", 6], ["io", 9]]);
      expect(alloc.track_id).toBe(alloc.sampled_tracks[1].track_id);
    });
  });
});

describe("time order's samples read whole or streamed", () => {
  it("a whole read (materialized, handed over at once) gives the stream's rows in the stream's order, and stops where it is told", async () => {
    await withWorkspace(async (ws) => {
      // 10,000 samples over 40 stacks: several DuckDB chunks, stacks changing irregularly.
      await publish(ws, (b) => {
        const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
        const track = b.track({ threadId: 1, threadName: "main", kind: "thread" });
        const stacks = Array.from({ length: 40 }, (_, i) => b.stackOf(["main", `f${i % 7}`, `g${i}`].map((name) => b.frame({ name, file: "x.js", line: 1, kind: "js" })))!);
        for (let i = 0; i < 10_000; i++) b.sample(stacks[(i * i + (i >> 3)) % 40], track, i * 1000, metric, 1 + (i % 3));
      });
      const reader = await openEvidence(ws, "HEAD");
      const generations = reader.commit.generations.map((g) => g.generation_id);
      const [m] = await reader.run(timelineMetricIdsQuery, { generations, metric: "samples" });
      const params = { generations: [m.generation_id], metric_id: m.metric_id, start_ns: null, end_ns: null, track_id: null };
      const read = async (whole: boolean, stopAfter = Infinity) => {
        const rows: string[] = [];
        let chunks = 0;
        await reader.scan(timelineSamplesQuery, params, (columns, n) => {
          const [stack, time, value] = columns as number[][];
          for (let i = 0; i < n; i++) rows.push(`${stack[i]}@${time[i]}=${value[i]}`);
          return ++chunks < stopAfter;
        }, { whole });
        return { rows, chunks };
      };
      const streamed = await read(false);
      const whole = await read(true);
      expect(streamed.rows.length).toBe(10_000);
      expect(streamed.chunks).toBeGreaterThan(1);
      expect(whole.rows).toEqual(streamed.rows);
      // Stopped after its first chunk, a whole read hands over no more.
      const first = await read(true, 1);
      expect(first.chunks).toBe(1);
      expect(first.rows.length).toBeLessThan(10_000);
      expect(first.rows).toEqual(whole.rows.slice(0, first.rows.length));
    });
  });
});

describe("time order of a real V8 profile (sucrase, Chrome 65: 17 k samples, 1 MB)", () => {
  it("gives, with nothing pruned, exactly the cells of merging the file's own samples the long way", async () => {
    const fixture = path.resolve(import.meta.dirname, "../fixtures/peer/Chrome/65/sucrase.cpuprofile");
    const profile = JSON.parse(readFileSync(fixture, "utf8")) as {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
      samples: number[];
      timeDeltas: number[];
      startTime: number;
    };
    // The file read on its own terms: each sample's frames from the root ("(root)" left out) and its time.
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const pathOf = (id: number): string[] => {
      const out: string[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const f = byId.get(at)!.callFrame;
        if (parent.has(at) || f.functionName !== "(root)") out.unshift(`${f.functionName || "(anonymous)"}|${f.url}|${f.lineNumber + 1}`);
      }
      return out;
    };
    let t = profile.startTime;
    const all = profile.samples.map((id, i) => ({ path: pathOf(id), time: ((t += profile.timeDeltas[i]) - profile.startTime) * 1000 }));
    // Its first 4,000 samples (the whole profile merges into some 260,000 cells, past any budget).
    const window = { start_ns: 0, end_ns: all[4000].time };
    const samples = all.filter((s) => s.time >= window.start_ns && s.time < window.end_ns);
    const n = samples.length;
    const ends = samples.map((s, i) => (i + 1 < n ? samples[i + 1].time : s.time + (samples[n - 1].time - samples[0].time) / (n - 1)));
    // Per depth, runs of consecutive samples whose paths agree down to it.
    const expected: string[] = [];
    const maxDepth = Math.max(...samples.map((s) => s.path.length)) - 1;
    for (let d = 0; d <= maxDepth; d++) {
      for (let i = 0; i < n; ) {
        if (samples[i].path.length <= d) {
          i++;
          continue;
        }
        const prefix = samples[i].path.slice(0, d + 1).join(";");
        let j = i;
        let self = 0;
        while (j < n && samples[j].path.length > d && samples[j].path.slice(0, d + 1).join(";") === prefix) {
          if (samples[j].path.length === d + 1) self++;
          j++;
        }
        expected.push(`${d} ${samples[i].path[d]} [${samples[i].time},${Math.round(ends[j - 1])}) ${j - i}/${self}`);
        i = j;
      }
    }

    const root = tempProject();
    initWorkspace(root).close();
    const ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" as const };
    copyFileSync(fixture, path.join(root, "sucrase.cpuprofile"));
    const { run_id } = await callService(importArtifact, ctx, { path: path.join(root, "sucrase.cpuprofile") });
    const order = await callService(flameTimeline, ctx, { run_id, metric: "samples", ...window, min_width_ns: 0, budget: 200_000 });
    expect(order).toMatchObject({ samples: n, dropped_cells: 0, dropped_total: 0 });
    const actual = order.cells.map((c) => `${c.depth} ${c.name}|${c.file ?? ""}|${c.line ?? 0} [${c.start_ns},${Math.round(c.end_ns)}) ${c.total}/${c.self}`);
    expect(actual.length).toBe(expected.length);
    expect([...actual].sort()).toEqual([...expected].sort());
    roundTrips(order.cells);
    // And pruned as the page asks (the shown span / 8192, 20,000 cells): the longest cells, in a second or so.
    const started = performance.now();
    const pruned = await callService(flameTimeline, ctx, { run_id });
    expect(pruned.cells.length).toBeLessThanOrEqual(20_000);
    expect(pruned.dropped_cells).toBeGreaterThan(0);
    roundTrips(pruned.cells);
    // The run page streams its flame tree packed the same way (its node ids are hashes, kept as they are).
    const tree = (await callService(flameTree, ctx, { run_id })).nodes;
    expect(JSON.stringify(unpackTreeRows(JSON.parse(JSON.stringify(packTreeRows(tree, FLAME_NODE_KEYS))), FLAME_NODE_KEYS))).toBe(JSON.stringify(tree));
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 120_000);
});
