import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { addPrunedRemainders, calleesQuery, callersQuery, compareQuery, flameTreeQuery, flameTreeRangeQuery, hotspotsQuery, metricTotalsQuery, stackExamplesQuery, traceWindowQuery } from "../../analysis/queries";
import { compareOnTracksQuery } from "../../analysis/queries/compare";
import { openEvidence } from "../../server/evidence/engine";
import { analyzeHotspots, traceWindow } from "../../server/services/evidence";
import { callService } from "../../server/services/service";
import { withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

const publish = publishEvidence;

/** main;a;b ×3, main;a;c ×2, main;d ×1, main;a;a;b ×1 (recursion): self b=4 c=2 d=1; total main=7 a=6. */
function fixture(counts: Record<string, number>) {
  return (b: EvidenceBuilder) => {
    const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
    const track = b.track({ threadId: 1, threadName: "main", kind: "thread" });
    let t = 0;
    for (const [stack, n] of Object.entries(counts)) {
      const leaf = b.stackOf(stack.split(";").map((name) => b.frame({ name, file: `${name}.js`, line: 1, kind: "js" })))!;
      for (let i = 0; i < n; i++) b.sample(leaf, track, (t += 10), metric, 1);
    }
    const outer = b.allocateSpanId();
    b.span({ spanId: outer, trackId: track, name: "request", startNs: 0, durNs: 100, depth: 0 });
    b.span({ trackId: track, parentSpanId: outer, name: "db", startNs: 20, durNs: 30, depth: 1 });
    b.span({ trackId: track, name: "later", startNs: 500, durNs: 10, depth: 0 });
  };
}

const BASE = { "main;a;b": 3, "main;a;c": 2, "main;d": 1, "main;a;a;b": 1 };

describe("evidence queries over published Parquet", () => {
  it("hotspots give self and inclusive values, counting recursion once per sample", async () => {
    await withWorkspace(async (ws) => {
      const published = await publish(ws, "base", fixture(BASE));
      expect(published.summary.rows).toMatchObject({ samples: 7, spans: 3, frames: 5, stack_totals: 7, frame_totals: 5 });
      const ev = await openEvidence(ws, "HEAD");
      const rows = await ev.run(hotspotsQuery, { generations: [published.generation_id], metric: "samples", limit: 10 });
      const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
      expect(rows.map((r) => r.name)).toEqual(["b", "c", "d", "a", "main"]);
      expect(byName.b).toMatchObject({ self: 4, total: 4, grand_total: 7 });
      expect(byName.a).toMatchObject({ self: 0, total: 6 });
      expect(byName.main).toMatchObject({ self: 0, total: 7, total_pct: 100 });
      expect(byName.b.self_pct).toBeCloseTo((4 / 7) * 100);

      const page1 = await ev.run(hotspotsQuery, { generations: [published.generation_id], metric: "samples", limit: 2 });
      const last = page1[page1.length - 1];
      const page2 = await ev.run(hotspotsQuery, { generations: [published.generation_id], metric: "samples", limit: 10, after_self: last.self, after_key: last.frame_key });
      expect([...page1, ...page2].map((r) => r.name)).toEqual(["b", "c", "d", "a", "main"]);
    });
  });

  it("flame_tree merges stacks by path, prunes to a budget and accounts for the remainder", async () => {
    await withWorkspace(async (ws) => {
      const published = await publish(ws, "base", fixture(BASE));
      const ev = await openEvidence(ws, "HEAD");
      const all = await ev.run(flameTreeQuery, { generations: [published.generation_id], metric: "samples", budget: 100 });
      expect(all).toHaveLength(7); // main, main;a, main;d, main;a;b, main;a;c, main;a;a, main;a;a;b
      const root = all.find((n) => n.parent_id === null)!;
      expect(root).toMatchObject({ name: "main", total: 7, self: 0, depth: 0 });
      const pruned = await ev.run(flameTreeQuery, { generations: [published.generation_id], metric: "samples", budget: 3 });
      expect(pruned.map((n) => n.name)).toEqual(["main", "a", "b"]);
      const { nodes, pruned_total } = addPrunedRemainders(pruned);
      expect(pruned_total).toBe(7 - 3);
      expect(nodes.filter((n) => n.frame_key === "(pruned)").map((n) => n.total).sort()).toEqual([1, 3]);
      const windowed = await ev.run(flameTreeRangeQuery, { generations: [published.generation_id], metric: "samples", budget: 100, start_ns: 0, end_ns: 35 });
      expect(windowed.find((n) => n.name === "b")).toMatchObject({ self: 3, total: 3 });
      const whole = await ev.run(flameTreeRangeQuery, { generations: [published.generation_id], metric: "samples", budget: 100, start_ns: null, end_ns: null });
      expect(whole.map((n) => [n.node_id, n.self, n.total]).sort()).toEqual(all.map((n) => [n.node_id, n.self, n.total]).sort());
      expect(windowed.find((n) => n.parent_id === null)!.total).toBe(3);
    });
  });

  it("callers, callees and stack examples follow the stack tree", async () => {
    await withWorkspace(async (ws) => {
      const { generation_id } = await publish(ws, "base", fixture(BASE));
      const ev = await openEvidence(ws, "HEAD");
      const bKey = (await ev.run(hotspotsQuery, { generations: [generation_id], metric: "samples", limit: 1 }))[0].frame_key;
      const aKey = (await ev.run(hotspotsQuery, { generations: [generation_id], metric: "samples", limit: 10 })).find((r) => r.name === "a")!.frame_key;
      const callers = await ev.run(callersQuery, { generations: [generation_id], metric: "samples", frame_key: bKey, limit: 10 });
      expect(callers.map((c) => [c.name, c.value])).toEqual([["a", 4]]);
      const callees = await ev.run(calleesQuery, { generations: [generation_id], metric: "samples", frame_key: aKey, limit: 10 });
      // a calls b directly both at main;a and at main;a;a; the recursive call a;a collapses into one a.
      expect(callees.map((c) => [c.name, c.value])).toEqual([["b", 4], ["c", 2]]);
      const examples = await ev.run(stackExamplesQuery, { generations: [generation_id], metric: "samples", frame_key: bKey, limit: 5 });
      expect(examples).toEqual([
        { value: 3, frames: ["main", "a", "b"] },
        { value: 1, frames: ["main", "a", "a", "b"] },
      ]);
    });
  });

  it("trace_window returns the spans overlapping a window, by track and start", async () => {
    await withWorkspace(async (ws) => {
      const { generation_id } = await publish(ws, "base", fixture(BASE));
      const ev = await openEvidence(ws, "HEAD");
      const spans = await ev.run(traceWindowQuery, { generations: [generation_id], start_ns: 40, end_ns: 200, limit: 10 });
      expect(spans.map((s) => s.name)).toEqual(["request", "db"]);
      expect(spans[1]).toMatchObject({ depth: 1, parent_span_id: spans[0].span_id, start_ns: 20, dur_ns: 30 });
    });
  });

  it("trace_window over many row groups finds every overlapping span, including long ones that start far before the window", async () => {
    await withWorkspace(async (ws) => {
      // 50 k short spans (several 16 k-span row groups) and two long ones from the start.
      const spans: { name: string; start: number; dur: number }[] = [{ name: "whole", start: 0, dur: 5_000_000 }, { name: "early", start: 10, dur: 100 }];
      for (let i = 0; i < 50_000; i++) spans.push({ name: `s${i}`, start: 100 + i * 100, dur: 150 });
      const { run_id } = await publish(ws, "many", (b) => {
        const track = b.track({ threadId: 1, kind: "thread" });
        for (const span of spans) b.span({ trackId: track, name: span.name, startNs: span.start, durNs: span.dur, depth: 0 });
      });
      const ctx = { locator: { cwd: ws.layout.projectRoot, projectRoot: ws.layout.projectRoot }, actor: "test" as const };
      for (const [start, end] of [[4_000_000, 4_000_500], [50, 260], [4_999_990, 6_000_000]]) {
        const expected = spans.filter((s) => s.start < end && s.start + s.dur >= start).map((s) => s.name).sort();
        const window = await callService(traceWindow, ctx, { run_id, start_ns: start, end_ns: end, limit: 5000 });
        expect(window.spans.map((s) => s.name).sort(), `${start}..${end}`).toEqual(expected);
      }
    });
  }, 60_000);

  it("hotspots pages by cursor (from the kept ranking) give exactly the single page's rows, ties ordered by frame_key", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publish(ws, "paged", fixture(BASE));
      const ctx = { locator: { cwd: ws.layout.projectRoot, projectRoot: ws.layout.projectRoot }, actor: "test" as const };
      const whole = await callService(analyzeHotspots, ctx, { run_id, metric: "samples", limit: 1000 });
      expect(whole.next_cursor).toBeNull();
      // main and a both have self 0: the tie is broken by frame_key.
      expect(whole.rows.filter((r) => r.self === 0)).toHaveLength(2);
      for (const limit of [1, 2, 3]) {
        const paged: typeof whole.rows = [];
        let cursor: string | undefined;
        do {
          const page = await callService(analyzeHotspots, ctx, { run_id, metric: "samples", limit, cursor });
          expect(page.rows.length).toBeLessThanOrEqual(limit);
          paged.push(...page.rows);
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        expect(paged, `limit ${limit}`).toEqual(whole.rows);
      }
    });
  });

  it("compare reports grown, shrunk, added and removed frames", async () => {
    await withWorkspace(async (ws) => {
      const base = await publish(ws, "base", fixture(BASE));
      const candidate = await publish(ws, "candidate", fixture({ "main;a;b": 10, "main;a;c": 2, "main;e": 1 }));
      const ev = await openEvidence(ws, "HEAD");
      const rows = await ev.run(compareQuery, {
        base_generations: [base.generation_id],
        candidate_generations: [candidate.generation_id],
        metric: "samples",
        normalize: false,
        collection: "all",
        limit: 100,
      });
      const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
      expect(rows[0].name).toBe("b");
      expect(byName.b).toMatchObject({ base_self: 4, candidate_self: 10, delta: 6, status: "changed" });
      expect(byName.b.relative).toBeCloseTo(1.5);
      // Self and total side by side: b's inclusive value grew as its self did.
      expect(byName.b).toMatchObject({ base_total: 4, candidate_total: 10, total_delta: 6 });
      expect(byName.b.total_relative).toBeCloseTo(1.5);
      // d vanished: self and total both went from 1 to 0.
      expect(byName.d).toMatchObject({ total_delta: -1, total_relative: -1 });
      expect(byName.e).toMatchObject({ status: "added", relative: null });
      expect(byName.d).toMatchObject({ status: "removed", delta: -1 });
      expect(byName.c).toBeUndefined();
      const added = await ev.run(compareQuery, { base_generations: [base.generation_id], candidate_generations: [candidate.generation_id], metric: "samples", normalize: true, collection: "added", limit: 10 });
      expect(added.map((r) => r.name)).toEqual(["e"]);
      // Normalized, a change is one of shares: main is the whole of both runs (7 of 7, 13 of 13).
      const shares = await ev.run(compareQuery, { base_generations: [base.generation_id], candidate_generations: [candidate.generation_id], metric: "samples", normalize: true, collection: "all", limit: 10 });
      const b = shares.find((r) => r.name === "b")!;
      expect(b.delta).toBeCloseTo(10 / 13 - 4 / 7);
      expect(b.total_delta).toBeCloseTo(10 / 13 - 4 / 7);
      expect(shares.find((r) => r.name === "main")).toBeUndefined(); // self 0 on both sides: unchanged
      const totals = await ev.run(metricTotalsQuery, { generations: [candidate.generation_id] });
      expect(totals).toEqual([expect.objectContaining({ name: "samples", total: 13, samples: 13 })]);
    });
  });

  it("compare reads each side's grand total once, whichever tracks it is scoped to", () => {
    // A scalar subquery at each of its four uses (self and total, normalized) doubled the
    // comparison's cost over 10 M samples; the normalized values above are what it must still give.
    for (const query of [compareQuery, compareOnTracksQuery(true, false), compareOnTracksQuery(false, true), compareOnTracksQuery(true, true)]) {
      expect(query.sql.match(/FROM b_grand\b/g)).toHaveLength(1);
      expect(query.sql.match(/FROM c_grand\b/g)).toHaveLength(1);
    }
  });
});
