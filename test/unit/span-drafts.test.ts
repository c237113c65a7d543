import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TextCoder, TextDecoding } from "../../analysis/evidence/text-coding";
import { DRAFT_TEXT_COLUMNS, SpanDrafts } from "../../server/evidence/span-drafts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A spill file's path in a directory of its own; `spillFile.last` is the last one made. */
function spillFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "span-drafts-"));
  dirs.push(dir);
  spillFile.last = path.join(dir, "drafts.text");
  return spillFile.last;
}
spillFile.last = null as string | null;

/** A draft's four texts: a repeating name, a category or NULL, a rare status, and args of every kind. */
function draftTexts(id: number): (string | null)[] {
  const args = id % 11 === 0 ? null : id % 7 === 0 ? "" : id % 5 === 0 ? `{"s":"é日${id}"}` : id % 97 === 0 ? `{"long":"${"x".repeat(3000 + id)}"}` : `{"i":${id}}`;
  return [`name_${id % 40}`, id % 3 === 0 ? null : "cat", id % 13 === 0 ? "error" : null, args];
}

/** Drafts `ids` in batches as the builder sends them, then places `order` in batches; returns each place's four texts, decoded. */
function draftAndPlace(drafts: SpanDrafts, ids: number[], order: number[], batchRows: number): (string | null)[][] {
  const coders = DRAFT_TEXT_COLUMNS.map(() => new TextCoder());
  const decodings = DRAFT_TEXT_COLUMNS.map(() => new TextDecoding());
  for (let start = 0; start < ids.length; start += batchRows) {
    const part = ids.slice(start, start + batchRows);
    const columns: Record<string, unknown> = { draft_id: Float64Array.from(part) };
    DRAFT_TEXT_COLUMNS.forEach((name, c) => {
      for (const id of part) coders[c].push(draftTexts(id)[c]);
      const coded = coders[c].take();
      decodings[c].learn(coded);
      columns[name] = coded;
    });
    drafts.add({ table: "span_drafts", columns: columns as never, length: part.length });
  }
  const placed: (string | null)[][] = [];
  for (let start = 0; start < order.length; start += batchRows) {
    const part = Float64Array.from(order.slice(start, start + batchRows));
    const texts = drafts.place(part, part.length);
    for (let row = 0; row < part.length; row++) placed.push(texts.map((column, c) => decodings[c].value(column, row)));
  }
  return placed;
}

/** A fixed shuffle of 0..n-1. */
function shuffled(n: number, seed: number): number[] {
  const ids = Array.from({ length: n }, (_, i) => i);
  let x = seed;
  for (let i = n - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const j = x % (i + 1);
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids;
}

describe("span drafts kept until their places come", () => {
  it("gives each place its draft's text, in the places' order, whatever order the drafts came in", () => {
    const ids = shuffled(5_000, 1);
    const order = shuffled(5_000, 2);
    const drafts = new SpanDrafts(spillFile());
    expect(draftAndPlace(drafts, ids, order, 777)).toEqual(order.map(draftTexts));
    expect([drafts.drafted, drafts.placed]).toEqual([5_000, 5_000]);
    drafts.close();
  });

  it("spills text past its memory budget and reads it back, also for places far from the drafts' order", () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => i);
    const file = spillFile();
    // 1 KiB chunks, 4 KiB in memory: most chunks are spilled (a batch's text larger than a chunk is
    // a chunk of its own). The args of the first two vectors are coded while their dictionary learns.
    const drafts = new SpanDrafts(file, 4096, 1024);
    expect(draftAndPlace(drafts, ids, shuffled(20_000, 3), 500)).toEqual(shuffled(20_000, 3).map(draftTexts));
    expect(statSync(file).size).toBeGreaterThan(150_000);
    drafts.close();
  });

  it("reads each spilled chunk back about once when places alternate between regions of the drafts (threads written in blocks)", () => {
    // Drafts in blocks, as a file holding its threads' events one block after another; places
    // alternate between the second and third blocks (sorted by start), then take the fourth.
    // (The first block's args are mostly coded while the column's dictionary learns: no text.)
    const ids = Array.from({ length: 24_000 }, (_, i) => i);
    const order = [...ids.slice(0, 6_000), ...Array.from({ length: 6_000 }, (_, i) => [6_000 + i, 12_000 + i]).flat(), ...ids.slice(18_000)];
    const drafts = new SpanDrafts(spillFile(), 128 * 1024, 64 * 1024);
    expect(draftAndPlace(drafts, ids, order, 1_000)).toEqual(order.map(draftTexts));
    const chunks = Math.ceil(statSync(spillFile.last!).size / (64 * 1024));
    expect(chunks).toBeGreaterThan(10);
    // Each chunk read back once or twice (a batch's text is a chunk's, so regions' chunks interleave), not once per switch.
    expect(drafts.readBacks).toBeLessThan(2 * chunks);
    drafts.close();
  });

  it("reads each spilled chunk back about once when places alternate among eight threads whose drafts are chunks apart (a trace's threads drifting apart)", () => {
    // Eight threads' drafts one block after another, each block a few chunks of text; places
    // take the threads in turn, so the chunks of all eight regions are wanted at once (with
    // four chunks kept, each turn read a chunk again: the 1 GB trace of issue 19 never finished).
    const ids = Array.from({ length: 24_000 }, (_, i) => i);
    const order = Array.from({ length: 3_000 }, (_, i) => Array.from({ length: 8 }, (_, thread) => thread * 3_000 + i)).flat();
    const drafts = new SpanDrafts(spillFile(), 64 * 1024, 64 * 1024);
    expect(draftAndPlace(drafts, ids, order, 1_000)).toEqual(order.map(draftTexts));
    const chunks = Math.ceil(statSync(spillFile.last!).size / (64 * 1024));
    expect(chunks).toBeGreaterThan(12);
    expect(drafts.readBacks).toBeLessThan(2 * chunks);
    drafts.close();
  });

  it("keeps nothing on disk while the text fits its budget", () => {
    const file = spillFile();
    const drafts = new SpanDrafts(file);
    draftAndPlace(drafts, [0, 1, 2], [2, 0, 1], 2);
    expect(existsSync(file)).toBe(false);
    drafts.close();
  });
});
