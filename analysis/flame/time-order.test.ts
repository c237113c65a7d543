import { describe, expect, it } from "vitest";
import { CallPathTreeBuilder, TimeOrderMerge, type CallPathTree } from "./time-order";

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

interface Sample {
  path: string[];
  time: number;
  value: number;
}

/** A prefix tree of the samples' paths, as the evidence builder makes: one node per call path. */
function treeOf(samples: readonly Sample[]): { tree: CallPathTree; nodeOf: (path: string[]) => number; frames: string[] } {
  const builder = new CallPathTreeBuilder();
  const frames = [...new Set(samples.flatMap((s) => s.path))].sort();
  frames.forEach((f, i) => builder.addFrame(0, i, f));
  const ids = new Map<string, number>();
  for (const { path } of samples) {
    for (let d = 0; d < path.length; d++) {
      const key = path.slice(0, d + 1).join(";");
      if (ids.has(key)) continue;
      ids.set(key, ids.size);
      builder.addStack(0, ids.get(key)!, d === 0 ? null : ids.get(path.slice(0, d).join(";"))!, frames.indexOf(path[d]), d);
    }
  }
  const { tree, node } = builder.build();
  return { tree, nodeOf: (path) => node(0, ids.get(path.join(";"))!), frames };
}

interface Cell {
  depth: number;
  start: number;
  end: number;
  total: number;
  self: number;
  frame: string;
  parent: string | null;
}

const cellKey = (c: { depth: number; start: number; frame: string }) => `${c.depth}:${c.start}:${c.frame}`;

/**
 * Time order worked out the long way: per depth, runs of consecutive samples whose paths agree
 * down to that depth; each sample lasts until the next (the last for the mean interval). Then the
 * pruning rules applied to the whole list: a cell shorter than minWidth is left out with all under
 * it, counted once when its parent is kept (or it is at depth 0); of the rest the `budget` longest
 * stay (ties: shallower, then earlier).
 */
function bruteForce(samples: readonly Sample[], minWidth: number, budget: number): { cells: Cell[]; dropped: number; total: number } {
  const n = samples.length;
  const ends = samples.map((s, i) => (i + 1 < n ? samples[i + 1].time : s.time + (n > 1 ? (samples[n - 1].time - samples[0].time) / (n - 1) : 1)));
  const all: (Cell & { id: string; width: number; first: number; after: number; parentId: string | null })[] = [];
  const maxDepth = Math.max(0, ...samples.map((s) => s.path.length - 1));
  for (let d = 0; d <= maxDepth; d++) {
    let i = 0;
    while (i < n) {
      if (samples[i].path.length <= d) {
        i++;
        continue;
      }
      const prefix = samples[i].path.slice(0, d + 1).join(";");
      let j = i;
      let total = 0;
      let self = 0;
      while (j < n && samples[j].path.length > d && samples[j].path.slice(0, d + 1).join(";") === prefix) {
        total += samples[j].value;
        if (samples[j].path.length === d + 1) self += samples[j].value;
        j++;
      }
      const start = samples[i].time;
      const end = ends[j - 1];
      // The parent: the cell one level up that holds the same samples (and maybe more).
      const parent = d === 0 ? null : all.find((c) => c.depth === d - 1 && c.first <= i && j <= c.after)!;
      all.push({ id: `${d}@${i}`, depth: d, start, end, total, self, frame: samples[i].path[d], width: end - start, first: i, after: j, parent: null, parentId: parent ? parent.id : null });
      i = j;
    }
  }
  const byId = new Map(all.map((c) => [c.id, c]));
  const wide = all.filter((c) => c.width >= minWidth);
  let dropped = all.filter((c) => c.width < minWidth && (c.parentId === null || byId.get(c.parentId)!.width >= minWidth)).length;
  const ranked = [...wide].sort((a, b) => b.width - a.width || a.depth - b.depth || a.start - b.start || a.first - b.first);
  const kept = ranked.slice(0, budget);
  dropped += wide.length - kept.length;
  const cells = kept.map((c) => ({ depth: c.depth, start: c.start, end: c.end, total: c.total, self: c.self, frame: c.frame, parent: c.parentId ? cellKey(byId.get(c.parentId)!) : null }));
  return { cells, dropped, total: samples.reduce((s, x) => s + x.value, 0) };
}

