import { EvidenceParseError, InputBoundError } from "../formats/errors";

/**
 * An incremental JSON parser over byte chunks, for inputs far larger than one string may be.
 * The caller chooses per value (by its path) whether to build it whole ("materialize"), walk into
 * it and hear about its children one by one ("stream"), or only check and drop it ("skip").
 * No string larger than one token is ever built; skipped strings are not even buffered.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** Keys and array indices from the top-level value down; the array is reused, copy it to keep it. */
export type JsonPath = readonly (string | number)[];
export type JsonSelection = "materialize" | "stream" | "skip";

export interface JsonStreamOptions {
  /** Names the format in EvidenceParseError (default "json"). */
  format?: string;
  /** Deepest nesting of objects and arrays allowed (InputBoundError "depth" beyond). */
  maxDepth?: number;
  /** Longest string or number token kept, in bytes (InputBoundError "field_length" beyond). */
  maxTokenBytes?: number;
  /** Accepts a top-level array that is never closed and may end in a comma (Chrome's trace files). */
  allowUnterminatedArray?: boolean;
  /**
   * What to do with the value at `path`; asked only for values whose parent is streamed (and for the
   * top-level value, at path []). Without it every value is materialized. For a scalar, "stream"
   * and "materialize" both mean "deliver it".
   */
  select?(path: JsonPath): JsonSelection;
  /** A materialized value, or a scalar whose parent is streamed. `offset`: byte where it starts. */
  onValue?(path: JsonPath, value: JsonValue, offset: number): void;
  /**
   * Offered each object or array that `select` materializes in a streamed array, in order, where
   * onValue would hear it and before it is built: it starts at `bytes[start]` (`offset`: its byte in
   * the input). The caller may take it from its bytes when it ends before `limit` (the chunk's end
   * or the token bound) and nests at most `maxNesting` levels (itself one): it returns the index
   * after it, vouching that the bytes between are one valid JSON value (they are not checked then),
   * and onValue does not hear it. -1: it is built and delivered as usual; declining leaves no trace.
   */
  rawElement?(path: JsonPath, bytes: Uint8Array, start: number, limit: number, maxNesting: number, offset: number): number;
}

const MATERIALIZE = 0;
const STREAM = 1;
const SKIP = 2;

const OBJECT = 0;
const ARRAY = 1;

const EXPECT_VALUE = 0;
const EXPECT_VALUE_OR_CLOSE = 1;
const EXPECT_KEY = 2;
const EXPECT_KEY_OR_CLOSE = 3;
const EXPECT_COLON = 4;
const EXPECT_COMMA_OR_CLOSE = 5;
const EXPECT_END = 6;

const NO_TOKEN = 0;
const STRING_TOKEN = 1;
const NUMBER_TOKEN = 2;
const LITERAL_TOKEN = 3;

/** Bits of the string-scan flags: 0x80 = some byte is non-ASCII, ESCAPED = contains a backslash. */
const ESCAPED = 0x100;

const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const BOM = [0xef, 0xbb, 0xbf];
/** Elements of a streamed array built by one JSON.parse at most (see `elements`). */
const MAX_BATCH_ELEMENTS = 1024;
const INTERN_SLOTS = 4096;
const INTERN_MAX_LENGTH = 32;

/**
 * The JSON number of `digits` decimal digits `mantissa` × 10^`scale`, when one operation gets it
 * exactly; NaN otherwise (then Number() of its text does). Up to 15 digits and a power of ten up to
 * 1e22 are exact doubles, so one multiplication or division rounds correctly (Clinger's fast path).
 */
export function exactDecimal(mantissa: number, digits: number, scale: number, negative: boolean): number {
  if (digits > 15 || scale > 22 || scale < -22) return NaN;
  const value = scale === 0 ? mantissa : scale > 0 ? mantissa * POW10[scale] : mantissa / POW10[-scale];
  return negative ? -value : value;
}

function isNumberByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2e || b === 0x2b || b === 0x65 || b === 0x45;
}

function isLetter(b: number): boolean {
  return b >= 0x61 && b <= 0x7a;
}

/** JSON's whitespace: space, line feed, carriage return, tab. */
export function isJsonSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The value of a hexadecimal digit's byte, or -1. */
export function hexDigit(b: number): number {
  return b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x61 && b <= 0x66 ? b - 0x57 : b >= 0x41 && b <= 0x46 ? b - 0x37 : -1;
}

