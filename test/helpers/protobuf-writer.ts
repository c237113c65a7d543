// A tiny protobuf wire-format writer, written from the spec (not from the reader under test), so
// readers are tested against bytes we control. Fields are plain number arrays, joined with spread.

export type Bytes = number[];

/** Base-128 varint; negative numbers as ten-byte two's complement, as int64 is encoded. */
export function varint(value: number | bigint): Bytes {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
}

/** A field's key: field number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
export const key = (field: number, wireType: number): Bytes => varint(field * 8 + wireType);

/** A length-delimited field (bytes, string, message or packed values). */
export const delimited = (field: number, body: Bytes): Bytes => [...key(field, 2), ...varint(body.length), ...body];

/** A varint field, left out when zero as proto3 encoders do. */
export const int = (field: number, value: number | bigint): Bytes => (value === 0 ? [] : [...key(field, 0), ...varint(value)]);

/** An embedded message made of the given fields. */
export const message = (field: number, ...parts: Bytes[]): Bytes => delimited(field, parts.flat());

/** A repeated varint field, packed (proto3's default) or one key per value. */
export const packed = (field: number, values: (number | bigint)[]): Bytes => delimited(field, values.flatMap((v) => varint(v)));
export const unpacked = (field: number, values: (number | bigint)[]): Bytes => values.flatMap((v) => [...key(field, 0), ...varint(v)]);
