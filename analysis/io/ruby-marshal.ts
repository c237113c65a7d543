import { EvidenceParseError } from "../formats/errors";

/**
 * A reader of Ruby's Marshal format (version 4.8, what `Marshal.dump` writes; described in Ruby's
 * doc/marshal.rdoc): the plain data a Hash of results holds — nil, true, false, integers (Fixnum
 * and Bignum), floats, strings (with their encoding), symbols, arrays, hashes and links to objects
 * already read. Anything else (objects, structs, classes, user-defined dumps) is refused. Large
 * arrays and hashes can be walked element by element (`arrayLength`, `hashLength`) instead of
 * being built.
 */

export class RubySymbol {
  constructor(readonly name: string) {}
}

export class RubyHash {
  constructor(readonly entries: [RubyValue, RubyValue][]) {}
  /** The value under the symbol or string key `name`. */
  get(name: string): RubyValue | undefined {
    for (const [key, value] of this.entries) if ((key instanceof RubySymbol && key.name === name) || key === name) return value;
    return undefined;
  }
}

export type RubyValue = null | boolean | number | string | RubySymbol | RubyValue[] | RubyHash;

const UTF8 = new TextDecoder("utf-8", { fatal: false });

export class MarshalReader {
  /** Where the next byte is. */
  offset = 0;
  private readonly symbols: string[] = [];
  /** Objects in the order they were read, for links (`@`): strings, floats, bignums, arrays, hashes. */
  private readonly objects: RubyValue[] = [];

  constructor(
    private readonly bytes: Uint8Array,
    private readonly format: string,
    private readonly maxDepth: number,
  ) {}

  /** Checks the 4.8 version header. */
  header(): void {
    if (this.bytes.length < 2) throw this.fail("the input is too short for a Marshal dump", 0);
    if (this.bytes[0] !== 4 || this.bytes[1] !== 8) throw this.fail("the input is not a Marshal 4.8 dump", 0);
    this.offset = 2;
  }

  /** The type byte of the next value, without reading it. */
  peek(): number {
    if (this.offset >= this.bytes.length) throw this.fail("the dump ends where a value was expected (truncated?)", this.offset);
    return this.bytes[this.offset];
  }

  /** Starts an array (`[`): returns its length; its elements follow, to be read with `value()`. */
  arrayLength(): number {
    this.expect(0x5b, "an array");
    this.objects.push(null);
    return this.length();
  }

  /** Starts a hash (`{`): returns its number of pairs; keys and values follow, in turn. */
  hashLength(): number {
    this.expect(0x7b, "a hash");
    this.objects.push(null);
    return this.length();
  }

  /** Reads one value whole. */
  value(depth = 0): RubyValue {
    if (depth > this.maxDepth) throw this.fail(`the dump nests deeper than ${this.maxDepth} levels`, this.offset);
    const at = this.offset;
    const type = this.byte();
    switch (type) {
      case 0x30: // '0'
        return null;
      case 0x54: // 'T'
        return true;
      case 0x46: // 'F'
        return false;
      case 0x69: // 'i'
        return this.long();
      case 0x6c: // 'l'
        return this.keep(this.bignum(at));
      case 0x66: // 'f'
        return this.keep(this.float(at));
      case 0x3a: // ':'
        return this.symbol();
      case 0x3b: {
        // ';'
        const index = this.long();
        if (index < 0 || index >= this.symbols.length) throw this.fail("a symbol link names no symbol read before", at);
        return new RubySymbol(this.symbols[index]);
      }
      case 0x40: {
        // '@'
        const index = this.long();
        if (index < 0 || index >= this.objects.length) throw this.fail("an object link names no object read before", at);
        return this.objects[index];
      }
      case 0x22: // '"'
        return this.keep(UTF8.decode(this.chunk(at)));
      case 0x49: {
        // 'I': a value with instance variables (a string's encoding); the variables are read and dropped.
        const inner = this.value(depth + 1);
        const count = this.length();
        for (let k = 0; k < count; k++) {
          this.value(depth + 1);
          this.value(depth + 1);
        }
        return inner;
      }
      case 0x5b: {
        // '['
        const slot = this.objects.push(null) - 1;
        const count = this.length();
        const items: RubyValue[] = [];
        for (let k = 0; k < count; k++) items.push(this.value(depth + 1));
        this.objects[slot] = items;
        return items;
      }
      case 0x7b:
      case 0x7d: {
        // '{', and '}' (a hash with a default value, read and dropped)
        const slot = this.objects.push(null) - 1;
        const count = this.length();
        const entries: [RubyValue, RubyValue][] = [];
        for (let k = 0; k < count; k++) entries.push([this.value(depth + 1), this.value(depth + 1)]);
        if (type === 0x7d) this.value(depth + 1);
        const hash = new RubyHash(entries);
        this.objects[slot] = hash;
        return hash;
      }
      default:
        throw this.fail(`the dump holds a Marshal value of a kind that plain results do not (type byte 0x${type.toString(16).padStart(2, "0")})`, at);
    }
  }

