import { describe, expect, it } from "vitest";
import { delimited, key, varint } from "../../test/helpers/protobuf-writer";
import { EvidenceParseError } from "../formats/errors";
import { ProtoFieldStream, ProtoReader, WIRE_FIXED32, WIRE_FIXED64, WIRE_LENGTH_DELIMITED, WIRE_VARINT } from "./protobuf";

const reader = (bytes: number[]) => new ProtoReader(new Uint8Array(bytes), "test");

function parseError(run: () => unknown): EvidenceParseError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(EvidenceParseError);
    return error as EvidenceParseError;
  }
  throw new Error("expected an EvidenceParseError");
}

describe("protobuf wire-format reader", () => {
  it("reads varints of every length, including the spec's 300 = ac 02", () => {
    expect(reader([0xac, 0x02]).varint()).toBe(300);
    for (const value of [0, 1, 127, 128, 16_383, 16_384, 2 ** 31 - 1, 2 ** 32, 2 ** 35 + 5, Number.MAX_SAFE_INTEGER]) {
      expect(reader(varint(value)).varint()).toBe(value);
    }
  });

  it("reads 64-bit values exactly as bigint, and refuses them where a safe number is required", () => {
    const max = (1n << 64n) - 1n;
    expect(reader(varint(max)).uint64()).toBe(max);
    expect(reader(varint(0xffffffff81000000n)).uint64()).toBe(0xffffffff81000000n);
    const error = parseError(() => reader(varint(2n ** 53n)).varint());
    expect(error.at.offset).toBe(0);
  });

  it("reads negative int64 values (ten-byte two's complement)", () => {
    expect(varint(-1)).toHaveLength(10);
    expect(reader(varint(-1)).int64()).toBe(-1);
    expect(reader(varint(-123456789)).int64()).toBe(-123456789);
    expect(reader(varint(-(2n ** 63n))).int64Exact()).toBe(-(2n ** 63n));
    expect(reader(varint(1_700_000_000_123_456_789n)).int64Exact()).toBe(1_700_000_000_123_456_789n);
  });

  it("walks fields: length-delimited strings and messages, skipping fixed32 and fixed64", () => {
    const text = [...new TextEncoder().encode("héllo")];
    const bytes = [
      ...key(1, WIRE_FIXED64), 1, 2, 3, 4, 5, 6, 7, 8,
      ...key(2, WIRE_FIXED32), 9, 9, 9, 9,
      ...delimited(3, text),
      ...delimited(4, [...key(1, WIRE_VARINT), ...varint(42)]),
      ...key(5, WIRE_VARINT), ...varint(7),
    ];
    const r = reader(bytes);
    const seen: unknown[] = [];
    while (!r.done) {
      const k = r.key();
      if (k.field === 3) seen.push(r.string(new TextDecoder()));
      else if (k.field === 4) {
        const inner = r.message();
        expect(inner.key()).toMatchObject({ field: 1, wireType: WIRE_VARINT });
        seen.push(inner.varint());
        expect(inner.done).toBe(true);
      } else if (k.field === 5) seen.push(r.varint());
      else {
        seen.push(`skip ${k.field}`);
        r.skip(k.wireType);
      }
    }
    expect(seen).toEqual(["skip 1", "skip 2", "héllo", 42, 7]);
  });

  it("reads repeated integers whether packed or one key per value", () => {
    const bytes = [...delimited(1, [...varint(1), ...varint(300), ...varint(2 ** 40)]), ...key(1, WIRE_VARINT), ...varint(5), ...key(1, WIRE_VARINT), ...varint(6)];
    const r = reader(bytes);
    const out: number[] = [];
    while (!r.done) r.repeated(r.key().wireType, out);
    expect(out).toEqual([1, 300, 2 ** 40, 5, 6]);
  });

  it("fails with the byte offset on a length that runs past its message", () => {
    const bytes = [...key(1, WIRE_VARINT), 1, ...key(2, WIRE_LENGTH_DELIMITED), 50, 1, 2, 3];
    const r = reader(bytes);
    r.key();
    r.varint();
    r.key();
    const error = parseError(() => r.skip(WIRE_LENGTH_DELIMITED));
    expect(error.at.offset).toBe(3);
  });

  it("fails on a varint cut by the end of the input, an over-long varint and unknown wire types", () => {
    expect(parseError(() => reader([0x80, 0x80]).varint()).at.offset).toBe(0);
    expect(parseError(() => reader(new Array(11).fill(0xff)).uint64()).at.offset).toBe(0);
    expect(parseError(() => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]).uint64()).reason).toMatch(/64 bits/);
    expect(parseError(() => reader([0x0f]).key()).reason).toBe("a field has an unsupported wire type (a group or none that exists)");
    expect(parseError(() => reader([0x03]).key()).reason).toMatch(/field number 0/);
    const cut = reader([...key(1, WIRE_FIXED64), 1, 2]);
    const fixed = cut.key();
    expect(parseError(() => cut.skip(fixed.wireType)).at.offset).toBe(1);
  });

  it("checks that a nested message stays inside its parent", () => {
    // The inner message claims 3 bytes, but the outer one only has 2 left.
    const outer = reader([...key(1, WIRE_LENGTH_DELIMITED), 4, ...key(2, WIRE_LENGTH_DELIMITED), 3, 0x08, 0x01]);
    outer.key();
    const inner = outer.message();
    inner.key();
    expect(parseError(() => inner.message()).at.offset).toBe(3);
  });

  describe("fields of a message that arrives in chunks", () => {
    const text = [...new TextEncoder().encode("a string longer than a chunk ".repeat(4))];
    const bytes = [
      ...key(1, WIRE_FIXED64), 1, 2, 3, 4, 5, 6, 7, 8,
      ...delimited(2, text),
      ...key(3, WIRE_VARINT), ...varint(-5),
      ...delimited(4, [...key(1, WIRE_VARINT), ...varint(300)]),
      ...key(5, WIRE_FIXED32), 9, 9, 9, 9,
      ...delimited(6, new Array(200).fill(7)),
      ...key(7, WIRE_VARINT), ...varint(1),
    ];
    /** What the stream hands out over `chunks` (field 6 skipped): each field's number, offset and value. */
    function streamed(chunks: Uint8Array[]): unknown[] {
      const seen: unknown[] = [];
      const stream = new ProtoFieldStream(
        "test",
        64,
        (k, r) => {
          if (k.field === 2) seen.push([k.field, k.offset, r.string(new TextDecoder())]);
          else if (k.field === 3) seen.push([k.field, k.offset, r.int64()]);
          else if (k.field === 4) {
            const inner = r.message();
            inner.key();
            seen.push([k.field, k.offset, inner.varint()]);
          } else if (k.field === 6) throw new Error("a skipped field was read");
          else {
            r.skip(k.wireType);
            seen.push([k.field, k.offset]);
          }
          expect(r.done).toBe(true);
        },
        (k) => k.field === 6,
      );
      for (const chunk of chunks) stream.write(chunk);
      stream.end();
      return seen;
    }

    it("hands out the same fields at the same offsets wherever the chunks are cut, skipping what it is told to", () => {
      const whole = streamed([new Uint8Array(bytes)]);
      expect(whole.map((f) => (f as number[])[0])).toEqual([1, 2, 3, 4, 5, 7]);
      for (let size = 1; size <= 40; size++) {
        const chunks: Uint8Array[] = [];
        for (let i = 0; i < bytes.length; i += size) chunks.push(new Uint8Array(bytes.slice(i, i + size)));
        expect(streamed(chunks)).toEqual(whole);
      }
      // Two cuts: inside the long string and inside the skipped field.
      const cuts = [20, 150, bytes.length];
      expect(streamed(cuts.map((end, i) => new Uint8Array(bytes.slice(i ? cuts[i - 1] : 0, end))))).toEqual(whole);
    });

    it("fails a message cut short as one buffer would, at the input's offset", () => {
      for (const cut of [1, 12, 40, 130, bytes.length - 1]) {
        const error = parseError(() => streamed([new Uint8Array(bytes.slice(0, cut >> 1)), new Uint8Array(bytes.slice(cut >> 1, cut))]));
        expect(error.reason).toMatch(/past the end/);
        expect(error.at.offset).toBeLessThanOrEqual(cut);
      }
      // A bad field in a later chunk names its offset in the input, not in the chunk.
      const bad = [...bytes, ...key(8, 3)];
      const error = parseError(() => streamed([new Uint8Array(bad.slice(0, 100)), new Uint8Array(bad.slice(100))]));
      expect(error.at.offset).toBe(bytes.length);
    });
  });
});
