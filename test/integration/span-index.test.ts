import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { spanExtentQuery, traceWindowQuery } from "../../analysis/queries";
import type { WindowSpan } from "../../analysis/queries/trace-window";
import { openEvidence, type EvidenceReader } from "../../server/evidence/engine";
import { extractAndPublish } from "../../server/evidence/extract";
import { DEFAULT_SPAN_INDEX_LIMITS, setSpanIndexLimits, spanIndexFor, spanIndexStats, type SpanIndex } from "../../server/evidence/span-index";
import { registerArtifact } from "../../server/store/artifacts";
import { initWorkspace, type Workspace } from "../../server/store/workspace";
import { traceWindow } from "../../server/services/evidence";
import { callService } from "../../server/services/service";
import { publishEvidence } from "../helpers/seed";

/** A small deterministic generator (mulberry32), so a failure names a reproducible case. */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRACE_END = 2_000_000;
const NAMES = ["parse", "layout", "paint", "gc", "fetch", "db.query", "render", "idle"];

/**
 * Spans on four tracks: process-long spans from 0 (two on one track, with equal starts), nested
 * spans up to depth 4 whose first child starts with its parent, zero-duration instants (several at
 * one time), nullable category, status and args. `parity` 0 or 1 puts every start on even or odd
 * nanoseconds: two generations of one run with the same parity tie on (track, start, span) at
 * least at their process-long spans (span ids restart in each generation), which the
 * generation id then orders.
 */
function trace(seed: number, parity: 0 | 1) {
  return (b: EvidenceBuilder) => {
    const random = rng(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
    const even = (ns: number) => 2 * Math.floor(ns / 2) + parity;
    const tracks = [1, 2, 3, 4].map((tid) => b.track({ processId: 1, threadId: tid, threadName: `t${tid}`, kind: "thread" }));
    const span = (trackId: number, parent: number | undefined, startNs: number, durNs: number, depth: number) =>
      b.span({
        trackId,
        parentSpanId: parent,
        name: pick(NAMES),
        category: random() < 0.2 ? null : pick(["js", "net", "gpu"]),
        status: random() < 0.7 ? null : pick(["ok", "error"]),
        args: random() < 0.3 ? null : { n: Math.floor(random() * 1e6), s: pick(["a", "é", "ü😀"]) },
        startNs,
        durNs,
        depth,
      });
    const nest = (trackId: number, parent: number, from: number, to: number, depth: number) => {
      let at = from;
      while (depth < 5 && at < to && random() < 0.8) {
        const dur = random() < 0.15 ? 0 : Math.floor(random() * (to - at) * 0.6);
        const start = even(at);
        const id = span(trackId, parent, start, dur, depth);
        if (dur === 0 && random() < 0.5) span(trackId, parent, start, 0, depth); // another instant at the same time
        if (dur > 20) nest(trackId, id, start, start + dur, depth + 1);
        at = start + dur + 2 + Math.floor(random() * 4_000);
      }
    };
    for (const [i, trackId] of tracks.entries()) {
      const lifetime = i % 2 === 0 ? span(trackId, undefined, parity, TRACE_END + 500_000 * i, 0) : undefined;
      if (i === 1) {
        span(trackId, undefined, parity, TRACE_END * 3, 0);
        span(trackId, undefined, parity, TRACE_END * 2, 0);
      }
      let at = 10;
      while (at < TRACE_END) {
        const dur = random() < 0.05 ? 0 : 200 + Math.floor(random() * (random() < 0.1 ? 200_000 : 20_000));
        const start = even(at);
        const root = span(trackId, lifetime, start, dur, lifetime === undefined ? 0 : 1);
        nest(trackId, root, start, start + dur, lifetime === undefined ? 1 : 2);
        at = start + dur + Math.floor(random() * 3_000);
      }
    }
  };
}

let root: string;
let ws: Workspace;
let runId: string;
let generations: string[];
let reader: EvidenceReader;
let spanCount = 0;
const ctx = () => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), "emberscope-span-index-"));
  ws = initWorkspace(root);
  // One run with two generations (two artifacts), as a capture with several outputs has.
  const first = await publishEvidence(ws, "spans", trace(11, 0));
  runId = first.run_id;
  const stored = await ws.objects.put(Buffer.from("second output"));
  registerArtifact(ws.db, stored, { runId, kind: "native", producer: "test", mediaType: "text/plain", sensitivity: "normal" });
  const second = await extractAndPublish(ws, { artifactId: stored.id, runId, extractor: "test", extractorVersion: "1", produce: async (b) => trace(12, 0)(b) });
  generations = [first.generation_id, second.generation_id].sort();
  spanCount = first.summary.rows.spans + second.summary.rows.spans;
  reader = await openEvidence(ws, "HEAD");
}, 120_000);

