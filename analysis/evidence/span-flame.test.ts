import { describe, expect, it } from "vitest";
import { sampleRows } from "../../test/helpers/evidence-rows";
import { EvidenceBuilder, MemorySink } from "./builder";
import { MAX_SPAN_FLAME_NAMES } from "./span-flame";

async function finished(fill: (builder: EvidenceBuilder) => void) {
  const sink = new MemorySink();
  const builder = new EvidenceBuilder(sink, 64);
  fill(builder);
  const summary = await builder.finish();
  return { tables: sink.tables, summary };
}

describe("flame graphs derived from spans", () => {
  it("derives wall_ns from spans given whole and from drafts placed later alike, per track, parents across tracks starting a root", async () => {
    const result = await finished((b) => {
      const t0 = b.track({ threadId: 1, kind: "thread" });
      const t1 = b.track({ threadId: 2, kind: "thread" });
      const root = b.allocateSpanId();
      // Whole: root [0, 100) on t0 with a child [10, 30) on t0 and one [0, 50) on t1.
      b.span({ spanId: root, trackId: t0, name: "root", startNs: 0, durNs: 100, depth: 0 });
      b.span({ trackId: t0, parentSpanId: root, name: "child", startNs: 10, durNs: 20, depth: 1 });
      b.span({ trackId: t1, parentSpanId: root, name: "remote", startNs: 0, durNs: 50, depth: 0 });
      // Drafted, then placed: "child" again under root, 30 ns.
      b.spanDraft(7, { name: "child" });
      b.placeSpan(7, { spanId: b.allocateSpanId(), trackId: t0, parentSpanId: root, startNs: 40, durNs: 30, depth: 1 });
    });
    expect(sampleRows(result).map((r) => [r.track, r.stack, r.metric, r.value, r.time]).sort()).toEqual(
      [
        [0, "root", "wall_ns", 50, null],
        [0, "root;child", "wall_ns", 50, null],
        [1, "remote", "wall_ns", 50, null],
      ].sort(),
    );
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["SAMPLES_FROM_SPANS"]);
  });

  it("derives nothing when the evidence has samples of its own", async () => {
    const result = await finished((b) => {
      const track = b.track({ kind: "thread" });
      b.span({ trackId: track, name: "s", startNs: 0, durNs: 10, depth: 0 });
      b.sample(b.stackOf([b.frame({ name: "f", kind: "js" })])!, track, 0, b.metric({ name: "samples", unit: "count", kind: "sampled" }), 1);
    });
    expect(sampleRows(result).map((r) => [r.stack, r.metric])).toEqual([["f", "samples"]]);
    expect(result.summary.limitations).toEqual([]);
  });

  it("counts children that outlast their parent as the parent's self time 0, and cuts a loop of parents", async () => {
    const result = await finished((b) => {
      const track = b.track({ kind: "thread" });
      const [p, c1, c2, x, y] = [0, 1, 2, 3, 4].map(() => b.allocateSpanId());
      b.span({ spanId: p, trackId: track, name: "parent", startNs: 0, durNs: 10, depth: 0 });
      b.span({ spanId: c1, trackId: track, parentSpanId: p, name: "job", startNs: 0, durNs: 8, depth: 1 });
      b.span({ spanId: c2, trackId: track, parentSpanId: p, name: "job", startNs: 0, durNs: 8, depth: 1 });
      b.span({ spanId: x, trackId: track, parentSpanId: y, name: "x", startNs: 0, durNs: 5, depth: 1 });
      b.span({ spanId: y, trackId: track, parentSpanId: x, name: "y", startNs: 0, durNs: 7, depth: 1 });
    });
    const rows = sampleRows(result).map((r) => [r.stack, r.value]);
    expect(rows).toContainEqual(["parent;job", 16]);
    expect(rows.some(([stack]) => stack === "parent")).toBe(false);
    // The loop x → y → x is cut where it was noticed: y, the one with self time, under x.
    expect(rows).toContainEqual(["x;y", 2]);
    expect(Object.fromEntries(result.summary.limitations.map((l) => [l.code, l.count]))).toEqual({ SAMPLES_FROM_SPANS: 1, SPAN_CHILDREN_OUTLAST_PARENT: 2, SPAN_PARENT_CYCLE: 1 });
  });

  it("gives up, with a limitation, on spans with more distinct names than it keeps", async () => {
    const result = await finished((b) => {
      const track = b.track({ kind: "thread" });
      for (let i = 0; i <= MAX_SPAN_FLAME_NAMES; i++) b.span({ trackId: track, name: `span ${i}`, startNs: i, durNs: 1, depth: 0 });
    });
    expect(result.tables.samples).toEqual([]);
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["SPAN_FLAME_TOO_MANY_NAMES"]);
  });
});