function merged(samples: readonly Sample[], minWidth: number, budget: number) {
  const { tree, nodeOf, frames } = treeOf(samples);
  const merge = new TimeOrderMerge(tree, { minWidth, budget });
  for (const s of samples) expect(merge.push(nodeOf(s.path), s.time, s.value)).toBe(true);
  const out = merge.finish();
  const cells = out.cells.map((c) => ({ depth: c.depth, start: c.start, end: c.end, total: c.total, self: c.self, frame: frames[c.frame], parent: c.parent < 0 ? null : cellKey({ ...out.cells[c.parent], frame: frames[out.cells[c.parent].frame] }) }));
  return { cells, dropped: out.droppedCells, total: out.windowTotal, samples: out.samples };
}

const sortCells = (cells: Cell[]) => [...cells].sort((a, b) => a.depth - b.depth || a.start - b.start || a.frame.localeCompare(b.frame));

/** Samples that wander through a small call tree (stay, call, return, jump), with uneven gaps. */
function walk(seed: number, count: number): Sample[] {
  const random = rng(seed);
  const names = ["main", "a", "b", "c", "d"];
  let path = ["main"];
  let time = 1000;
  const out: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.25 && path.length < 7) path = [...path, names[Math.floor(random() * names.length)]];
    else if (r < 0.45 && path.length > 1) path = path.slice(0, -1);
    else if (r < 0.5) path = random() < 0.5 ? ["main", names[Math.floor(random() * names.length)]] : ["idle"];
    out.push({ path, time, value: 1 + Math.floor(random() * 3) });
    // Uneven gaps, some of none (samples at the same time).
    time += random() < 0.1 ? 0 : 5 + Math.floor(random() * 20);
  }
  return out;
}

describe("time order: one pass over the samples equals merging them the long way", () => {
  it("over random wandering stacks, with and without pruning", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const samples = walk(seed, 300);
      for (const [minWidth, budget] of [[0, 100_000], [40, 100_000], [0, 25], [60, 10], [1e9, 10]]) {
        const expected = bruteForce(samples, minWidth, budget);
        const actual = merged(samples, minWidth, budget);
        const at = `seed ${seed}, min width ${minWidth}, budget ${budget}`;
        expect(sortCells(actual.cells), at).toEqual(sortCells(expected.cells));
        expect(actual.dropped, at).toBe(expected.dropped);
        expect(actual.total, at).toBe(expected.total);
        expect(actual.samples).toBe(samples.length);
      }
    }
  });

  it("merges a worked example by hand: runs, islands and a leaf in the middle of a path", () => {
    const at = (path: string, time: number): Sample => ({ path: path.split(";"), time, value: 1 });
    const samples = [at("main;a;b", 0), at("main;a;b", 10), at("main;a", 20), at("main;c", 30), at("main;a;b", 40)];
    const { cells, dropped } = merged(samples, 0, 100);
    expect(sortCells(cells).map((c) => `${c.depth} ${c.frame} [${c.start},${c.end}) ${c.total}/${c.self}`)).toEqual([
      "0 main [0,50) 5/0",
      "1 a [0,30) 3/1",
      "1 c [30,40) 1/1",
      "1 a [40,50) 1/0",
      "2 b [0,20) 2/2",
      "2 b [40,50) 1/1",
    ]);
    expect(dropped).toBe(0);
  });

  it("refuses a sample earlier than the one before, merging nothing of it", () => {
    const samples = [{ path: ["main"], time: 10, value: 1 }, { path: ["main"], time: 5, value: 1 }];
    const { tree, nodeOf } = treeOf(samples);
    const merge = new TimeOrderMerge(tree, { minWidth: 0, budget: 10 });
    expect(merge.push(nodeOf(["main"]), 10, 1)).toBe(true);
    expect(merge.push(nodeOf(["main"]), 5, 1)).toBe(false);
    expect(merge.finish()).toMatchObject({ samples: 1, windowTotal: 1 });
  });

  it("unifies the call paths of several generations", () => {
    const builder = new CallPathTreeBuilder();
    // Generation 0: main(0) → a(1); generation 1 lists a's frame first and its stacks child first.
    builder.addFrame(0, 0, "k_main");
    builder.addFrame(0, 1, "k_a");
    builder.addFrame(1, 0, "k_a");
    builder.addFrame(1, 1, "k_main");
    builder.addStack(0, 0, null, 0, 0);
    builder.addStack(0, 1, 0, 1, 1);
    builder.addStack(1, 5, 7, 0, 1);
    builder.addStack(1, 7, null, 1, 0);
    const { tree, node } = builder.build();
    expect(node(1, 5)).toBe(node(0, 1));
    expect(node(1, 7)).toBe(node(0, 0));
    expect(tree.parent[node(0, 1)]).toBe(node(0, 0));
    expect(node(1, 6)).toBe(-1);
  });
});
