import { describe, expect, it } from "vitest";
import { buildFlameTree } from "../flame/tree";
import { CriticalPathInputError } from "./errors";
import { criticalPathFlame, nearestRank, operationCriticalTimes, spanCriticalPaths, type RootCriticalPath, type SpanInput } from "./spans";

/** A span of trace `trace`: [start, end) in ns. */
function span(span_id: string, parent_span_id: string | null, start: number, end: number, name = span_id, service = "svc", trace_id = "t1"): SpanInput {
  return { span_id, parent_span_id, trace_id, start_ns: start, dur_ns: end - start, name, service };
}

const segmentsOf = (path: RootCriticalPath) => path.segments.map((s) => [s.span_id, s.start_ns, s.end_ns]);
const exclusiveOf = (path: RootCriticalPath) => Object.fromEntries(path.spans.map((s) => [s.span_id, s.critical_ns]));

/** Every path's segments cover its root's interval exactly, in time order. */
function expectCovered(path: RootCriticalPath) {
  let at = path.start_ns;
  for (const s of path.segments) {
    expect(s.start_ns).toBe(at);
    at = s.end_ns;
  }
  expect(at).toBe(path.end_ns);
  expect(path.spans.reduce((sum, s) => sum + s.critical_ns, 0)).toBe(path.critical_path_ns);
}

describe("spanCriticalPaths", () => {
  it("walks back through sequential children; the gaps are the parent's own time", () => {
    const { paths } = spanCriticalPaths([span("R", null, 0, 100), span("A", "R", 10, 40), span("B", "R", 50, 90)]);
    expect(paths).toHaveLength(1);
    expect(segmentsOf(paths[0])).toEqual([
      ["R", 0, 10],
      ["A", 10, 40],
      ["R", 40, 50],
      ["B", 50, 90],
      ["R", 90, 100],
    ]);
    expect(exclusiveOf(paths[0])).toEqual({ R: 30, A: 30, B: 40 });
    expect(paths[0].critical_path_ns).toBe(100);
    expectCovered(paths[0]);
  });

  it("clips a child that outlives its parent, and leaves out a grandchild wholly outside the clipped child", () => {
    const result = spanCriticalPaths([span("R", null, 0, 100), span("C", "R", 50, 150), span("G", "C", 120, 140)]);
    const [path] = result.paths;
    expect(segmentsOf(path)).toEqual([
      ["R", 0, 50],
      ["C", 50, 100],
    ]);
    expect(exclusiveOf(path)).toEqual({ R: 50, C: 50 });
    expect(result.spans_outside_parent).toBe(1);
    expectCovered(path);
  });

  it("takes the last-finishing of overlapping siblings and skips the one ending inside it", () => {
    // A [10, 60] ends inside B [40, 90]: once the walk is at B's start (40), A ends too late.
    const [path] = spanCriticalPaths([span("R", null, 0, 100), span("A", "R", 10, 60), span("B", "R", 40, 90), span("B1", "B", 45, 70)]).paths;
    expect(segmentsOf(path)).toEqual([
      ["R", 0, 40],
      ["B", 40, 45],
      ["B1", 45, 70],
      ["B", 70, 90],
      ["R", 90, 100],
    ]);
    expect(exclusiveOf(path)).toEqual({ R: 50, B: 25, B1: 25 });
    expect(path.spans.map((s) => s.span_id)).not.toContain("A");
    expectCovered(path);
  });

  it("never puts an async follower on its cause's path; a follower without a parent starts its own path", () => {
    // Q enqueues work that W picks up (W follows from Q, no parent); F has a parent R and a link from Q: a child of R.
    const spans = [span("R", null, 0, 100, "handle", "api"), span("Q", "R", 10, 30, "enqueue", "api"), span("F", "R", 50, 70, "notify", "api"), span("W", null, 20, 160, "work", "jobs")];
    const result = spanCriticalPaths(spans, [
      { from_span_id: "Q", to_span_id: "W" },
      { from_span_id: "Q", to_span_id: "F" },
    ]);
    expect(result.paths.map((p) => [p.root_span_id, p.follows_span_id, p.parent_missing])).toEqual([
      ["R", null, false],
      ["W", "Q", false],
    ]);
    const [main, follower] = result.paths;
    expect(segmentsOf(main)).toEqual([
      ["R", 0, 10],
      ["Q", 10, 30],
      ["R", 30, 50],
      ["F", 50, 70],
      ["R", 70, 100],
    ]);
    expect(exclusiveOf(main)).toEqual({ R: 60, Q: 20, F: 20 });
    expect(exclusiveOf(follower)).toEqual({ W: 140 });
    expectCovered(main);
    expectCovered(follower);
  });

  it("keeps a zero-duration span at its parent's end on the path with no time, and its long sibling too", () => {
    const [path] = spanCriticalPaths([span("R", null, 0, 10), span("A", "R", 2, 8), span("Z", "R", 10, 10)]).paths;
    expect(segmentsOf(path)).toEqual([
      ["R", 0, 2],
      ["A", 2, 8],
      ["R", 8, 10],
      ["Z", 10, 10],
    ]);
    expect(exclusiveOf(path)).toEqual({ R: 4, A: 6, Z: 0 });
    expectCovered(path);
  });

  it("makes a span whose parent is missing a root, marked as such, beside the trace's real root", () => {
    const result = spanCriticalPaths([span("X", "gone", 5, 55), span("Y", "X", 15, 25), span("R", null, 0, 30)]);
    expect(result.paths.map((p) => [p.root_span_id, p.parent_missing])).toEqual([
      ["R", false],
      ["X", true],
    ]);
    expect(exclusiveOf(result.paths[1])).toEqual({ X: 40, Y: 10 });
    expect(segmentsOf(result.paths[1])).toEqual([
      ["X", 5, 15],
      ["Y", 15, 25],
      ["X", 25, 55],
    ]);
  });

  it("counts a parent covered wholly by its child as on the path with no time of its own", () => {
    const [path] = spanCriticalPaths([span("R", null, 0, 10), span("C", "R", 0, 10)]).paths;
    expect(exclusiveOf(path)).toEqual({ R: 0, C: 10 });
    expect(path.spans.map((s) => [s.span_id, s.parent_index])).toEqual([
      ["R", -1],
      ["C", 0],
    ]);
  });

  it("looks parents up within the span's own trace", () => {
    const result = spanCriticalPaths([span("R", null, 0, 10, "r", "s", "t1"), span("C", "R", 0, 5, "c", "s", "t2")]);
    expect(result.paths.map((p) => [p.trace_id, p.root_span_id, p.parent_missing])).toEqual([
      ["t1", "R", false],
      ["t2", "C", true],
    ]);
  });

  it("leaves out spans whose parent links loop, and counts them", () => {
    const result = spanCriticalPaths([span("R", null, 0, 10), span("P", "Q", 1, 2), span("Q", "P", 1, 2)]);
    expect(result.paths.map((p) => p.root_span_id)).toEqual(["R"]);
    expect(result.spans_in_parent_cycles).toBe(2);
  });

  it("walks a 100,000-deep chain of spans without exhausting the call stack", () => {
    const spans = Array.from({ length: 100_000 }, (_, i) => span(`s${i}`, i === 0 ? null : `s${i - 1}`, i, 200_000 - i));
    const [path] = spanCriticalPaths(spans).paths;
    expect(path.spans).toHaveLength(100_000);
    expect(path.spans[99_999].critical_ns).toBe(200_000 - 2 * 99_999);
    expectCovered(path);
  });

  it("refuses a negative duration, naming the span", () => {
    expect(() => spanCriticalPaths([span("R", null, 10, 0)])).toThrow(CriticalPathInputError);
    expect(() => spanCriticalPaths([span("R", null, 10, 0)])).toThrow("(span 0)");
  });
});

