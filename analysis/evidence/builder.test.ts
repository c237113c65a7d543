import { describe, expect, it } from "vitest";
import { EvidenceBuilder, MemorySink } from "./builder";

/** Deterministic pseudo-random integers in [0, n). */
function randomInts(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s % n;
  };
}

describe("EvidenceBuilder", () => {
  it("interns stacks as a prefix tree: the same path is the same node, across table growth", async () => {
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink);
    const frames = Array.from({ length: 50 }, (_, i) => builder.frame({ name: `f${i}`, kind: "native" }));
    const random = randomInts(1);
    const paths = Array.from({ length: 3000 }, () => Array.from({ length: 1 + random(12) }, () => frames[random(frames.length)]));
    const first = paths.map((path) => builder.stackOf(path));
    const again = paths.map((path) => builder.stackOf(path));
    expect(again).toEqual(first);
    await builder.finish();
    // Each node's row names its parent and frame; walking them back gives the path it was made for.
    const byId = new Map(sink.tables.stacks.map((row) => [row.stack_id as number, row]));
    const pathOf = (id: number | null): number[] => {
      const out: number[] = [];
      for (let at = id; at !== null; at = byId.get(at)!.parent_stack_id as number | null) out.unshift(byId.get(at)!.frame_id as number);
      return out;
    };
    paths.forEach((path, i) => expect(pathOf(first[i])).toEqual(path));
    expect(new Set(sink.tables.stacks.map((r) => `${r.parent_stack_id}/${r.frame_id}`)).size).toBe(sink.tables.stacks.length);
  });

  it("derives self and inclusive totals per frame, counting a frame once per sample under recursion", async () => {
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink);
    // 300 frames: many share a bit of the 64-bit path summary, so both of its answers are exercised.
    const frames = Array.from({ length: 300 }, (_, i) => builder.frame({ name: `f${i}`, kind: "native" }));
    const metric = builder.metric({ name: "samples", unit: "count", kind: "counted" });
    const random = randomInts(2);
    const expectedSelf = new Map<number, number>();
    const expectedTotal = new Map<number, number>();
    for (let i = 0; i < 5000; i++) {
      // Narrow choices early in the path make recursion (a frame twice on one path) common.
      const path = Array.from({ length: 1 + random(20) }, (_, depth) => frames[random(depth < 10 ? 8 : frames.length)]);
      const value = 1 + random(9);
      builder.sample(builder.stackOf(path)!, null, null, metric, value);
      const leaf = path[path.length - 1];
      expectedSelf.set(leaf, (expectedSelf.get(leaf) ?? 0) + value);
      for (const frame of new Set(path)) expectedTotal.set(frame, (expectedTotal.get(frame) ?? 0) + value);
    }
    await builder.finish();
    const rows = sink.tables.frame_totals;
    expect(rows).toHaveLength(expectedTotal.size);
    for (const row of rows) {
      const frame = row.frame_id as number;
      expect([row.self, row.total]).toEqual([expectedSelf.get(frame) ?? 0, expectedTotal.get(frame)]);
    }
  });
});