  private keep<T extends RubyValue>(value: T): T {
    this.objects.push(value);
    return value;
  }

  private symbol(): RubySymbol {
    const name = UTF8.decode(this.chunk(this.offset));
    this.symbols.push(name);
    return new RubySymbol(name);
  }

  private expect(type: number, what: string): void {
    const at = this.offset;
    if (this.byte() !== type) throw this.fail(`the dump holds something else where ${what} was expected`, at);
  }

  private byte(): number {
    if (this.offset >= this.bytes.length) throw this.fail("the dump ends inside a value (truncated?)", this.offset);
    return this.bytes[this.offset++];
  }

  /** A length: a packed integer that is not negative and fits in the rest of the input. */
  private length(): number {
    const at = this.offset;
    const length = this.long();
    if (length < 0 || length > this.bytes.length - this.offset) throw this.fail("a length is negative or longer than the rest of the dump", at);
    return length;
  }

  /** Bytes of a length-prefixed string or symbol. */
  private chunk(at: number): Uint8Array {
    const length = this.length();
    const start = this.offset;
    this.offset += length;
    if (this.offset > this.bytes.length) throw this.fail("a string runs past the end of the dump", at);
    return this.bytes.subarray(start, this.offset);
  }

  /** Marshal's packed integer (w_long): small values in one byte, others as 1–4 little-endian bytes. */
  private long(): number {
    const c = (this.byte() << 24) >> 24;
    if (c === 0) return 0;
    if (c >= 5) return c - 5;
    if (c <= -5) return c + 5;
    let value = 0;
    if (c > 0) {
      for (let k = 0; k < c; k++) value += this.byte() * 2 ** (8 * k);
      return value;
    }
    for (let k = 0; k < -c; k++) value += this.byte() * 2 ** (8 * k);
    return value - 2 ** (8 * -c);
  }

  private bignum(at: number): number {
    const sign = this.byte();
    if (sign !== 0x2b && sign !== 0x2d) throw this.fail("a Bignum's sign is neither + nor -", at);
    const shorts = this.length();
    let value = 0;
    for (let k = 0; k < shorts * 2; k++) value += this.byte() * 2 ** (8 * k);
    if (!Number.isSafeInteger(value)) throw this.fail("an integer is larger than 2^53", at);
    return sign === 0x2d ? -value : value;
  }

  private float(at: number): number {
    // The text of a float, up to a NUL (old dumps put mantissa bytes after one).
    const text = UTF8.decode(this.chunk(at)).split("\u0000")[0];
    if (text === "nan") return NaN;
    if (text === "inf") return Infinity;
    if (text === "-inf") return -Infinity;
    const value = Number(text);
    if (text === "" || Number.isNaN(value)) throw this.fail("a Float is not a number", at);
    return value;
  }

  private fail(reason: string, offset: number): EvidenceParseError {
    return new EvidenceParseError(this.format, reason, { offset });
  }
}

/** A Ruby value as JSON would hold it: symbols as their names, hashes as objects with text keys. */
export function rubyToJson(value: RubyValue): import("./json-stream").JsonValue {
  if (value instanceof RubySymbol) return value.name;
  if (value instanceof RubyHash) {
    const out: { [key: string]: import("./json-stream").JsonValue } = {};
    for (const [key, item] of value.entries) {
      const name = key instanceof RubySymbol ? key.name : typeof key === "string" || typeof key === "number" ? String(key) : null;
      if (name !== null && name !== "__proto__") out[name] = rubyToJson(item);
    }
    return out;
  }
  if (Array.isArray(value)) return value.map(rubyToJson);
  if (typeof value === "number" && !Number.isFinite(value)) return null;
  return value;
}