function skipWhitespace(buf: Uint8Array, i: number, n: number): number {
  while (i < n && isJsonSpace(buf[i])) i++;
  return i;
}

function setProperty(target: { [key: string]: JsonValue }, key: string, value: JsonValue): void {
  // A plain assignment of "__proto__" would replace the prototype; JSON.parse makes it an own key.
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

export class JsonStreamParser {
  private readonly format: string;
  private readonly maxDepth: number;
  private readonly maxTokenBytes: number;
  private readonly allowUnterminatedArray: boolean;
  private readonly select: ((path: JsonPath) => JsonSelection) | undefined;
  private readonly onValue: ((path: JsonPath, value: JsonValue, offset: number) => void) | undefined;
  private readonly rawElement: JsonStreamOptions["rawElement"];

  private state = EXPECT_VALUE;
  private depth = 0;
  private readonly kinds: number[] = [];
  private readonly modes: number[] = [];
  private readonly indices: number[] = [];
  private readonly keys: string[] = [];
  private readonly values: (JsonValue[] | { [key: string]: JsonValue } | null)[] = [];
  private readonly starts: number[] = [];
  private readonly path: (string | number)[] = [];

  /** Absolute offset of the current chunk's first byte. */
  private base = 0;
  private bomIndex = 0;

  // A token cut by a chunk boundary: its bytes so far (unless skipped) and scan state.
  private token = NO_TOKEN;
  private tokenStart = 0;
  private tokenMode = MATERIALIZE;
  private tokenFlags = 0;
  private tokenEscaped = false;
  private tokenLength = 0;
  private carry = new Uint8Array(256);

  // Results of scanString, kept in fields to avoid allocating a result object per string.
  private scanFlags = 0;
  private scanHash = 0;
  /** The last number read by readNumber. */
  private number = 0;
  private scanEscaped = false;

  /** Where each element of the current batch starts and ends (see `elements`). */
  private readonly batchStarts = new Int32Array(MAX_BATCH_ELEMENTS);
  private readonly batchEnds = new Int32Array(MAX_BATCH_ELEMENTS);
  /** Absolute offset before which no batch is tried again (set where one did not parse). */
  private batchBlockedUntil = 0;
  /** Elements the rawElement hook declined since it last took one. */
  private declinedInARow = 0;

  // ignoreBOM: a string that starts with U+FEFF keeps it, as in JSON.parse (skipBom handles the input's own).
  private readonly utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
  private readonly interned: (string | null)[] = new Array<string | null>(INTERN_SLOTS).fill(null);

  constructor(options: JsonStreamOptions = {}) {
    this.format = options.format ?? "json";
    this.maxDepth = options.maxDepth ?? 1024;
    this.maxTokenBytes = options.maxTokenBytes ?? 64 * 1024 * 1024;
    this.allowUnterminatedArray = options.allowUnterminatedArray ?? false;
    this.select = options.select;
    this.onValue = options.onValue;
    this.rawElement = options.rawElement;
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.base;
  }

  write(bytes: Uint8Array): void {
    // A plain view of a subclass's bytes (Node's Buffer): its subarray, taken per string and per
    // parse, is several times cheaper than Buffer's.
    const chunk = bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = chunk.length;
    let i = 0;
    if (this.bomIndex < 3 && this.base < 3) i = this.skipBom(chunk);
    if (this.token !== NO_TOKEN && i < n) i = this.resumeToken(chunk, i, n);
    if (i < n) this.run(chunk, i, n);
    this.base += n;
  }

  /** Declares the end of input: completes a trailing number, or reports where the input stops short. */
  end(): void {
    const at = this.base;
    if (this.bomIndex > 0 && this.bomIndex < 3) throw this.fail("the input starts with an incomplete byte-order mark", 0);
    if (this.token === STRING_TOKEN) throw this.fail("the input ends inside a string (truncated?)", at);
    if (this.token !== NO_TOKEN) this.finishToken(this.carry, 0, this.tokenLength, true);
    if (this.state === EXPECT_END) return;
    if (this.depth === 0) throw this.fail("the input is empty (no JSON value)", at);
    const unterminated =
      this.allowUnterminatedArray &&
      this.depth === 1 &&
      this.kinds[0] === ARRAY &&
      (this.state === EXPECT_COMMA_OR_CLOSE || this.state === EXPECT_VALUE || this.state === EXPECT_VALUE_OR_CLOSE);
    if (unterminated) {
      this.close();
      return;
    }
    if (this.state === EXPECT_COLON) throw this.fail("the input ends after a property name (truncated?)", at);
    throw this.fail(`the input ends inside ${this.kinds[this.depth - 1] === OBJECT ? "an object" : "an array"} (truncated?)`, at);
  }

  private fail(reason: string, offset: number): EvidenceParseError {
    return new EvidenceParseError(this.format, reason, { offset });
  }

  private skipBom(chunk: Uint8Array): number {
    let i = 0;
    while (i < chunk.length && this.bomIndex < 3) {
      if (chunk[i] !== BOM[this.bomIndex]) {
        if (this.bomIndex > 0) throw this.fail("the input starts with an incomplete byte-order mark", this.base + i);
        this.bomIndex = 3;
        return i;
      }
      this.bomIndex++;
      i++;
    }
    return i;
  }

  private run(buf: Uint8Array, i: number, n: number): void {
    while (i < n) {
      const b = buf[i];
      if (isJsonSpace(b)) {
        i++;
        continue;
      }
      switch (this.state) {
        case EXPECT_COMMA_OR_CLOSE: {
          const kind = this.kinds[this.depth - 1];
          if (b === 0x2c) {
            this.state = kind === OBJECT ? EXPECT_KEY : EXPECT_VALUE;
            i++;
          } else if ((b === 0x7d && kind === OBJECT) || (b === 0x5d && kind === ARRAY)) {
            this.close();
            i++;
          } else {
            throw this.fail(`unexpected character: expected ',' or '${kind === OBJECT ? "}" : "]"}'`, this.base + i);
          }
          break;
        }
        case EXPECT_KEY_OR_CLOSE:
        case EXPECT_KEY:
          if (b === 0x22) i = this.key(buf, i, n);
          else if (b === 0x7d && this.state === EXPECT_KEY_OR_CLOSE) {
            this.close();
            i++;
          } else throw this.fail("unexpected character: expected a property name in double quotes", this.base + i);
          break;
        case EXPECT_COLON:
          if (b !== 0x3a) throw this.fail("unexpected character: expected ':'", this.base + i);
          this.state = EXPECT_VALUE;
          i++;
          break;
        case EXPECT_VALUE_OR_CLOSE:
        case EXPECT_VALUE:
          if (b === 0x5d && this.state === EXPECT_VALUE_OR_CLOSE) {
            this.close();
            i++;
          } else if ((b === 0x7b || b === 0x5b) && this.inStreamedArray() && this.base + i >= this.batchBlockedUntil) {
            i = this.elements(buf, i, n);
          } else i = this.value(buf, i, n, b);
          break;
        default:
          throw this.fail("unexpected character after the end of the JSON value", this.base + i);
      }
    }
  }

  /** Starts the value at buf[i]; returns the index after it (or n when it continues in the next chunk). */
  private value(buf: Uint8Array, i: number, n: number, b: number): number {
    return this.startValue(buf, i, n, b, this.enterValue());
  }

  /** Starts the value at buf[i] whose mode is chosen. */
  private startValue(buf: Uint8Array, i: number, n: number, b: number, mode: number): number {
    const offset = this.base + i;
    if (b === 0x7b || b === 0x5b) {
      this.open(b === 0x7b ? OBJECT : ARRAY, mode, offset);
      return i + 1;
    }
    if (b === 0x22) {
      const close = this.scanString(buf, i + 1, n, false);
      if (close < 0) return this.suspendString(buf, i + 1, n, mode, offset);
      this.scalar(mode, mode === SKIP ? null : this.decodeString(buf, i + 1, close, this.scanFlags, this.scanHash, offset + 1), offset);
      return close + 1;
    }
    if (b === 0x2d || (b >= 0x30 && b <= 0x39)) {
      const end = this.readNumber(buf, i, n, false, offset);
      if (end < 0) return this.suspend(NUMBER_TOKEN, buf, i, n, mode, offset);
      this.scalar(mode, this.number, offset);
      return end;
    }
    if (isLetter(b)) {
      let end = i + 1;
      while (end < n && isLetter(buf[end])) end++;
      if (end === n) return this.suspend(LITERAL_TOKEN, buf, i, n, mode, offset);
      this.scalar(mode, this.parseLiteral(buf, i, end, offset, false), offset);
      return end;
    }
    throw this.fail("unexpected character where a value was expected", offset);
  }

  private inStreamedArray(): boolean {
    const k = this.depth - 1;
    return k >= 0 && this.kinds[k] === ARRAY && this.modes[k] === STREAM;
  }

  /**
   * A run of whole objects or arrays in a streamed array (a trace's events, a profile's nodes),
   * found by a quick scan of the chunk and built by one JSON.parse: about half the cost per byte
   * of building them token by token. Each element is still offered to `select` and delivered in
   * order, before the next is offered. What the scan cannot vouch for goes token by token, which
   * reports any error at its byte: an element cut by the chunk's end, nested too deeply, longer
   * than a token may be, or holding a raw control character, and a run JSON.parse refuses.
   * Both ways build the same values (JSON.parse's, down to `__proto__` keys and number rounding).
   */
  private elements(buf: Uint8Array, i: number, n: number): number {
    if (this.rawElement) return this.offerElements(buf, i, n);
    const starts = this.batchStarts;
    const ends = this.batchEnds;
    const count = this.findRun(buf, i, n, MAX_BATCH_ELEMENTS);
    if (count === 0) return this.value(buf, i, n, buf[i]);
    let values: JsonValue[];
    try {
      values = JSON.parse(`[${this.utf8.decode(buf.subarray(i, ends[count - 1]))}]`) as JsonValue[];
    } catch {
      this.batchBlockedUntil = this.base + ends[count - 1];
      return this.value(buf, i, n, buf[i]);
    }
    for (let e = 0; e < count; e++) {
      const mode = this.enterValue();
      if (mode !== MATERIALIZE) return this.startValue(buf, starts[e], n, buf[starts[e]], mode);
      this.deliver(values[e], this.base + starts[e]);
      this.state = EXPECT_COMMA_OR_CLOSE;
    }
    return ends[count - 1];
  }

  /**
   * The run of whole objects and arrays (at most `max`) starting at buf[i], one after another
   * separated by commas, as `elements` takes them: their starts and ends go to batchStarts and
   * batchEnds. Returns how many.
   */
  private findRun(buf: Uint8Array, i: number, n: number, max: number): number {
    const starts = this.batchStarts;
    const ends = this.batchEnds;
    let count = 0;
    for (let at = i; count < max; ) {
      const end = this.compositeEnd(buf, at, n);
      if (end < 0) break;
      starts[count] = at;
      ends[count++] = end;
      let next = skipWhitespace(buf, end, n);
      if (next >= n || buf[next] !== 0x2c) break;
      next = skipWhitespace(buf, next + 1, n);
      if (next >= n || (buf[next] !== 0x7b && buf[next] !== 0x5b)) break;
      at = next;
    }
    return count;
  }

  /**
   * `elements` with a rawElement hook: each element is offered to the hook, in the place of its
   * delivery. One it declines is built by JSON.parse with as many following elements as the hook
   * declined in a row before it (they are likely declined too; one the hook takes after all is
   * parsed in vain), so that a stretch of declined elements is parsed in runs as in `elements`.
   * What neither vouches for goes token by token as in `elements`, which reports an error at its
   * byte; the elements before it were taken or delivered, as the token path would have delivered them.
   */
  private offerElements(buf: Uint8Array, i: number, n: number): number {
    const rawElement = this.rawElement!;
    const room = this.maxDepth - this.depth;
    const starts = this.batchStarts;
    const ends = this.batchEnds;
    // Elements parsed ahead: values[k] is the element at starts[k] for parsedFrom <= k < parsedCount.
    let values: JsonValue[] = [];
    let parsedFrom = 0;
    let parsedCount = 0;
    for (let at = i; ; ) {
      const mode = this.enterValue();
      if (mode !== MATERIALIZE) return this.startValue(buf, at, n, buf[at], mode);
      let end = rawElement(this.path, buf, at, Math.min(n, at + this.maxTokenBytes), room, this.base + at);
      if (end >= 0) this.declinedInARow = 0;
      else {
        this.declinedInARow++;
        while (parsedFrom < parsedCount && starts[parsedFrom] < at) parsedFrom++;
        if (parsedFrom >= parsedCount || starts[parsedFrom] !== at) {
          parsedCount = this.findRun(buf, at, n, Math.min(MAX_BATCH_ELEMENTS, this.declinedInARow));
          parsedFrom = 0;
          if (parsedCount === 0) return this.startValue(buf, at, n, buf[at], mode);
          try {
            values = JSON.parse(`[${this.utf8.decode(buf.subarray(at, ends[parsedCount - 1]))}]`) as JsonValue[];
          } catch {
            this.batchBlockedUntil = this.base + ends[parsedCount - 1];
            return this.startValue(buf, at, n, buf[at], mode);
          }
        }
        end = ends[parsedFrom];
        this.deliver(values[parsedFrom++], this.base + at);
      }
      this.state = EXPECT_COMMA_OR_CLOSE;
      // On to the next element when it starts in this chunk; anything else is run's to read.
      let next = skipWhitespace(buf, end, n);
      if (next >= n || buf[next] !== 0x2c) return end;
      next = skipWhitespace(buf, next + 1, n);
      if (next >= n || (buf[next] !== 0x7b && buf[next] !== 0x5b)) return end;
      at = next;
    }
  }

  /**
   * The index after the object or array starting at buf[i] when it ends within the chunk and may
   * be left to JSON.parse; -1 otherwise. Brackets are only counted, not matched: a mismatch is
   * JSON.parse's to refuse.
   */
  private compositeEnd(buf: Uint8Array, i: number, n: number): number {
    const room = this.maxDepth - this.depth;
    const stop = Math.min(n, i + this.maxTokenBytes);
    let depth = 0;
    for (let j = i; j < stop; j++) {
      const b = buf[j];
      if (b === 0x22) {
        for (j++; j < stop; j++) {
          const c = buf[j];
          if (c === 0x22) break;
          if (c === 0x5c) j++;
          else if (c < 0x20) return -1;
        }
      } else if (b === 0x7b || b === 0x5b) {
        if (++depth > room) return -1;
      } else if ((b === 0x7d || b === 0x5d) && --depth === 0) return j + 1;
    }
    return -1;
  }

  /** Reads the property name at buf[i] (a '"'); returns the index after it. */
  private key(buf: Uint8Array, i: number, n: number): number {
    const offset = this.base + i;
    const close = this.scanString(buf, i + 1, n, false);
    const mode = this.modes[this.depth - 1];
    if (close < 0) return this.suspendString(buf, i + 1, n, mode, offset);
    this.keyDone(mode === SKIP ? "" : this.decodeString(buf, i + 1, close, this.scanFlags, this.scanHash, offset + 1));
    return close + 1;
  }

  private keyDone(key: string): void {
    const k = this.depth - 1;
    if (this.modes[k] === STREAM) this.path[k] = key;
    else this.keys[k] = key;
    this.state = EXPECT_COLON;
  }

  /** The mode of the value about to start: inherited, or the caller's choice under a streamed parent. */
  private enterValue(): number {
    const d = this.depth;
    if (d === 0) return this.choose();
    const k = d - 1;
    const parentMode = this.modes[k];
    if (this.kinds[k] === ARRAY) {
      const index = ++this.indices[k];
      if (parentMode === STREAM) this.path[k] = index;
    }
    return parentMode === STREAM ? this.choose() : parentMode;
  }

  private choose(): number {
    if (!this.select) return MATERIALIZE;
    const choice = this.select(this.path);
    return choice === "stream" ? STREAM : choice === "skip" ? SKIP : MATERIALIZE;
  }

  private open(kind: number, mode: number, offset: number): void {
    const d = this.depth;
    if (d >= this.maxDepth) {
      throw new InputBoundError("depth", this.maxDepth, `${this.format}: the JSON nests deeper than ${this.maxDepth} levels (byte ${offset})`);
    }
    this.kinds[d] = kind;
    this.modes[d] = mode;
    this.indices[d] = -1;
    this.starts[d] = offset;
    this.values[d] = mode !== MATERIALIZE ? null : kind === OBJECT ? {} : [];
    if (mode === STREAM) this.path.push(kind === OBJECT ? "" : -1);
    this.depth = d + 1;
    this.state = kind === OBJECT ? EXPECT_KEY_OR_CLOSE : EXPECT_VALUE_OR_CLOSE;
  }

  private close(): void {
    const d = --this.depth;
    const mode = this.modes[d];
    const value = this.values[d];
    this.values[d] = null;
    if (mode === STREAM) this.path.pop();
    if (mode === MATERIALIZE) this.deliver(value as JsonValue, this.starts[d]);
    this.state = d === 0 ? EXPECT_END : EXPECT_COMMA_OR_CLOSE;
  }

  private scalar(mode: number, value: JsonValue, offset: number): void {
    if (mode !== SKIP) this.deliver(value, offset);
    this.state = this.depth === 0 ? EXPECT_END : EXPECT_COMMA_OR_CLOSE;
  }

  /** Hands a finished value to its materialized parent, or to the caller. */
  private deliver(value: JsonValue, offset: number): void {
    const k = this.depth - 1;
    if (k >= 0 && this.modes[k] === MATERIALIZE) {
      const parent = this.values[k];
      if (this.kinds[k] === ARRAY) (parent as JsonValue[]).push(value);
      else setProperty(parent as { [key: string]: JsonValue }, this.keys[k], value);
    } else if (this.onValue) {
      this.onValue(this.path, value, offset);
    }
  }

  /**
   * Finds the closing quote of a string whose content starts at buf[i]; -1 if the chunk ends first.
   * `escaped`: the previous chunk ended right after a backslash. Sets scanFlags and scanEscaped.
   */
  private scanString(buf: Uint8Array, i: number, n: number, escaped: boolean): number {
    let flags = 0;
    let hash = 0;
    if (escaped) {
      if (i >= n) {
        this.scanFlags = ESCAPED;
        this.scanEscaped = true;
        return -1;
      }
      this.checkEscape(buf[i], i);
      i++;
    }
    while (i < n) {
      const b = buf[i];
      if (b === 0x22) {
        this.scanFlags = flags;
        this.scanHash = hash;
        return i;
      }
      if (b === 0x5c) {
        flags |= ESCAPED;
        if (i + 1 >= n) {
          this.scanFlags = flags;
          this.scanEscaped = true;
          return -1;
        }
        this.checkEscape(buf[i + 1], i + 1);
        i += 2;
        continue;
      }
      if (b < 0x20) throw this.fail("a string holds an unescaped control character", this.base + i);
      flags |= b;
      hash = (Math.imul(hash, 31) + b) | 0;
      i++;
    }
    this.scanFlags = flags;
    this.scanEscaped = false;
    return -1;
  }

  private checkEscape(b: number, i: number): void {
    // " \ / b f n r t u
    if (b === 0x22 || b === 0x5c || b === 0x2f || b === 0x62 || b === 0x66 || b === 0x6e || b === 0x72 || b === 0x74 || b === 0x75) return;
    throw this.fail("invalid escape in a string", this.base + i - 1);
  }

  /** `hash`: of the string's bytes as scanString computes it (only used for plain ASCII). */
  private decodeString(buf: Uint8Array, s: number, e: number, flags: number, hash: number, offset: number): string {
    if ((flags & (ESCAPED | 0x80)) === 0) return this.ascii(buf, s, e, hash);
    if ((flags & ESCAPED) === 0) return this.utf8.decode(buf.subarray(s, e));
    return this.unescape(buf, s, e, offset);
  }

  /** ASCII without escapes: short strings (keys, names, phases) come from a small intern table. */
  private ascii(buf: Uint8Array, s: number, e: number, hash: number): string {
    const length = e - s;
    if (length > INTERN_MAX_LENGTH) return this.utf8.decode(buf.subarray(s, e));
    const slot = (hash ^ (hash >>> 13)) & (INTERN_SLOTS - 1);
    const known = this.interned[slot];
    if (known !== null && known.length === length) {
      let same = true;
      for (let j = 0; j < length; j++) {
        if (known.charCodeAt(j) !== buf[s + j]) {
          same = false;
          break;
        }
      }
      if (same) return known;
    }
    const text = String.fromCharCode.apply(null, buf.subarray(s, e) as unknown as number[]);
    this.interned[slot] = text;
    return text;
  }

  private unescape(buf: Uint8Array, s: number, e: number, offset: number): string {
    let out = "";
    let run = s;
    let i = s;
    while (i < e) {
      if (buf[i] !== 0x5c) {
        i++;
        continue;
      }
      if (i > run) out += this.utf8.decode(buf.subarray(run, i));
      const c = buf[i + 1];
      switch (c) {
        case 0x22:
          out += '"';
          break;
        case 0x5c:
          out += "\\";
          break;
        case 0x2f:
          out += "/";
          break;
        case 0x62:
          out += "\b";
          break;
        case 0x66:
          out += "\f";
          break;
        case 0x6e:
          out += "\n";
          break;
        case 0x72:
          out += "\r";
          break;
        case 0x74:
          out += "\t";
          break;
        default: {
          // \uXXXX: each escape is one UTF-16 code unit, so a surrogate pair joins by concatenation.
          let code = 0;
          for (let j = i + 2; j < i + 6; j++) {
            const h = j < e ? buf[j] : -1;
            const digit = hexDigit(h);
            if (digit < 0) throw this.fail("invalid \\u escape in a string (four hex digits expected)", offset + (i - s));
            code = code * 16 + digit;
          }
          out += String.fromCharCode(code);
          i += 6;
          run = i;
          continue;
        }
      }
      i += 2;
      run = i;
    }
    if (run < e) out += this.utf8.decode(buf.subarray(run, e));
    return out;
  }

  /**
   * Reads the number starting at buf[s] into `this.number`; returns the index after it, or -1 when
   * it runs into the end of the chunk and more may follow (`final` false).
   */
  private readNumber(buf: Uint8Array, s: number, n: number, final: boolean, offset: number): number {
    let i = s;
    const negative = buf[i] === 0x2d;
    if (negative) i++;
    let mantissa = 0;
    const intStart = i;
    while (i < n) {
      const digit = buf[i] - 0x30;
      if (digit < 0 || digit > 9) break;
      mantissa = mantissa * 10 + digit;
      i++;
    }
    const intDigits = i - intStart;
    let fractionDigits = 0;
    let exponent = 0;
    if (i < n && buf[i] === 0x2e) {
      i++;
      const fracStart = i;
      while (i < n) {
        const digit = buf[i] - 0x30;
        if (digit < 0 || digit > 9) break;
        mantissa = mantissa * 10 + digit;
        i++;
      }
      fractionDigits = i - fracStart;
      if (fractionDigits === 0 && (i < n || final)) throw this.fail("invalid number", offset);
    }
    if (i < n && (buf[i] === 0x65 || buf[i] === 0x45)) {
      i++;
      let expNegative = false;
      if (i < n && (buf[i] === 0x2b || buf[i] === 0x2d)) {
        expNegative = buf[i] === 0x2d;
        i++;
      }
      const expStart = i;
      while (i < n) {
        const digit = buf[i] - 0x30;
        if (digit < 0 || digit > 9) break;
        if (exponent < 100000) exponent = exponent * 10 + digit;
        i++;
      }
      if (i === expStart && (i < n || final)) throw this.fail("invalid number", offset);
      if (expNegative) exponent = -exponent;
    }
    if (i === n && !final) return -1;
    if ((i < n && isNumberByte(buf[i])) || intDigits === 0 || (intDigits > 1 && buf[intStart] === 0x30)) throw this.fail("invalid number", offset);
    const value = exactDecimal(mantissa, intDigits + fractionDigits, exponent - fractionDigits, negative);
    this.number = Number.isNaN(value) ? Number(this.utf8.decode(buf.subarray(s, i))) : value;
    return i;
  }

  private parseLiteral(buf: Uint8Array, s: number, e: number, offset: number, atEnd: boolean): JsonValue {
    const length = e - s;
    const word = String.fromCharCode.apply(null, buf.subarray(s, Math.min(e, s + 16)) as unknown as number[]);
    if (word === "true" && length === 4) return true;
    if (word === "false" && length === 5) return false;
    if (word === "null" && length === 4) return null;
    if (atEnd && length < 5 && ["true", "false", "null"].some((w) => w.startsWith(word))) {
      throw this.fail("the input ends inside a literal (truncated?)", this.base);
    }
    throw this.fail("invalid literal (expected true, false or null)", offset);
  }

  private suspendString(buf: Uint8Array, contentStart: number, n: number, mode: number, offset: number): number {
    this.token = STRING_TOKEN;
    this.tokenStart = offset;
    this.tokenMode = mode;
    this.tokenFlags = this.scanFlags;
    this.tokenEscaped = this.scanEscaped;
    this.tokenLength = 0;
    if (mode !== SKIP) this.append(buf, contentStart, n);
    return n;
  }

  private suspend(token: number, buf: Uint8Array, s: number, n: number, mode: number, offset: number): number {
    this.token = token;
    this.tokenStart = offset;
    this.tokenMode = mode;
    this.tokenLength = 0;
    this.append(buf, s, n);
    return n;
  }

  private append(buf: Uint8Array, s: number, e: number): void {
    const need = this.tokenLength + (e - s);
    if (need > this.maxTokenBytes) {
      throw new InputBoundError("field_length", this.maxTokenBytes, `${this.format}: a JSON token is longer than ${this.maxTokenBytes} bytes (byte ${this.tokenStart})`);
    }
    if (need > this.carry.length) {
      const grown = new Uint8Array(Math.max(need, this.carry.length * 2));
      grown.set(this.carry.subarray(0, this.tokenLength));
      this.carry = grown;
    }
    this.carry.set(buf.subarray(s, e), this.tokenLength);
    this.tokenLength = need;
  }

  /** Continues a token cut by the previous chunk boundary; returns the index after it. */
  private resumeToken(buf: Uint8Array, i: number, n: number): number {
    if (this.token === STRING_TOKEN) {
      const close = this.scanString(buf, i, n, this.tokenEscaped);
      this.tokenFlags |= this.scanFlags;
      const skip = this.tokenMode === SKIP;
      if (close < 0) {
        this.tokenEscaped = this.scanEscaped;
        if (!skip) this.append(buf, i, n);
        return n;
      }
      if (!skip) this.append(buf, i, close);
      this.finishToken(this.carry, 0, this.tokenLength, false);
      return close + 1;
    }
    const isPart = this.token === NUMBER_TOKEN ? isNumberByte : isLetter;
    let end = i;
    while (end < n && isPart(buf[end])) end++;
    this.append(buf, i, end);
    if (end === n) return n;
    this.finishToken(this.carry, 0, this.tokenLength, false);
    return end;
  }

  /** Completes the carried token (at a delimiter, or at the end of input for numbers and literals). */
  private finishToken(buf: Uint8Array, s: number, e: number, atEnd: boolean): void {
    const token = this.token;
    const offset = this.tokenStart;
    const mode = this.tokenMode;
    this.token = NO_TOKEN;
    if (token === STRING_TOKEN) {
      let hash = 0;
      for (let i = s; i < e; i++) hash = (Math.imul(hash, 31) + buf[i]) | 0;
      const text = mode === SKIP ? "" : this.decodeString(buf, s, e, this.tokenFlags, hash, offset + 1);
      if (this.state === EXPECT_KEY || this.state === EXPECT_KEY_OR_CLOSE) this.keyDone(text);
      else this.scalar(mode, text, offset);
    } else if (token === NUMBER_TOKEN) {
      // Only number bytes were carried, so the whole carry must be one number.
      if (this.readNumber(buf, s, e, true, offset) !== e) throw this.fail("invalid number", offset);
      this.scalar(mode, this.number, offset);
    } else {
      this.scalar(mode, this.parseLiteral(buf, s, e, offset, atEnd), offset);
    }
  }
}

/** Parses a chunk stream, awaiting `afterChunk` after each chunk (e.g. to flush builder batches). */
export async function parseJsonStream(
  chunks: AsyncIterable<Uint8Array>,
  options: JsonStreamOptions,
  afterChunk?: () => Promise<void> | void,
): Promise<void> {
  const parser = new JsonStreamParser(options);
  for await (const chunk of chunks) {
    parser.write(chunk);
    if (afterChunk) await afterChunk();
  }
  parser.end();
}

/** Parses one small in-memory JSON document with the same rules (tests, small side files). */
export function parseJsonBytes(bytes: Uint8Array, options: Omit<JsonStreamOptions, "select" | "onValue"> = {}): JsonValue {
  let result: JsonValue = null;
  const parser = new JsonStreamParser({ ...options, onValue: (_path, value) => (result = value) });
  parser.write(bytes);
  parser.end();
  return result;
}
