/**
 * A small reader of the protobuf wire format (varints, 64/32-bit fixed, length-delimited fields),
 * enough to walk messages whose schema the caller knows (pprof's profile.proto). Every read is
 * bounds-checked; a malformed input throws EvidenceParseError with the absolute byte offset.
 */
import { EvidenceParseError, InputBoundError } from "../formats/errors";

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_FIXED32 = 5;

const TWO_POW_32 = 4294967296;
/** Above this high word a 64-bit value no longer fits a double exactly (2^53). */
const SAFE_HIGH_WORD = 0x200000;

/** One field's key: its number and how its value is encoded. */
export interface FieldKey {
  field: number;
  wireType: number;
  /** Offset of the key's first byte in the whole input (for error messages). */
  offset: number;
}

/**
 * Reads the fields of one message in `bytes[start, end)`. Nested messages are read by
 * `message()`, which returns a reader over just their bytes, one level deeper.
 */
export class ProtoReader {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly format: string,
    start = 0,
    readonly end = bytes.length,
    readonly depth = 0,
    readonly maxDepth = 1024,
    /** Offset in the whole input of `bytes[0]`, added to error offsets (a window of a chunked input). */
    readonly base = 0,
  ) {
    this.pos = start;
    if (end > bytes.length || start > end) this.fail("message extends past the end of the input", start);
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** Fails at `offset` in `bytes` (the error names its offset in the whole input). */
  fail(reason: string, offset = this.pos): never {
    throw new EvidenceParseError(this.format, reason, { offset: offset + this.base });
  }

  /** The next field's key; call only while !done. */
  key(): FieldKey {
    const offset = this.pos;
    const key = this.varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (field === 0) this.fail("field number 0 is not allowed", offset);
    if (wireType !== WIRE_VARINT && wireType !== WIRE_FIXED64 && wireType !== WIRE_LENGTH_DELIMITED && wireType !== WIRE_FIXED32) {
      // 3 and 4 are the deprecated groups, 6 and 7 do not exist: none appear in the formats we read.
      this.fail("a field has an unsupported wire type (a group or none that exists)", offset);
    }
    return { field, wireType, offset: offset + this.base };
  }

  /** The low and high 32-bit words of a varint (up to 10 bytes). */
  private varintWords(): [number, number] {
    const start = this.pos;
    let low = 0;
    let high = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail("varint runs past the end of its message", start);
      const byte = this.bytes[this.pos++];
      const bits = byte & 0x7f;
      if (i < 4) low |= bits << (7 * i);
      else if (i === 4) {
        low |= (bits & 0x0f) << 28;
        high = bits >> 4;
      } else high |= bits << (7 * i - 32);
      if (byte < 0x80) {
        if (i === 9 && byte > 1) this.fail("varint is longer than 64 bits", start);
        return [low >>> 0, high >>> 0];
      }
    }
    return this.fail("varint is longer than 10 bytes", start);
  }

  /** An unsigned varint as a number; fails if it is above 2^53 (ids, lengths, indexes). */
  varint(): number {
    const start = this.pos;
    const [low, high] = this.varintWords();
    if (high >= SAFE_HIGH_WORD) this.fail("varint is too large to be an id, index or length", start);
    return high * TWO_POW_32 + low;
  }

  /** An unsigned 64-bit varint, exactly (addresses). */
  uint64(): bigint {
    const [low, high] = this.varintWords();
    return (BigInt(high) << 32n) | BigInt(low);
  }

  /** A two's-complement int64 varint, exactly. */
  int64Exact(): bigint {
    return BigInt.asIntN(64, this.uint64());
  }

  /** A two's-complement int64 varint as a number: exact within ±2^53, the nearest double beyond. */
  int64(): number {
    const [low, high] = this.varintWords();
    if (high < SAFE_HIGH_WORD) return high * TWO_POW_32 + low;
    return Number(BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)));
  }

  /** The length prefix of a length-delimited field, checked against the enclosing message. */
  private length(): number {
    const start = this.pos;
    const length = this.varint();
    if (length > this.end - this.pos) this.fail("a length-delimited field runs past the end of its message", start);
    return length;
  }

  /** A length-delimited field's bytes (a view, not a copy). */
  bytesField(): Uint8Array {
    const length = this.length();
    const view = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }

  string(decoder: TextDecoder): string {
    return decoder.decode(this.bytesField());
  }

  /** A reader over an embedded message. */
  message(): ProtoReader {
    const length = this.length();
    if (this.depth + 1 > this.maxDepth) throw new InputBoundError("depth", this.maxDepth, `Protobuf messages nest deeper than ${this.maxDepth} levels.`);
    const child = new ProtoReader(this.bytes, this.format, this.pos, this.pos + length, this.depth + 1, this.maxDepth, this.base);
    this.pos += length;
    return child;
  }

  /**
   * Appends a repeated integer field to `out`, whether it was written packed (one
   * length-delimited run) or as one varint per key. `read` picks the integer flavour.
   */
  repeated(wireType: number, out: number[], read: (reader: ProtoReader) => number = (r) => r.varint()): void {
    if (wireType === WIRE_VARINT) {
      out.push(read(this));
      return;
    }
    if (wireType !== WIRE_LENGTH_DELIMITED) this.fail("a repeated integer field is neither varints nor packed");
    const length = this.length();
    const packed = new ProtoReader(this.bytes, this.format, this.pos, this.pos + length, this.depth, this.maxDepth, this.base);
    while (!packed.done) out.push(read(packed));
    this.pos += length;
  }

  /** Skips a field this reader does not interpret. */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varintWords();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      case WIRE_LENGTH_DELIMITED:
        this.advance(this.length());
        return;
      default:
        this.fail("a field has an unsupported wire type");
    }
  }

  private advance(count: number): void {
    if (count > this.end - this.pos) this.fail("a field runs past the end of its message");
    this.pos += count;
  }

  /** Fails unless the field has the wire type the schema says (guards against reading garbage as data). */
  expect(key: FieldKey, wireType: number): void {
    if (key.wireType !== wireType) this.fail("a field has the wrong wire type for its number", key.offset - this.base);
  }
}

