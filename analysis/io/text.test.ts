import { describe, expect, it } from "vitest";
import { InputBoundError } from "../formats/errors";
import { LineBatch, lineBatches, ownCopy, readLines, utf8Chunks, type TextLine } from "./text";

const encode = (text: string) => new TextEncoder().encode(text);

/** `bytes` handed over in pieces cut at `cuts`, like a file read in chunks. */
async function* pieces(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) yield bytes.subarray(from, cut);
    from = Math.max(from, cut);
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** What readLines should say, from the text alone: LF-separated, one trailing CR dropped, UTF-8 byte offsets. */
function expectedLines(text: string): TextLine[] {
  const parts = text.split("\n");
  if (parts.at(-1) === "") parts.pop();
  let offset = 0;
  return parts.map((part, i) => {
    const line = { text: part.replace(/\r$/, ""), line: i + 1, offset };
    offset += encode(part).length + 1;
    return line;
  });
}

function utf16(text: string, order: "le" | "be"): Uint8Array {
  const bytes = Buffer.from(text, "utf16le");
  if (order === "be") bytes.swap16();
  return new Uint8Array(Buffer.concat([Buffer.from(order === "le" ? [0xff, 0xfe] : [0xfe, 0xff]), bytes]));
}

const TEXT = "first\r\nsécond ✓\n\n\r\nlast without newline";

describe("line reading", () => {
  it("gives the same lines, numbers and byte offsets whatever the chunk boundaries", async () => {
    const bytes = encode(TEXT);
    const expected = expectedLines(TEXT);
    for (let a = 0; a <= bytes.length; a++) {
      for (let b = a; b <= bytes.length; b += 3) {
        expect(await collect(readLines(pieces(bytes, [a, b]), 1000)), `cuts ${a} ${b}`).toEqual(expected);
      }
    }
    expect(await collect(readLines(pieces(encode("a\n\n"), []), 1000))).toEqual([
      { text: "a", line: 1, offset: 0 },
      { text: "", line: 2, offset: 2 },
    ]);
    expect(await collect(readLines(pieces(new Uint8Array(0), []), 1000))).toEqual([]);
  });

  it("walks a batch's lines as bytes with the same bounds, numbers and offsets as its decoded lines", async () => {
    const bytes = encode(TEXT);
    for (const cut of [0, 5, 9, 20]) {
      const walked: TextLine[] = [];
      for await (const batch of lineBatches(pieces(bytes, [cut]), 1000)) {
        while (batch.nextLine()) walked.push({ text: new TextDecoder().decode(batch.bytes.subarray(batch.start, batch.end)), line: batch.line, offset: batch.lineOffset });
      }
      expect(walked, `cut ${cut}`).toEqual(expectedLines(TEXT));
    }
  });

  it("numbers lines across batches whose lines were never walked", async () => {
    const bytes = encode("a\nb\nc\nd\n");
    const batches = await collect(lineBatches(pieces(bytes, [2, 6]), 1000));
    expect(batches.map((b) => [b.firstLine, b.lineCount(), b.endsWithNewline])).toEqual([
      [1, 1, true],
      [2, 2, true],
      [4, 1, true],
    ]);
  });

  it("drops a UTF-8 BOM and reads UTF-16 LE and BE (with BOM) as the same lines", async () => {
    const texts = (lines: TextLine[]) => lines.map((l) => [l.text, l.line]);
    const expected = texts(expectedLines(TEXT));
    const inputs = {
      "utf-8 bom": new Uint8Array([0xef, 0xbb, 0xbf, ...encode(TEXT)]),
      "utf-16le": utf16(TEXT, "le"),
      "utf-16be": utf16(TEXT, "be"),
    };
    for (const [name, bytes] of Object.entries(inputs)) {
      // The first chunk holds the BOM (it decides the encoding); odd cuts split UTF-16 code units.
      expect(texts(await collect(readLines(pieces(bytes, [3, 7, 13]), 1000))), name).toEqual(expected);
    }
    const withBom = await collect(readLines(pieces(inputs["utf-8 bom"], []), 1000));
    expect(withBom[1].offset).toBe(3 + "first\r\n".length);
  });

  it("drops only the input's first BOM: a U+FEFF starting a later line is content", async () => {
    const bytes = encode("\uFEFFa\n\uFEFFb\n");
    for (const cuts of [[], [4], [5]]) {
      expect((await collect(readLines(pieces(bytes, cuts), 1000))).map((l) => l.text), `cuts ${cuts}`).toEqual(["a", "\uFEFFb"]);
    }
  });

  it("hands byte scanners UTF-8 chunks at their input offsets, BOM dropped", async () => {
    const chunks = await collect(utf8Chunks(pieces(new Uint8Array([0xef, 0xbb, 0xbf, ...encode("abcdef")]), [5])));
    expect(chunks.map((c) => [new TextDecoder().decode(c.bytes), c.offset])).toEqual([
      ["ab", 3],
      ["cdef", 5],
    ]);
    const fromUtf16 = await collect(utf8Chunks(pieces(utf16("é✓", "le"), [3])));
    expect(new TextDecoder().decode(Buffer.concat(fromUtf16.map((c) => c.bytes)))).toBe("é✓");
  });

  it("refuses a line longer than the bound with InputBoundError line_length, naming the line", async () => {
    const bytes = encode(`short\n${"x".repeat(100)}\n`);
    const reading = collect(readLines(pieces(bytes, [10, 40, 80]), 50));
    await expect(reading).rejects.toBeInstanceOf(InputBoundError);
    await expect(reading).rejects.toMatchObject({ bound: "line_length", limit: 50, message: expect.stringMatching(/^Line 2 /) });
  });
});

describe("ownCopy", () => {
  it("gives the same text, ASCII or not, for the cells of a batch line", () => {
    const batch = new LineBatch(new TextEncoder().encode("Weight\tSelf Weight\n28.15 s  1.0%\t831.00 µs\t \tmain\n"), 0, 1);
    const [, row] = batch.texts();
    const cells = row.split("\t");
    expect(cells.map(ownCopy)).toEqual(["28.15 s  1.0%", "831.00 µs", " ", "main"]);
    expect(ownCopy("")).toBe("");
  });
});