afterAll(() => {
  ws.close();
  rmSync(root, { recursive: true, force: true });
});

afterEach(() => {
  setSpanIndexLimits(DEFAULT_SPAN_INDEX_LIMITS);
});

interface Question {
  start_ns: number;
  end_ns: number;
  tracks: number[] | null;
  after: [number, number, number, string] | null;
  limit: number;
}

async function bySql(q: Question): Promise<WindowSpan[]> {
  const [extent] = await reader.run(spanExtentQuery, { generations });
  return reader.run(traceWindowQuery, {
    generations,
    start_ns: q.start_ns,
    end_ns: q.end_ns,
    long_dur_ns: extent?.long_dur_ns ?? Number.MAX_SAFE_INTEGER,
    tracks: q.tracks,
    after_track: q.after?.[0] ?? null,
    after_start: q.after?.[1] ?? null,
    after_span: q.after?.[2] ?? null,
    after_generation: q.after?.[3] ?? null,
    limit: q.limit,
  });
}

const keyOf = (row: WindowSpan): [number, number, number, string] => [row.track_id, row.start_ns, row.span_id, row.generation_id];

/** Both answers, compared as the JSON a client receives (same rows, values, key order). */
async function expectSame(index: SpanIndex, q: Question): Promise<WindowSpan[]> {
  const fromSql = await bySql(q);
  const fromIndex = index.window(q);
  expect(JSON.stringify(fromIndex), JSON.stringify(q)).toBe(JSON.stringify(fromSql));
  return fromSql;
}

