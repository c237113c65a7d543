import { describe, expect, it } from "vitest";
import { AsciiBytes, codeTexts, TextCoder, TextDecoding, textAt, VECTOR_ROWS, type CodedText } from "./text-coding";

/** Pushes `values` through `coder` in batches of `batchRows` and decodes every batch, as a sink would. */
function roundTrip(coder: TextCoder, values: (string | null)[], batchRows: number): { decoded: (string | null)[]; batches: CodedText[] } {
  const decoding = new TextDecoding();
  const decoded: (string | null)[] = [];
  const batches: CodedText[] = [];
  for (let start = 0; start < values.length; start += batchRows) {
    for (const value of values.slice(start, start + batchRows)) coder.push(value);
    const batch = coder.take();
    decoding.learn(batch);
    for (let row = 0; row < batch.ids.length; row++) decoded.push(decoding.value(batch, row));
    batches.push(batch);
  }
  return { decoded, batches };
}

const coded = (batches: CodedText[]) => batches.reduce((sum, b) => sum + b.ids.filter((id) => id === id).length, 0);

/** What UTF-8 keeps of a string: lone surrogates become U+FFFD. */
const asUtf8 = (value: string | null) => (value === null ? null : new TextDecoder().decode(new TextEncoder().encode(value)));

describe("text coding", () => {
  it("gives back every value, whatever its batch: NULL, empty, ASCII, non-ASCII, a lone surrogate as U+FFFD, short and long", () => {
    const long = "x".repeat(40);
    const values = [null, "", "a", "é", "a\ud800b", "日本", long, `${long}é`, `${"y".repeat(31)}é`, "\u0000nul", "z".repeat(70_000), null];
    for (const batchRows of [1, 3, 100]) {
      for (const coding of [true, false]) {
        const { decoded } = roundTrip(new TextCoder(2, coding), values, batchRows);
        // A coded value comes back as it was given; a sink writing it as UTF-8 makes the same U+FFFD.
        expect(decoded.map(asUtf8), `batches of ${batchRows}, coding ${coding}`).toEqual(values.map(asUtf8));
        if (!coding) expect(decoded[4]).toBe("a\ufffdb");
      }
    }
  });

  it("codes a repeating column by ids that continue from batch to batch, each entry sent once", () => {
    const values = Array.from({ length: 10_000 }, (_, i) => `name_${i % 50}`);
    const { decoded, batches } = roundTrip(new TextCoder(), values, 777);
    expect(decoded).toEqual(values);
    expect(coded(batches)).toBe(values.length);
    expect(batches.flatMap((b) => b.added)).toEqual(Array.from({ length: 50 }, (_, i) => `name_${i}`));
    // Coded rows carry no text.
    expect(batches.every((b) => b.text.length === 0)).toBe(true);
  });

  it("stops coding a column whose values are mostly new, and holds them as text from then on", () => {
    const values = Array.from({ length: 6 * VECTOR_ROWS }, (_, i) => `unique_${i}`);
    const { decoded, batches } = roundTrip(new TextCoder(), values, 1000);
    expect(decoded).toEqual(values);
    // The first two vectors are coded while the dictionary learns; after them, text only.
    expect(coded(batches)).toBe(2 * VECTOR_ROWS);
    const last = batches[batches.length - 1];
    expect(Array.from(last.ids).every((id) => Number.isNaN(id))).toBe(true);
  });

  it("keeps a NUL-holding value as text, and a column with coding off as text throughout", () => {
    const withNul = codeTexts(["a\u0000b", "a\u0000b", "c"]);
    expect(Number.isNaN(withNul.ids[0]) && Number.isNaN(withNul.ids[1])).toBe(true);
    expect(withNul.ids[2]).toBe(0);
    expect(textAt(withNul, 1)).toBe("a\u0000b");
    const plain = codeTexts(["r", "r", null, ""], false);
    expect(Array.from(plain.ids).every((id) => Number.isNaN(id))).toBe(true);
    expect([0, 1, 2, 3].map((row) => textAt(plain, row))).toEqual(["r", "r", null, ""]);
    // The page form: a 4-byte little-endian length before each value's bytes.
    expect(Array.from(plain.text)).toEqual([1, 0, 0, 0, 0x72, 1, 0, 0, 0, 0x72, 0, 0, 0, 0]);
  });

  it("codes ASCII text pushed as its bytes exactly as the same text pushed as a string, while coding and after", () => {
    // Repeating values for two vectors (coded), then unique ones (coding stops), with NULLs and empty text between.
    const values = Array.from({ length: 8 * VECTOR_ROWS }, (_, i) => (i % 97 === 0 ? null : i % 89 === 0 ? "" : i < 2 * VECTOR_ROWS ? `{"k":${i % 5}}` : `{"i":${i}}`));
    const input = new TextEncoder().encode(`  ${values.join("|")}`);
    for (const batchRows of [1, 1000, values.length]) {
      const [asStrings, asBytes] = [new TextCoder(), new TextCoder()];
      const view = new AsciiBytes();
      view.bytes = input;
      const strings: CodedText[] = [];
      const bytes: CodedText[] = [];
      let at = 2;
      for (let start = 0; start < values.length; start += batchRows) {
        for (const value of values.slice(start, start + batchRows)) {
          asStrings.push(value);
          if (value === null) asBytes.push(null);
          else {
            view.start = at;
            view.end = at + value.length;
            asBytes.pushAscii(view);
          }
          at += (value?.length ?? 0) + 1;
        }
        strings.push(asStrings.take());
        bytes.push(asBytes.take());
      }
      expect(bytes).toEqual(strings);
      // Both ways were taken: values coded first, bytes copied once coding stopped.
      const ids = bytes.flatMap((b) => Array.from(b.ids));
      expect(ids.slice(0, VECTOR_ROWS).filter((id) => id === id).length).toBeGreaterThan(VECTOR_ROWS / 2);
      expect(ids.slice(-VECTOR_ROWS).every((id) => Number.isNaN(id))).toBe(true);
    }
  });
});
