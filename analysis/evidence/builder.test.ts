import { describe, expect, it } from "vitest";
import { stableKey } from "./hash";
import { EvidenceBuilder, frameKey, MemorySink, outermostByPath, outermostBySummary, StackChildren, type RowBatch, type StagingTableName } from "./builder";
import type { CodedText } from "./text-coding";
import type { EvidenceParseError } from "../formats/errors";

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

  it("gives each distinct frame one id and the same id again, across the key table's growth, with its key as stableKey writes it", async () => {
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink);
    const input = (i: number) => ({ name: `f${i}`, file: i % 3 === 0 ? null : `m${i % 7}.c`, line: i % 5 === 0 ? null : i % 11, module: i % 2 ? "lib.so" : null, kind: "native" as const });
    const ids = Array.from({ length: 100_000 }, (_, i) => builder.frame(input(i)));
    expect(ids).toEqual(ids.map((_, i) => i));
    for (let i = 99_999; i >= 0; i -= 3) expect(builder.frame(input(i))).toBe(i);
    // Fields that make one key are one frame: a fractional line rounds to the same line.
    expect(builder.frame({ ...input(7), line: 7.2 })).toBe(7);
    await builder.finish();
    expect(sink.tables.frames).toHaveLength(100_000);
    for (const row of sink.tables.frames.filter((_, i) => i % 997 === 0)) {
      const i = row.frame_id as number;
      expect(row.frame_key).toBe(frameKey(input(i)));
      expect(row.frame_key).toBe(stableKey(`f${i}\u0000${input(i).file ?? ""}\u0000${input(i).line ?? ""}\u0000${input(i).module ?? ""}\u0000native`));
    }
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

  it("takes the importer's word for which nodes are outermost when every node came with it, and works it out otherwise", async () => {
    const random = randomInts(9);
    const paths = Array.from({ length: 2000 }, () => Array.from({ length: 1 + random(16) }, () => random(10)));
    const totalsWith = async (say: (node: number) => boolean) => {
      const sink = new MemorySink();
      const builder = new EvidenceBuilder(sink);
      const frames = Array.from({ length: 10 }, (_, i) => builder.frame({ name: `h${i}`, kind: "native" }));
      const metric = builder.metric({ name: "samples", unit: "count", kind: "counted" });
      let nodes = 0;
      for (const path of paths) {
        let stack: number | null = null;
        path.forEach((frame, depth) => {
          const outermost = !path.slice(0, depth).includes(frame);
          stack = builder.stack(stack, frames[frame], say(nodes++) ? outermost : undefined);
        });
        builder.sample(stack!, null, null, metric, 1);
      }
      await builder.finish();
      return sink.tables.frame_totals;
    };
    const worked = await totalsWith(() => false);
    expect(await totalsWith(() => true)).toEqual(worked);
    // Said of some nodes only: worked out for all.
    expect(await totalsWith((node) => node % 3 !== 0)).toEqual(worked);
    // And those are right: a frame counts once per path that has it.
    const counts = new Map<number, number>();
    for (const path of paths) for (const frame of new Set(path)) counts.set(frame, (counts.get(frame) ?? 0) + 1);
    expect(new Map(worked.map((row) => [row.frame_id as number, row.total]))).toEqual(counts);
  });

  it("finds a parent's children again however many it has (kept in its record, then by hash) as the tables grow", () => {
    const children = new StackChildren();
    const random = randomInts(3);
    // Parents with 1 to 3 children fit their record; 4 to 3000 children spill to the hashed slots.
    const fanouts = [1, 2, 3, 4, 5, 9, 17, 64, 300, 3000];
    const expected = new Map<string, number>();
    let nextId = 0;
    const pairs: [number, number][] = [];
    for (let parent = -1; parent < 800; parent++) {
      const fanout = fanouts[random(fanouts.length)];
      for (let child = 0; child < fanout; child++) pairs.push([parent, random(1 << 30)]);
    }
    // Interleaved: records and slots grow while earlier parents are still being added to.
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = random(i + 1);
      [pairs[i], pairs[j]] = [pairs[j], pairs[i]];
    }
    const wrong: string[] = [];
    for (const [parent, frame] of pairs) {
      const key = `${parent}/${frame}`;
      const known = expected.get(key);
      const found = children.childOrAdd(parent, frame, nextId);
      if (known === undefined) expected.set(key, nextId++);
      if (found !== (known ?? nextId - 1)) wrong.push(`${key}: ${found}`);
    }
    for (const [key, id] of expected) {
      const [parent, frame] = key.split("/").map(Number);
      const found = children.childOrAdd(parent, frame, -2);
      if (found !== id) wrong.push(`${key} again: ${found}, not ${id}`);
    }
    expect(wrong).toEqual([]);
    expect(nextId).toBeGreaterThan(100_000);
  });

  it("declares every table but the derived ones complete before deriving totals, and sends none of their rows after", async () => {
    const heard: string[] = [];
    const sink = {
      write: (batch: RowBatch) => void heard.push(`write ${batch.table}`),
      complete: (tables: StagingTableName[]) => void heard.push(`complete ${[...tables].sort().join(",")}`),
    };
    const builder = new EvidenceBuilder(sink, 2);
    const metric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
    const track = builder.track({ kind: "thread", threadId: "1" });
    for (let i = 0; i < 5; i++) builder.sample(builder.stackOf([builder.frame({ name: "main", kind: "native" }), builder.frame({ name: `f${i}`, kind: "native" })])!, track, i, metric, 1);
    builder.spanDraft(0, { name: "s" });
    builder.placeSpan(0, { spanId: 0, trackId: track, parentSpanId: null, startNs: 0, durNs: 1, depth: 0 });
    await builder.finish();
    const at = heard.findIndex((h) => h.startsWith("complete"));
    const derived = ["frame_totals", "metrics", "stack_totals", "track_totals"];
    const completed = heard[at].slice("complete ".length).split(",");
    expect(completed).toEqual(["edges", "frames", "measurements", "samples", "span_drafts", "span_places", "spans", "stacks", "tracks"]);
    expect(heard.slice(0, at).every((h) => completed.includes(h.slice("write ".length)))).toBe(true);
    expect(heard.slice(at + 1).map((h) => h.slice("write ".length))).toEqual(expect.arrayContaining(derived));
    expect(heard.slice(at + 1).every((h) => derived.includes(h.slice("write ".length)))).toBe(true);
  });

  it("sends the frame totals in batches of its batch size, the same rows as in one batch", async () => {
    const totalsOf = async (batchRows: number | undefined) => {
      const sink = new MemorySink();
      const sizes: number[] = [];
      const counting = { write: (batch: RowBatch) => (batch.table === "frame_totals" && sizes.push(batch.length), sink.write(batch)) };
      const builder = new EvidenceBuilder(counting, batchRows);
      const metrics = ["samples", "cpu"].map((name) => builder.metric({ name, unit: "count", kind: "sampled" }));
      const random = randomInts(7);
      const frames = Array.from({ length: 40 }, (_, i) => builder.frame({ name: `f${i}`, kind: "native" }));
      for (let i = 0; i < 300; i++) {
        const stack = builder.stackOf(Array.from({ length: 1 + random(6) }, () => frames[random(frames.length)]))!;
        builder.sample(stack, null, i, metrics[i % 2], 1 + random(5));
      }
      await builder.finish();
      return { sizes, rows: sink.tables.frame_totals };
    };
    const whole = await totalsOf(undefined);
    const batched = await totalsOf(16);
    expect(whole.sizes).toEqual([whole.rows.length]);
    expect(whole.rows.length).toBeGreaterThan(16 * 3);
    expect(batched.sizes.every((n) => n <= 16)).toBe(true);
    expect(batched.sizes.length).toBeGreaterThan(3);
    expect(batched.rows).toEqual(whole.rows);
  });

  it("reports drafts never placed before declaring the span tables complete", async () => {
    const completed: string[] = [];
    const builder = new EvidenceBuilder({ write: () => undefined, complete: (tables) => void completed.push(...tables) });
    builder.spanDraft(0, { name: "never placed" });
    await expect(builder.finish()).rejects.toThrow(/1 span drafts were never placed/);
    expect(completed).toEqual([]);
  });

  it("refuses new stacks once finished, after releasing the child lookup", async () => {
    const builder = new EvidenceBuilder(new MemorySink());
    const frame = builder.frame({ name: "main", kind: "native" });
    builder.stack(null, frame);
    await builder.finish();
    expect(() => builder.stack(null, builder.frame({ name: "late", kind: "native" }))).toThrow(/finished/);
  });

  it("counts a frame once per sample in deep recursive stacks, where the path summary says yes for most frames", async () => {
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink);
    // 200 frames share the summary's 64 bits, and paths of up to 300 frames set most of them.
    const frames = Array.from({ length: 200 }, (_, i) => builder.frame({ name: `g${i}`, kind: "native" }));
    const metric = builder.metric({ name: "samples", unit: "count", kind: "counted" });
    const random = randomInts(4);
    const expectedTotal = new Map<number, number>();
    for (let i = 0; i < 400; i++) {
      const path = Array.from({ length: 1 + random(300) }, () => frames[random(random(2) ? 12 : frames.length)]);
      builder.sample(builder.stackOf(path)!, null, null, metric, 1);
      for (const frame of new Set(path)) expectedTotal.set(frame, (expectedTotal.get(frame) ?? 0) + 1);
    }
    await builder.finish();
    const totals = new Map(sink.tables.frame_totals.map((row) => [row.frame_id as number, row.total as number]));
    expect(totals).toEqual(expectedTotal);
  });

  it("counts a frame once per sample in a branching tree of deep paths over many frames, where walking up from each node would take long", async () => {
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink);
    const frames = Array.from({ length: 3000 }, (_, i) => builder.frame({ name: `h${i}`, kind: "native" }));
    const metric = builder.metric({ name: "samples", unit: "count", kind: "counted" });
    const random = randomInts(5);
    const expectedTotal = new Map<number, number>();
    // Paths share a long trunk, then branch; frames recur within a path.
    const trunk = Array.from({ length: 2000 }, () => frames[random(frames.length)]);
    for (let i = 0; i < 300; i++) {
      const path = [...trunk.slice(0, random(trunk.length)), ...Array.from({ length: random(1500) }, () => frames[random(random(2) ? 40 : frames.length)])];
      if (path.length === 0) continue;
      const value = 1 + random(5);
      builder.sample(builder.stackOf(path)!, null, null, metric, value);
      for (const frame of new Set(path)) expectedTotal.set(frame, (expectedTotal.get(frame) ?? 0) + value);
    }
    await builder.finish();
    const totals = new Map(sink.tables.frame_totals.map((row) => [row.frame_id as number, row.total as number]));
    expect(totals).toEqual(expectedTotal);
  });

  it("finds outermost nodes the same by path summaries (given any budget) and by a depth-first pass, as a walk up from each node does", () => {
    const random = randomInts(6);
    for (const [nodes, frames, fanout] of [[5000, 8, 1], [5000, 300, 1], [20_000, 64, 3], [20_000, 5000, 50], [3000, 2, 1000]]) {
      // Parent-first ids: a node's parent is one of the last `fanout` nodes (1: a chain).
      const parent = new Int32Array(nodes);
      const frame = new Int32Array(nodes);
      const depth = new Int32Array(nodes);
      for (let id = 0; id < nodes; id++) {
        parent[id] = id === 0 || random(50) === 0 ? -1 : id - 1 - random(Math.min(fanout, id));
        frame[id] = random(frames);
        depth[id] = parent[id] < 0 ? 0 : depth[parent[id]] + 1;
      }
      const expected = new Uint8Array(nodes);
      for (let id = 0; id < nodes; id++) {
        let outer = 1;
        for (let up = parent[id]; up >= 0; up = parent[up]) if (frame[up] === frame[id]) outer = 0;
        expected[id] = outer;
      }
      expect(outermostBySummary(parent, frame, nodes, Infinity), `${nodes}/${frames}/${fanout}`).toEqual(expected);
      expect(outermostByPath(parent, frame, depth, nodes, frames), `${nodes}/${frames}/${fanout}`).toEqual(expected);
    }
    // Past its budget the summary gives up, and the builder uses the depth-first pass.
    const chain = Int32Array.from({ length: 1000 }, (_, i) => i - 1);
    expect(outermostBySummary(chain, Int32Array.from({ length: 1000 }, (_, i) => i), 1000, 1000)).toBeNull();
  });

  it("totals a call chain 100 k deep whose frames recur once, as counted by hand", async () => {
    // Node i (depth i) has frame i mod 60 000 and one sample of value 1: frames below 40 000 occur
    // twice on the path, at depths f and f + 60 000.
    const depth = 100_000;
    const distinct = 60_000;
    const sink = new MemorySink();
    const builder = new EvidenceBuilder(sink);
    const frames = Array.from({ length: distinct }, (_, i) => builder.frame({ name: `f${i}`, kind: "native" }));
    const metric = builder.metric({ name: "samples", unit: "count", kind: "counted" });
    let stack: number | null = null;
    for (let i = 0; i < depth; i++) {
      stack = builder.stack(stack, frames[i % distinct]);
      builder.sample(stack, null, null, metric, 1);
    }
    await builder.finish();
    // A frame's total counts each sample on or below its outermost occurrence once: n − f.
    // Its self is the samples whose leaf it is: 2 where it recurs, else 1.
    const byFrame = new Map(sink.tables.frame_totals.map((row) => [row.frame_id as number, row]));
    for (const f of [0, 1, 39_999, 40_000, 59_999]) {
      expect(byFrame.get(frames[f]), `frame ${f}`).toMatchObject({ total: depth - f, self: f < depth - distinct ? 2 : 1 });
    }
    let wrong = 0;
    for (let f = 0; f < distinct; f++) if (byFrame.get(frames[f])!.total !== depth - f) wrong++;
    expect(wrong).toBe(0);
    // A node's inclusive total is everything at or below it: n − depth.
    const totals = sink.tables.stack_totals;
    expect(totals).toHaveLength(depth);
    expect(totals.every((row) => row.total === depth - (row.stack_id as number) && row.self === 1)).toBe(true);
  });

  it("refuses a sample or span value that no int64 cell holds, naming its column and the builder's format, and keeps one just inside", () => {
    const builder = new EvidenceBuilder(new MemorySink(), 1024, "some-format");
    const stack = builder.stack(null, builder.frame({ name: "f", kind: "native" }));
    const metric = builder.metric({ name: "samples", unit: "count", kind: "counted" });
    const track = builder.track({ kind: "thread" });
    const refused = (call: () => void) => {
      try {
        call();
      } catch (error) {
        return error as EvidenceParseError;
      }
      throw new Error("expected a parse error");
    };
    // 2^63 is the first double past the int64 range; 2^63 − 1024 the last inside it.
    expect(refused(() => builder.sample(stack, null, null, metric, 2 ** 63))).toMatchObject({ format: "some-format", at: { field: "samples.value" } });
    expect(refused(() => builder.sample(stack, null, -(2 ** 63) - 2048, metric, 1)).at.field).toBe("samples.time_ns");
    expect(refused(() => builder.sample(stack, null, null, metric, NaN)).at.field).toBe("samples.value");
    expect(refused(() => builder.span({ trackId: track, name: "s", startNs: Infinity, durNs: 0, depth: 0 })).at.field).toBe("spans.start_ns");
    expect(refused(() => builder.span({ trackId: track, name: "s", startNs: 0, durNs: 1e19, depth: 0 })).at.field).toBe("spans.dur_ns");
    builder.spanDraft(0, { name: "s" });
    expect(refused(() => builder.placeSpan(0, { spanId: 0, trackId: track, parentSpanId: null, startNs: 1e19, durNs: 0, depth: 0 })).at.field).toBe("spans.start_ns");
    expect(() => builder.sample(stack, null, 2 ** 63 - 1024, metric, -(2 ** 63))).not.toThrow();
  });

  it("reuses a batch's arrays once a sink that copies is done with them, and sends the same rows as without", async () => {
    // The same rows, through a sink that keeps the batches as given and one that copies them.
    const feed = async (builder: EvidenceBuilder, events: number) => {
      const metric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
      const track = builder.track({ kind: "thread", threadId: "1" });
      for (let i = 0; i < events; i++) {
        builder.sample(builder.stackOf([builder.frame({ name: "main", kind: "native" }), builder.frame({ name: `f${i % 40}`, kind: "native" })])!, track, i, metric, 1 + (i % 3));
        builder.spanDraft(i, { name: `s${i % 5}`, category: i % 2 ? "c" : null, args: `{"i":${i}}` });
        if (i % 16 === 15) await builder.checkpoint();
      }
      for (let i = 0; i < events; i++) builder.placeSpan(i, { spanId: i, trackId: track, parentSpanId: i === 0 ? null : 0, startNs: i * 10, durNs: 5, depth: i === 0 ? 0 : 1 });
      await builder.finish();
    };
    const batchesOf = async (copies: boolean, events = 300) => {
      const batches: RowBatch[] = [];
      const buffers = new Set<ArrayBufferLike>();
      // A batch's typed arrays: its numeric columns, and each text column's three.
      const arraysOf = (batch: RowBatch) =>
        Object.values(batch.columns).flatMap((column) => (column instanceof Float64Array ? [column] : Array.isArray(column) ? [] : [(column as CodedText).ids, (column as CodedText).ends, (column as CodedText).text]));
      const sink = {
        copies,
        write: (batch: RowBatch) => {
          for (const array of arraysOf(batch)) buffers.add(array.buffer);
          batches.push(structuredClone(batch));
          // A sink that copies may leave the arrays in any state once it returns.
          if (copies) for (const array of arraysOf(batch)) array.fill(7);
        },
      };
      await feed(new EvidenceBuilder(sink, 16), events);
      return { batches, buffers: buffers.size };
    };
    const kept = await batchesOf(false);
    const copied = await batchesOf(true);
    expect(copied.batches).toEqual(kept.batches);
    expect(kept.batches.length).toBeGreaterThan(40);
    // Kept, every batch has arrays of its own; copied, each table's two sets of arrays take turns,
    // however many batches there are.
    const twice = { kept: await batchesOf(false, 600), copied: await batchesOf(true, 600) };
    expect(twice.kept.buffers).toBeGreaterThan(kept.buffers + 6 * (twice.kept.batches.length - kept.batches.length));
    expect(twice.copied.buffers).toBe(copied.buffers);
  });
});