describe("span index (trace windows in memory)", () => {
  it("answers random windows, track filters and limits exactly as the trace_window query", async () => {
    const index = (await spanIndexFor(ws.layout.dir, reader, generations))!;
    expect(index.spans).toBe(spanCount);
    const everything = await bySql({ start_ns: -1, end_ns: Number.MAX_SAFE_INTEGER, tracks: null, after: null, limit: 10_000 });
    expect(everything).toHaveLength(spanCount); // the fixture stays under one page, so every span is compared
    expect(new Set(everything.map((s) => s.generation_id)).size).toBe(2);
    expect(everything.some((s) => s.dur_ns === 0)).toBe(true);
    expect(everything.some((s) => s.depth >= 4)).toBe(true);
    // Window edges on span edges: a span ending exactly at the window start is in, one starting at its end is not.
    const edges = everything.flatMap((s) => [s.start_ns, s.start_ns + s.dur_ns]);
    const random = rng(5);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
    const trackChoices: (number[] | null)[] = [null, null, [0], [1, 3], [2, 0], [], [99], [0, 1, 2, 3, 99]];
    let rows = 0;
    for (let i = 0; i < 300; i++) {
      const start = random() < 0.5 ? pick(edges) : Math.floor(random() * (TRACE_END + 20_000)) - 10_000;
      const length = pick([1, 2, 50, 1_000, 20_000, 300_000, TRACE_END * 4]);
      const end = random() < 0.3 ? Math.max(start + 1, pick(edges)) : start + length;
      const answer = await expectSame(index, { start_ns: start, end_ns: end, tracks: pick(trackChoices), after: null, limit: pick([1, 2, 3, 7, 50, 10_000]) });
      rows += answer.length;
    }
    expect(rows).toBeGreaterThan(1_000);
  }, 120_000);

  it("walks every window page by page with keyset cursors exactly as the trace_window query", async () => {
    const index = (await spanIndexFor(ws.layout.dir, reader, generations))!;
    const random = rng(9);
    for (let walk = 0; walk < 12; walk++) {
      const start = Math.floor(random() * TRACE_END);
      const q = { start_ns: start, end_ns: start + [5_000, 60_000, TRACE_END][walk % 3], tracks: walk % 4 === 3 ? [1, 2] : null };
      const whole = await bySql({ ...q, after: null, limit: 10_000 });
      const limit = 1 + Math.floor(random() * 40);
      const walked: WindowSpan[] = [];
      let after: [number, number, number, string] | null = null;
      for (;;) {
        const page = await expectSame(index, { ...q, after, limit });
        walked.push(...page);
        if (page.length < limit) break;
        after = keyOf(page[page.length - 1]);
      }
      expect(walked).toEqual(whole);
    }
    // A cursor in the middle of a run of equal starts (instants at one time, a child starting with its parent).
    const all = await bySql({ start_ns: 0, end_ns: TRACE_END, tracks: null, after: null, limit: 10_000 });
    const tied = all.findIndex((s, i) => i > 0 && s.start_ns === all[i - 1].start_ns && s.track_id === all[i - 1].track_id);
    expect(tied).toBeGreaterThan(0);
    await expectSame(index, { start_ns: 0, end_ns: TRACE_END, tracks: null, after: keyOf(all[tied - 1]), limit: 5 });
    // Two generations' spans with the same (track, start, span id): the generation orders them, and
    // a cursor after the first still finds the second.
    const twin = all.findIndex((s, i) => i > 0 && s.track_id === all[i - 1].track_id && s.start_ns === all[i - 1].start_ns && s.span_id === all[i - 1].span_id);
    expect(twin).toBeGreaterThan(0);
    expect(all[twin].generation_id > all[twin - 1].generation_id).toBe(true);
    const [next] = await expectSame(index, { start_ns: 0, end_ns: TRACE_END, tracks: null, after: keyOf(all[twin - 1]), limit: 1 });
    expect(next).toEqual(all[twin]);
  }, 120_000);

  it("finds a window's spans by binary search: a process-long span does not widen every window's search", async () => {
    const { generation_id } = await publishEvidence(ws, "one long span", (b) => {
      const track = b.track({ threadId: 1, kind: "thread" });
      b.span({ trackId: track, name: "process", startNs: 0, durNs: 5_000_000, depth: 0 });
      for (let i = 0; i < 20_000; i++) b.span({ trackId: track, name: `s${i % 7}`, startNs: 100 + i * 100, durNs: 150, depth: 1 });
    });
    const longReader = await openEvidence(ws, "HEAD");
    const index = (await spanIndexFor(ws.layout.dir, longReader, [generation_id]))!;
    const seen = { rows: 0 };
    const rows = index.window({ start_ns: 1_000_000, end_ns: 1_000_100, tracks: null, after: null, limit: 100 }, seen);
    expect(rows.map((r) => [r.name, r.start_ns])).toEqual([["process", 0], ["s2", 999_900], ["s3", 1_000_000]]);
    // The two short spans, the long one, and at most one short span that ends just before the window.
    expect(seen.rows).toBeLessThanOrEqual(4);
  }, 60_000);

  it("gives the service the same spans, cursors and status as the SQL path, beyond the bound too", async () => {
    const windows = [
      { run_id: runId, start_ns: 0, end_ns: 40_000, limit: 25 },
      { run_id: runId, start_ns: 1_000_000, end_ns: 1_000_001, limit: 500 },
      { run_id: runId, start_ns: 700_000, end_ns: 900_000, tracks: [3, 1], limit: 60 },
      { run_id: runId, start_ns: TRACE_END * 5, end_ns: TRACE_END * 6, limit: 10 },
      { run_id: runId, start_ns: 10, end_ns: TRACE_END, tracks: [], limit: 10 },
    ];
    const walkAll = async () => {
      const pages: unknown[] = [];
      for (const args of windows) {
        let cursor: string | undefined;
        do {
          const page = await callService(traceWindow, ctx(), { ...args, cursor });
          pages.push(page);
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
      }
      return pages;
    };
    const loadsBefore = spanIndexStats().loads;
    // The service's first call starts the load and is answered by SQL; once loaded, the index answers.
    await callService(traceWindow, ctx(), windows[0]);
    expect(spanIndexStats().loads).toBe(loadsBefore + 1);
    await spanIndexFor(ws.layout.dir, reader, generations);
    const servedBefore = spanIndexStats().served;
    const withIndex = await walkAll();
    expect(spanIndexStats().served - servedBefore).toBe(withIndex.length);
    expect(spanIndexStats().loads).toBe(loadsBefore + 1);
    setSpanIndexLimits({ ...DEFAULT_SPAN_INDEX_LIMITS, maxSpans: spanCount - 1 });
    const bySqlPath = await walkAll();
    expect(spanIndexStats()).toMatchObject({ loads: loadsBefore + 1, served: servedBefore + withIndex.length, bytes: 0 }); // beyond the bound nothing is loaded
    expect(await spanIndexFor(ws.layout.dir, reader, generations)).toBeNull();
    expect(JSON.stringify(withIndex)).toBe(JSON.stringify(bySqlPath));
    expect(withIndex.length).toBeGreaterThan(windows.length); // the walks did page
    expect(withIndex.map((p) => (p as { status: { state: string } }).status.state)).toContain("empty");
  }, 120_000);

  it("falls back to SQL when the index would exceed its memory bound, and drops the least recently used index", async () => {
    const index = (await spanIndexFor(ws.layout.dir, reader, generations))!;
    expect(index.bytes).toBeGreaterThan(spanCount * 60);
    setSpanIndexLimits({ maxSpans: DEFAULT_SPAN_INDEX_LIMITS.maxSpans, maxBytes: index.bytes - 1 });
    expect(await spanIndexFor(ws.layout.dir, reader, generations)).toBeNull();
    // Room for one: indexing one generation, then the other, keeps only the newer.
    setSpanIndexLimits({ maxSpans: DEFAULT_SPAN_INDEX_LIMITS.maxSpans, maxBytes: Math.ceil(index.bytes * 0.9) });
    const loads = spanIndexStats().loads;
    const a = await spanIndexFor(ws.layout.dir, reader, [generations[0]]);
    const b = await spanIndexFor(ws.layout.dir, reader, [generations[1]]);
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(spanIndexStats()).toMatchObject({ loads: loads + 2, kept: 1, bytes: b!.bytes });
    await spanIndexFor(ws.layout.dir, reader, [generations[1]]);
    expect(spanIndexStats().loads).toBe(loads + 2);
    await spanIndexFor(ws.layout.dir, reader, [generations[0]]);
    expect(spanIndexStats().loads).toBe(loads + 3);
  }, 120_000);

  it("loads once for concurrent first calls, and a failed load is forgotten so the next call loads again", async () => {
    const loads = spanIndexStats().loads;
    const args = { run_id: runId, start_ns: 500_000, end_ns: 520_000, limit: 40 };
    const answers = await Promise.all(Array.from({ length: 8 }, () => callService(traceWindow, ctx(), args)));
    expect(spanIndexStats().loads).toBe(loads + 1);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0].spans.length).toBeGreaterThan(0);

    setSpanIndexLimits(DEFAULT_SPAN_INDEX_LIMITS);
    // The DuckDB scan failing (a file gone, a closed reader): the only stand-in, around the real reader.
    const failing: EvidenceReader = { ...reader, scan: async () => Promise.reject(new Error("the spans file is gone")) };
    await expect(spanIndexFor(ws.layout.dir, failing, generations)).rejects.toThrow("the spans file is gone");
    const index = await spanIndexFor(ws.layout.dir, reader, generations);
    expect(index?.spans).toBe(spanCount);
    expect(spanIndexStats().loads).toBe(loads + 3);
  }, 120_000);

  it("indexes a run without spans and answers its windows as empty", async () => {
    const { run_id, generation_id } = await publishEvidence(ws, "no spans", (b) => {
      const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
      const track = b.track({ threadId: 1, kind: "thread" });
      b.sample(b.stackOf([b.frame({ name: "main", kind: "js" })])!, track, 10, metric, 1);
    });
    const emptyReader = await openEvidence(ws, "HEAD");
    const index = (await spanIndexFor(ws.layout.dir, emptyReader, [generation_id]))!;
    expect(index.spans).toBe(0);
    expect(index.window({ start_ns: 0, end_ns: 100, tracks: null, after: null, limit: 10 })).toEqual([]);
    const served = spanIndexStats().served;
    const viaIndex = await callService(traceWindow, ctx(), { run_id, start_ns: 0, end_ns: 100 });
    expect(spanIndexStats().served).toBe(served + 1);
    setSpanIndexLimits({ ...DEFAULT_SPAN_INDEX_LIMITS, maxSpans: -1 });
    const viaSql = await callService(traceWindow, ctx(), { run_id, start_ns: 0, end_ns: 100 });
    expect(viaIndex).toEqual(viaSql);
    expect(viaIndex).toMatchObject({ spans: [], next_cursor: null, status: { state: "empty" } });
  }, 60_000);
});