describe("operationCriticalTimes and criticalPathFlame", () => {
  // t1: GET 20 own, query 80.  t2: GET 10, query 10, cache get 30.  t3: GET 20, query 100 + 80.
  const spans = [
    span("a1", null, 0, 100, "GET", "api", "t1"),
    span("a2", "a1", 10, 90, "query", "db", "t1"),
    span("b1", null, 0, 50, "GET", "api", "t2"),
    span("b2", "b1", 0, 10, "query", "db", "t2"),
    span("b3", "b1", 20, 50, "get", "cache", "t2"),
    span("c1", null, 0, 200, "GET", "api", "t3"),
    span("c2", "c1", 0, 100, "query", "db", "t3"),
    span("c3", "c1", 100, 180, "query", "db", "t3"),
    span("c4", "c1", 200, 200, "flush", "api", "t3"),
  ];
  const result = spanCriticalPaths(spans);

  it("sums each operation's exclusive time on the paths, with per-trace p50/p95 by nearest rank", () => {
    expect(operationCriticalTimes(spans, result)).toEqual([
      // per trace 80, 10, 180 → sorted 10, 80, 180
      { service: "db", operation: "query", critical_ns: 270, count: 4, traces: 3, p50_ns: 80, p95_ns: 180 },
      // per trace 20, 10, 20 → sorted 10, 20, 20
      { service: "api", operation: "GET", critical_ns: 50, count: 3, traces: 3, p50_ns: 20, p95_ns: 20 },
      { service: "cache", operation: "get", critical_ns: 30, count: 1, traces: 1, p50_ns: 30, p95_ns: 30 },
      { service: "api", operation: "flush", critical_ns: 0, count: 1, traces: 1, p50_ns: 0, p95_ns: 0 },
    ]);
  });

  it("takes the value at rank ceil(q·n) for a percentile", () => {
    const values = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(nearestRank(values, 0.5)).toBe(10);
    expect(nearestRank(values, 0.95)).toBe(19);
    expect(nearestRank([], 0.5)).toBe(0);
  });

  it("gives the calling-context flame graph of critical time, leaving out contexts with none", () => {
    const nodes = criticalPathFlame(spans, result);
    const byName = Object.fromEntries(nodes.map((n) => [n.name, n]));
    expect(nodes.map((n) => [n.name, n.module, n.self, n.total])).toEqual([
      ["GET", "api", 50, 350],
      ["query", "db", 270, 270],
      ["get", "cache", 30, 30],
    ]);
    expect(byName.GET.parent_id).toBeNull();
    expect(byName.query.parent_id).toBe(byName.GET.node_id);
    expect(byName.get.parent_id).toBe(byName.GET.node_id);
    const tree = buildFlameTree(nodes, "critical path");
    expect(tree.total[0]).toBe(350);
  });

  it("gives the same node ids for the same calling contexts in another run", () => {
    const again = criticalPathFlame(spans.slice(0, 2), spanCriticalPaths(spans.slice(0, 2)));
    const all = criticalPathFlame(spans, result);
    expect(again.map((n) => n.node_id)).toEqual(all.slice(0, 2).map((n) => n.node_id));
  });
});