/**
 * The top-level fields of one message that arrives in chunks, without holding the message: each
 * field is handed to `onField` whole (a reader over just its value, positioned after its key), or,
 * when `skip` says so, passed over without being kept whatever its length. Only a field cut by a
 * chunk's end is copied (into a window reused from chunk to chunk). Offsets in errors are the
 * input's. Handlers must not keep views of the reader's bytes past their call.
 */
export class ProtoFieldStream {
  /** Bytes of a field cut by the previous chunk's end, then the current chunk after them. */
  private window = new Uint8Array(0);
  private tailLength = 0;
  /** Bytes of a skipped field still to pass over. */
  private skipping = 0;
  /** Offset in the input of the skipped field's key. */
  private skipFrom = 0;
  /** Offset in the input of the first byte not yet read (nor kept as the cut field's). */
  private consumed = 0;

  constructor(
    private readonly format: string,
    private readonly maxDepth: number,
    private readonly onField: (key: FieldKey, reader: ProtoReader) => void,
    private readonly skip: (key: FieldKey) => boolean = () => false,
  ) {}

  write(chunk: Uint8Array): void {
    let bytes = chunk;
    let at = 0;
    if (this.skipping > 0) {
      const passed = Math.min(this.skipping, bytes.length);
      this.skipping -= passed;
      this.consumed += passed;
      at = passed;
      if (at === bytes.length) return;
    }
    if (this.tailLength > 0) {
      // The cut field's bytes, then this chunk's: one window, reused while it is large enough.
      const needed = this.tailLength + bytes.length - at;
      if (this.window.length < needed) {
        const grown = new Uint8Array(Math.max(needed, this.window.length * 2));
        grown.set(this.window.subarray(0, this.tailLength));
        this.window = grown;
      }
      this.window.set(bytes.subarray(at), this.tailLength);
      bytes = this.window.subarray(0, needed);
      at = 0;
      this.tailLength = 0;
    }
    at = this.fields(bytes, at);
    if (at < bytes.length) {
      // A field cut by the chunk's end waits for the next chunk.
      const rest = bytes.length - at;
      if (bytes.buffer === this.window.buffer) {
        if (at > 0) this.window.copyWithin(0, at, bytes.length);
      } else {
        if (this.window.length < rest) this.window = new Uint8Array(Math.max(rest, 4096));
        this.window.set(bytes.subarray(at));
      }
      this.tailLength = rest;
    }
  }

  /** Declares the end of the message: a field cut short fails as it would in one buffer. */
  end(): void {
    if (this.skipping > 0) throw new EvidenceParseError(this.format, "a length-delimited field runs past the end of its message", { offset: this.skipFrom });
    if (this.tailLength === 0) return;
    const reader = new ProtoReader(this.window, this.format, 0, this.tailLength, 0, this.maxDepth, this.consumed);
    const key = reader.key();
    reader.skip(key.wireType);
    // skip() fails on every field the tail can hold; a complete one would have been read.
    reader.fail("a field runs past the end of its message", 0);
  }

  /** Reads the whole fields of bytes[at…]; returns where the first cut one starts. */
  private fields(bytes: Uint8Array, at: number): number {
    // Offset in the input of bytes[0].
    const base = this.consumed - at;
    while (at < bytes.length) {
      const end = fieldEnd(bytes, at);
      if (end === CUT) break;
      const reader = new ProtoReader(bytes, this.format, at, end < 0 || end > bytes.length ? bytes.length : end, 0, this.maxDepth, base);
      const key = reader.key();
      if (end === MALFORMED) {
        reader.skip(key.wireType);
        reader.fail("a field cannot be read", at);
      }
      if (this.skip(key)) {
        if (end > bytes.length) {
          // Passed over as the next chunks come, never kept.
          this.skipping = end - bytes.length;
          this.skipFrom = base + at;
          this.consumed = base + bytes.length;
          return bytes.length;
        }
      } else {
        // A field read whole waits for its last bytes.
        if (end > bytes.length) break;
        this.onField(key, reader);
      }
      at = end;
      this.consumed = base + at;
    }
    return at;
  }
}

/** fieldEnd's answers for a field whose extent is not known from the bytes at hand. */
const CUT = -1;
const MALFORMED = -2;

/**
 * Where the field at bytes[at] ends (possibly past the bytes at hand); CUT when its key or length
 * is cut by their end; MALFORMED when it cannot be measured (the reader then says why).
 */
function fieldEnd(bytes: Uint8Array, at: number): number {
  let pos = at;
  let key = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= bytes.length) return CUT;
    if (shift > 63) return MALFORMED;
    const byte = bytes[pos++];
    key += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  switch (key % 8) {
    case WIRE_VARINT:
      for (let i = 0; i < 10; i++) {
        if (pos >= bytes.length) return CUT;
        if (bytes[pos++] < 0x80) return pos;
      }
      return MALFORMED;
    case WIRE_FIXED64:
      return pos + 8;
    case WIRE_FIXED32:
      return pos + 4;
    case WIRE_LENGTH_DELIMITED: {
      let length = 0;
      for (let shift = 0; ; shift += 7) {
        if (pos >= bytes.length) return CUT;
        if (shift > 49) return MALFORMED;
        const byte = bytes[pos++];
        length += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) break;
      }
      return pos + length;
    }
    default:
      return MALFORMED;
  }
}
