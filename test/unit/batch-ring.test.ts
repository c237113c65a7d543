import { describe, expect, it } from "vitest";
import type { RowBatch } from "../../analysis/evidence/builder";
import { codeTexts, type CodedText } from "../../analysis/evidence/text-coding";
import { BatchRing, batchFromRing, RingSpace } from "../../server/evidence/batch-ring";

describe("RingSpace (the ring's free space, taken and given back in order)", () => {
  it("takes regions one after another, and starts again at 0 once the oldest are given back", () => {
    const space = new RingSpace(100);
    expect(space.take(40)).toBe(0);
    expect(space.take(40)).toBe(40);
    // 20 left before the end, and nothing free before the oldest region.
    expect(space.take(30)).toBe(-1);
    space.release();
    // [0, 40) is free again: the region starts there rather than straddle the end.
    expect(space.take(30)).toBe(0);
    // Between the new region's end (30) and the oldest one (40): 10 bytes.
    expect(space.take(11)).toBe(-1);
    expect(space.take(10)).toBe(30);
    expect(space.taken).toBe(3);
    space.release();
    // The oldest is now the one at 0; [40, 100) is free after the newest one's end.
    expect(space.take(60)).toBe(40);
    expect(space.take(1)).toBe(-1);
  });

  it("is all free once every region is given back, whatever was taken", () => {
    const space = new RingSpace(64);
    for (let round = 0; round < 50; round++) {
      const sizes = [8, 24, 16, 32].map((size) => (size + round * 8) % 64);
      for (const size of sizes) if (space.take(size) < 0) break;
      while (space.taken > 0) space.release();
      expect(space.take(64)).toBe(0);
      space.release();
    }
  });

  it("never gives overlapping regions that are taken at once (randomized against a byte map)", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const size = 1000;
    const space = new RingSpace(size);
    const owner = new Int32Array(size).fill(-1);
    const live: { start: number; bytes: number; id: number }[] = [];
    let next = 0;
    let overlaps = 0;
    let beyondEnd = 0;
    for (let step = 0; step < 5000; step++) {
      if (live.length > 0 && random() < 0.45) {
        const oldest = live.shift()!;
        space.release();
        owner.fill(-1, oldest.start, oldest.start + oldest.bytes);
        continue;
      }
      const bytes = Math.floor(random() * 300);
      const start = space.take(bytes);
      if (start < 0) continue;
      if (start + bytes > size) beyondEnd++;
      for (let at = start; at < Math.min(size, start + bytes); at++) {
        if (owner[at] !== -1) overlaps++;
        owner[at] = next;
      }
      live.push({ start, bytes, id: next++ });
    }
    expect({ overlaps, beyondEnd }).toEqual({ overlaps: 0, beyondEnd: 0 });
    expect(next).toBeGreaterThan(1000);
  });

  it("refuses a region larger than the ring, and a release with nothing taken", () => {
    const space = new RingSpace(16);
    expect(space.take(17)).toBe(-1);
    expect(() => space.release()).toThrow(/no region of the ring is taken/);
  });
});

describe("BatchRing (batches copied into shared memory for the writer thread)", () => {
  const batch = (rows: number, offset = 0): RowBatch => ({
    table: "measurements",
    length: rows,
    columns: {
      name: codeTexts(Array.from({ length: rows }, (_, i) => (i % 2 === 0 ? "wall" : `unique-${offset + i}`))),
      value: Float64Array.from({ length: rows }, (_, i) => offset + i + 0.5),
      unit: codeTexts(Array.from({ length: rows }, () => null)),
      aggregation: codeTexts(Array.from({ length: rows }, () => "sample")),
      trial_id: codeTexts(Array.from({ length: rows }, () => null)),
      is_warmup: Array.from({ length: rows }, (_, i) => i % 3 === 0),
      dimensions: codeTexts(Array.from({ length: rows }, (_, i) => `{"i":${offset + i}}`)),
    },
  });

  it("gives the thread the batch as it was, read where it lies in the ring", () => {
    const ring = new BatchRing(1 << 20);
    const original = batch(100);
    const sent = ring.place(original)!;
    // The message carries where the arrays lie, not the arrays: it survives JSON, which typed arrays do not.
    expect(JSON.parse(JSON.stringify(sent))).toEqual(sent);
    const received = batchFromRing(ring.memory, structuredClone(sent));
    expect(received.length).toBe(100);
    expect(received.table).toBe("measurements");
    for (const [name, column] of Object.entries(original.columns)) {
      const got = received.columns[name];
      if (column instanceof Float64Array) expect(Array.from(got as Float64Array)).toEqual(Array.from(column));
      else if (Array.isArray(column)) expect(got).toEqual(column);
      else {
        const coded = column as CodedText;
        const back = got as CodedText;
        expect(back.text.buffer).toBe(ring.memory);
        expect([Array.from(back.ids), Array.from(back.ends), Array.from(back.text), back.added]).toEqual([Array.from(coded.ids), Array.from(coded.ends), Array.from(coded.text), coded.added]);
      }
    }
  });

  it("refuses a batch while the ring is full, takes it once the oldest is released, and never fits one larger than itself", () => {
    // A batch of 1000 rows takes 88,000 bytes: eleven arrays of 1000 numbers (the numeric column,
    // ids and ends of five text columns, all of whose values the dictionaries code). Room for two, not three.
    const ring = new BatchRing(2 * 1000 * 8 * 11 + 64 * 1024);
    const first = ring.place(batch(1000, 0))!;
    const second = ring.place(batch(1000, 1000))!;
    expect(ring.place(batch(1000, 2000))).toBeNull();
    ring.release();
    const third = ring.place(batch(1000, 2000))!;
    expect(ring.placed).toBe(2);
    // The second batch is intact beside the third, which took the first one's space.
    expect((batchFromRing(ring.memory, second).columns.value as Float64Array)[999]).toBe(1999.5);
    expect((batchFromRing(ring.memory, third).columns.value as Float64Array)[0]).toBe(2000.5);
    expect(first).not.toBeNull();
    expect(ring.fits(batch(1000))).toBe(true);
    expect(ring.fits(batch(100_000))).toBe(false);
  });
});
