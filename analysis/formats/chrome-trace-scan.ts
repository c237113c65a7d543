/**
 * Reads the common trace event (an X, B, E, i or I slice with the usual keys) straight from its
 * bytes, where building it with JSON.parse and writing its args back with JSON.stringify cost about
 * two thirds of a trace import's parse. What it reads is exactly what those would give: args that
 * JSON.stringify would write back byte for byte are taken as they are written, other args go
 * through JSON.parse and JSON.stringify alone. Whatever it cannot vouch for (another phase or key,
 * a key given twice, invalid JSON) it declines, and the event takes JSON.parse's way.
 */
import { AsciiBytes } from "../evidence/text-coding";
import { exactDecimal, hexDigit, isJsonSpace } from "../io/json-stream";

/** An event as the scanner read it; fields it did not find are undefined. */
export interface ScannedEvent {
  ph: "X" | "B" | "E" | "i" | "I";
  name: string | undefined;
  cat: string | undefined;
  ts: number | undefined;
  dur: number | undefined;
  /** Thread duration: an X event's length when it has no dur. */
  tdur: number | undefined;
  pid: number | string | undefined;
  tid: number | string | undefined;
  s: string | undefined;
  /**
   * The args object as JSON.stringify writes it; null if absent or empty. An X, i or I event's
   * ASCII args come as their bytes in the input (valid until the next event is read).
   */
  args: string | AsciiBytes | null;
}

// One bit per known key, to find a key given twice.
const PH = 1;
const NAME = 2;
const CAT = 4;
const TS = 8;
const DUR = 16;
const PID = 32;
const TID = 64;
const S = 128;
const TTS = 256;
const TDUR = 512;
const ARGS = 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Keys per args object checked for repeats; an object with more is declined. */
const MAX_OBJECT_KEYS = 32;

/** Bytes that end a plain run of string content: '"', '\\', control characters and non-ASCII. */
const STRING_STOP = new Uint8Array(256);
STRING_STOP.fill(1, 0, 0x20);
STRING_STOP.fill(1, 0x80, 0x100);
STRING_STOP[QUOTE] = STRING_STOP[BACKSLASH] = 1;

/** Slots of the intern table, and the longest string it keeps. */
const INTERN_SLOTS = 8192;
const INTERN_PROBES = 4;
const INTERN_MAX_LENGTH = 64;

/** The longest ASCII string made from its bytes by shortAscii. */
const SHORT_STRING = 16;

/**
 * The ASCII text of `length` (at most SHORT_STRING) bytes at buf[s], made from the bytes given as
 * arguments: for short strings about a third of the cost of decoding the chunk to slice them from
 * its text, and several times cheaper than TextDecoder or String.fromCharCode.apply per string.
 */
function shortAscii(buf: Uint8Array, s: number, length: number): string {
  const f = String.fromCharCode;
  switch (length) {
    case 0: return "";
    case 1: return f(buf[s]);
    case 2: return f(buf[s], buf[s + 1]);
    case 3: return f(buf[s], buf[s + 1], buf[s + 2]);
    case 4: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3]);
    case 5: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4]);
    case 6: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5]);
    case 7: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6]);
    case 8: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7]);
    case 9: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8]);
    case 10: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9]);
    case 11: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9], buf[s + 10]);
    case 12: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9], buf[s + 10], buf[s + 11]);
    case 13: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9], buf[s + 10], buf[s + 11], buf[s + 12]);
    case 14: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9], buf[s + 10], buf[s + 11], buf[s + 12], buf[s + 13]);
    case 15: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9], buf[s + 10], buf[s + 11], buf[s + 12], buf[s + 13], buf[s + 14]);
    default: return f(buf[s], buf[s + 1], buf[s + 2], buf[s + 3], buf[s + 4], buf[s + 5], buf[s + 6], buf[s + 7], buf[s + 8], buf[s + 9], buf[s + 10], buf[s + 11], buf[s + 12], buf[s + 13], buf[s + 14], buf[s + 15]);
  }
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

/**
 * The bit of the key whose opening quote is at buf[q], or 0 for a key the scanner does not take.
 * Its bytes are compared with the known keys' in place, closing quote included, rather than first
 * scanned for that quote: the key's length follows from its bit (keyLength). A key with an
 * escape, or one that only starts like a known key, is not one of them. It may read past the
 * event's end: the caller checks that the ':' after the key comes before it.
 */
function keyAt(buf: Uint8Array, q: number): number {
  const a = buf[q + 1];
  const b = buf[q + 2];
  switch (a) {
    case 0x6e: // name
      return b === 0x61 && buf[q + 3] === 0x6d && buf[q + 4] === 0x65 && buf[q + 5] === QUOTE ? NAME : 0;
    case 0x63: // cat
      return b === 0x61 && buf[q + 3] === 0x74 && buf[q + 4] === QUOTE ? CAT : 0;
    case 0x70: // ph, pid
      if (b === 0x68) return buf[q + 3] === QUOTE ? PH : 0;
      return b === 0x69 && buf[q + 3] === 0x64 && buf[q + 4] === QUOTE ? PID : 0;
    case 0x74: {
      // ts, tid, tts, tdur
      const c = buf[q + 3];
      if (b === 0x73) return c === QUOTE ? TS : 0;
      if (b === 0x69) return c === 0x64 && buf[q + 4] === QUOTE ? TID : 0;
      if (b === 0x74) return c === 0x73 && buf[q + 4] === QUOTE ? TTS : 0;
      return b === 0x64 && c === 0x75 && buf[q + 4] === 0x72 && buf[q + 5] === QUOTE ? TDUR : 0;
    }
    case 0x64: // dur
      return b === 0x75 && buf[q + 3] === 0x72 && buf[q + 4] === QUOTE ? DUR : 0;
    case 0x61: // args
      return b === 0x72 && buf[q + 3] === 0x67 && buf[q + 4] === 0x73 && buf[q + 5] === QUOTE ? ARGS : 0;
    case 0x73: // s
      return b === QUOTE ? S : 0;
    default:
      return 0;
  }
}

/**
 * Per known key, by the index of its bit: the length of its text `"key":` and its first and last
 * four bytes read as a little-endian int32 (see scan: all are 4 to 8 bytes long).
 */
const KEY_TEXTS = ["ph", "name", "cat", "ts", "dur", "pid", "tid", "s", "tts", "tdur", "args"].map((key) => new TextEncoder().encode(`"${key}":`));
const KEY_TEXT_LENGTHS = Int32Array.from(KEY_TEXTS, (text) => text.length);
const KEY_HEADS = Int32Array.from(KEY_TEXTS, (text) => new DataView(text.buffer).getInt32(0, true));
const KEY_TAILS = Int32Array.from(KEY_TEXTS, (text) => new DataView(text.buffer).getInt32(text.length - 4, true));

/** The length of the known key with this bit. */
function keyLength(key: number): number {
  return key === S ? 1 : key === PH || key === TS ? 2 : key === NAME || key === ARGS || key === TDUR ? 4 : 3;
}

/** Events per window in which ScanBudget counts what the scanner took. */
const WINDOW = 1024;
/** Windows the scanner rests after one in which it took fewer than 3 events in 4. */
const RESTING_WINDOWS = 16;

/**
 * Whether to offer the next event to the scanner. An event it declines costs its scan and then
 * JSON.parse, alone rather than in a run (a trace of counters and flows alternating with slices
 * took about 40% longer than without the scanner), so after a window in which it took fewer than
 * 3 events in 4 it rests (declines at once) for RESTING_WINDOWS windows, then tries again.
 */
export class ScanBudget {
  private offered = 0;
  private taken = 0;
  private resting = 0;

  /** False while resting. */
  shouldScan(): boolean {
    if (this.resting === 0) return true;
    this.resting--;
    return false;
  }

  record(taken: boolean): void {
    if (taken) this.taken++;
    if (++this.offered < WINDOW) return;
    if (this.taken * 4 < this.offered * 3) this.resting = RESTING_WINDOWS * WINDOW;
    this.offered = this.taken = 0;
  }
}

export class TraceEventScanner {
  /** The args of the last event read, when given as their bytes (see ScannedEvent.args). */
  private readonly argsBytes = new AsciiBytes();
  readonly event: ScannedEvent = { ph: "X", name: undefined, cat: undefined, ts: undefined, dur: undefined, tdur: undefined, pid: undefined, tid: undefined, s: undefined, args: null };

  // ignoreBOM: a string that starts with U+FEFF keeps it, as in JSON.parse.
  private readonly utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

  /**
   * The text of the chunk last scanned when it is plain ASCII (byte offsets are then string
   * offsets), else null; decoded only for a chunk with a long string to make (see ascii). Slicing
   * a long string from it costs far less than TextDecoder or String.fromCharCode.apply per string,
   * but decoding the chunk costs about as much per event as making its short strings (shortAscii).
   */
  private chunk: Uint8Array | null = null;
  private chunkText: string | null = null;

  // Results of the read* methods, in fields to avoid allocating one per value.
  private number = 0;
  /** Where the last string read starts and ends (content, without quotes), and whether it is plain ASCII without escapes. */
  private stringStart = 0;
  private stringEnd = 0;
  private stringPlain = false;
  private stringHash = 0;
  /**
   * Plain ASCII names, categories and scopes by hash of their bytes (see string): each slot's
   * string, its length (-1: none) and its bytes (compared faster than the string's characters).
   */
  private readonly interned: string[] = new Array<string>(INTERN_SLOTS).fill("");
  private readonly internedLengths = new Int32Array(INTERN_SLOTS).fill(-1);
  private readonly internedBytes = new Uint8Array(INTERN_SLOTS * INTERN_MAX_LENGTH);
  private readonly internedWords = new DataView(this.internedBytes.buffer);
  private internEvictions = 0;
  /** The chunk last read by four bytes at a time, and its view for that. */
  private viewed: Uint8Array | null = null;
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  /** Non-zero when an args string held a byte above 0x7f. */
  private nonAscii = 0;

  /** Where the keys of the args objects being read start and end, innermost object last. */
  private keyStarts = new Int32Array(256);
  private keyEnds = new Int32Array(256);
  private keyCount = 0;
  /** The keys of the last event scanned, in order, as their bits; 0 after the last (see scan). */
  private readonly keyOrder = new Int32Array(16);
  /** Deepest nesting of objects and arrays the event may have (the event itself is level 1). */
  private maxNesting = 0;

  /** Forgets the chunk text; the next scan decodes its chunk afresh (call when chunk bytes may be reused). */
  newChunk(): void {
    this.chunk = null;
    this.chunkText = null;
    this.viewed = null;
  }

  /**
   * Reads the event that starts at buf[start] into `event` when it ends before `end` and nests at
   * most `maxNesting` levels deep; returns the index after it, or -1 when it declines the event.
   * Taking one vouches that it is valid JSON (see JsonStreamOptions.rawElement).
   */
  scan(buf: Uint8Array, start: number, end: number, maxNesting: number): number {
    if (buf[start] !== OPEN_BRACE || maxNesting < 1) return -1;
    this.maxNesting = maxNesting;
    const event = this.event;
    event.ts = event.dur = event.tdur = undefined;
    event.pid = event.tid = undefined;
    // Strings are made once the phase is known (see text).
    let nameStart = -1;
    let nameEnd = 0;
    let nameHash = 0;
    let namePlain = false;
    let catStart = -1;
    let catEnd = 0;
    let catHash = 0;
    let catPlain = false;
    let scopeStart = -1;
    let scopeEnd = 0;
    let scopeHash = 0;
    let scopePlain = false;
    let argsStart = -1;
    let argsEnd = 0;
    let argsAscii = false;
    let argsCanonical = false;
    let seen = 0;
    // Whitespace is rare between tokens: one comparison passes over its absence (space and the
    // other JSON whitespace are all <= 0x20).
    let i = start + 1;
    if (i < end && buf[i] <= 0x20) i = this.skipSpace(buf, i, end);
    const view = this.viewOf(buf);
    // Where a key's `"key":` may still be read as two four-byte words, within the event's bounds.
    const lastWord = Math.min(end, buf.length) - 8;
    const order = this.keyOrder;
    let position = 0;
    for (;;) {
      // Events of a trace mostly write their keys alike: first try the key the last event had in
      // this position, written as `"key":` (two words compared, no dispatch on its bytes).
      let key = 0;
      const expected = order[position];
      if (expected !== 0 && i <= lastWord) {
        const k = 31 - Math.clz32(expected);
        const length = KEY_TEXT_LENGTHS[k];
        if (view.getInt32(i, true) === KEY_HEADS[k] && view.getInt32(i + length - 4, true) === KEY_TAILS[k]) {
          key = expected;
          i += length;
        }
      }
      if (key === 0) {
        // keyAt reads up to 6 bytes on; an event with a key there would end at i + 7 at the earliest.
        if (i + 6 >= end || buf[i] !== QUOTE) return -1;
        key = keyAt(buf, i);
        if (key === 0) return -1;
        i += keyLength(key) + 2;
        if (i < end && buf[i] !== COLON) i = this.skipSpace(buf, i, end);
        if (i >= end || buf[i] !== COLON) return -1;
        i++;
      }
      if ((seen & key) !== 0) return -1;
      seen |= key;
      order[position++] = key;
      if (i < end && buf[i] <= 0x20) i = this.skipSpace(buf, i, end);
      switch (key) {
        case PH: {
          // One of X B E i I, unescaped.
          const ph = buf[i + 1];
          if (i + 2 >= end || buf[i] !== QUOTE || buf[i + 2] !== QUOTE || !(ph === 0x58 || ph === 0x42 || ph === 0x45 || ph === 0x69 || ph === 0x49)) return -1;
          event.ph = ph === 0x58 ? "X" : ph === 0x42 ? "B" : ph === 0x45 ? "E" : ph === 0x69 ? "i" : "I";
          i += 3;
          break;
        }
        case NAME:
        case CAT:
        case S:
          i = this.readString(buf, i, end);
          if (i < 0) return -1;
          if (key === NAME) {
            nameStart = this.stringStart;
            nameEnd = this.stringEnd;
            nameHash = this.stringHash;
            namePlain = this.stringPlain;
          } else if (key === CAT) {
            catStart = this.stringStart;
            catEnd = this.stringEnd;
            catHash = this.stringHash;
            catPlain = this.stringPlain;
          } else {
            scopeStart = this.stringStart;
            scopeEnd = this.stringEnd;
            scopeHash = this.stringHash;
            scopePlain = this.stringPlain;
          }
          break;
        case PID:
        case TID:
          if (buf[i] === QUOTE) {
            i = this.readString(buf, i, end);
            if (i < 0) return -1;
            const text = this.string(buf, this.stringStart, this.stringEnd, this.stringHash, this.stringPlain, true);
            if (text === null) return -1;
            if (key === PID) event.pid = text;
            else event.tid = text;
            break;
          }
        // falls through: a number
        case TS:
        case DUR:
        case TTS:
        case TDUR:
          i = this.readNumber(buf, i, end);
          if (i < 0) return -1;
          if (key === TS) event.ts = this.number;
          else if (key === DUR) event.dur = this.number;
          else if (key === TDUR) event.tdur = this.number;
          else if (key === PID) event.pid = this.number;
          else if (key === TID) event.tid = this.number;
          break;
        default: {
          // args: an object, most often written as JSON.stringify would write it back.
          if (i >= end || buf[i] !== OPEN_BRACE) return -1;
          this.nonAscii = 0;
          this.keyCount = 0;
          argsStart = i;
          argsEnd = this.canonicalValue(buf, i, end, 2);
          argsCanonical = argsEnd >= 0;
          if (!argsCanonical) argsEnd = this.compositeEnd(buf, i, end);
          if (argsEnd < 0) return -1;
          argsAscii = this.nonAscii === 0;
          i = argsEnd;
        }
      }
      if (i >= end) return -1;
      if (buf[i] <= 0x20) i = this.skipSpace(buf, i, end);
      if (i >= end) return -1;
      if (buf[i] === COMMA) {
        i++;
        if (i < end && buf[i] <= 0x20) i = this.skipSpace(buf, i, end);
        continue;
      }
      if (buf[i] === CLOSE_BRACE) break;
      return -1;
    }
    order[position] = 0;
    if ((seen & PH) === 0) return -1;
    // A B event's strings wait in memory for its E: they must not hold on to the chunk's text.
    const keep = event.ph === "B";
    const name = nameStart < 0 ? undefined : this.string(buf, nameStart, nameEnd, nameHash, namePlain, keep);
    const cat = catStart < 0 ? undefined : this.string(buf, catStart, catEnd, catHash, catPlain, keep);
    const scope = scopeStart < 0 ? undefined : this.string(buf, scopeStart, scopeEnd, scopeHash, scopePlain, keep);
    if (name === null || cat === null || scope === null) return -1;
    event.name = name;
    event.cat = cat;
    event.s = scope;
    // Empty args are no args; canonical args are kept as they are written.
    if (argsStart < 0 || (argsCanonical && argsEnd === argsStart + 2)) event.args = null;
    else if (argsCanonical && argsAscii && (event.ph === "X" || event.ph === "i" || event.ph === "I")) {
      // Their text goes straight into a span draft: no string is made of it.
      const view = this.argsBytes;
      view.bytes = buf;
      view.start = argsStart;
      view.end = argsEnd;
      event.args = view;
    } else if (argsCanonical) event.args = argsAscii ? this.ascii(buf, argsStart, argsEnd, keep) : this.utf8.decode(buf.subarray(argsStart, argsEnd));
    else {
      const args = this.reformattedArgs(buf, argsStart, argsEnd);
      if (args === undefined) return -1;
      event.args = args;
    }
    return i + 1;
  }

  /**
   * Args written otherwise (spaced, other escapes or number forms, a key twice): what JSON.parse and
   * JSON.stringify make of them, as the collector's own way does (null when empty); undefined when
   * they are not valid JSON.
   */
  private reformattedArgs(buf: Uint8Array, s: number, e: number): string | null | undefined {
    let args: unknown;
    try {
      args = JSON.parse(this.text(buf, s, e));
    } catch {
      return undefined;
    }
    for (const key in args as object) if (Object.hasOwn(args as object, key)) return JSON.stringify(args);
    return null;
  }

  /**
   * The index after the object or array at buf[i] (at nesting level 2) when it ends before `end`
   * within the nesting bound, by its brackets outside strings; -1 otherwise. Only a bound for
   * JSON.parse, which checks the rest.
   */
  private compositeEnd(buf: Uint8Array, i: number, end: number): number {
    let depth = 0;
    for (; i < end; i++) {
      const b = buf[i];
      if (b === QUOTE) {
        for (i++; i < end && buf[i] !== QUOTE; i++) {
          if (buf[i] < 0x20) return -1;
          if (buf[i] === BACKSLASH) i++;
        }
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (++depth + 1 > this.maxNesting) return -1;
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }

  private skipSpace(buf: Uint8Array, i: number, end: number): number {
    while (i < end && isJsonSpace(buf[i])) i++;
    return i;
  }

  /**
   * Finds the end of the string at buf[i] (a '"'): sets stringStart, stringEnd, stringPlain (ASCII
   * without escapes) and stringHash (of a plain string's bytes, for the intern table), and returns
   * the index after it, or -1.
   */
  private readString(buf: Uint8Array, i: number, end: number): number {
    if (i >= end || buf[i] !== QUOTE) return -1;
    const s = i + 1;
    let plain = true;
    let hash = 0;
    let j = s;
    for (; j < end; j++) {
      const b = buf[j];
      if (STRING_STOP[b] === 0) {
        hash = (Math.imul(hash, 31) + b) | 0;
        continue;
      }
      if (b === QUOTE) break;
      if (b < 0x20) return -1;
      plain = false;
      if (b === BACKSLASH) j++;
    }
    if (j >= end) return -1;
    this.stringStart = s;
    this.stringEnd = j;
    this.stringHash = hash;
    this.stringPlain = plain;
    return j + 1;
  }

  /**
   * The string whose content is buf[s, e) (see readString); null when an escape is invalid. Plain
   * short strings come from the intern table: a trace repeats a few thousand names and categories
   * millions of times, and the table gives each without making a string.
   */
  private string(buf: Uint8Array, s: number, e: number, hash: number, plain: boolean, keep: boolean): string | null {
    if (!plain) return this.unescape(buf, s, e);
    const length = e - s;
    if (length > INTERN_MAX_LENGTH) return this.ascii(buf, s, e, keep);
    // A text may sit in any of INTERN_PROBES slots from its hash's, so that texts whose hashes
    // meet do not evict each other at every turn (the benchmark's category met one of its names).
    const first = (hash ^ (hash >>> 15)) & (INTERN_SLOTS - 1);
    let slot = -1;
    for (let probe = 0; probe < INTERN_PROBES; probe++) {
      const at = (first + probe) & (INTERN_SLOTS - 1);
      const known = this.internedLengths[at];
      if (known === length && this.internedHere(buf, s, length, at)) return this.interned[at];
      // Slots fill in probe order and never empty, so none after an empty one holds the text.
      if (known < 0) {
        slot = at;
        break;
      }
    }
    if (slot < 0) slot = (first + (this.internEvictions++ & (INTERN_PROBES - 1))) & (INTERN_SLOTS - 1);
    // A copy: a slice of the chunk's text would keep the whole chunk in memory with the table.
    const text = this.ascii(buf, s, e, true);
    this.interned[slot] = text;
    this.internedLengths[slot] = length;
    this.internedBytes.set(buf.subarray(s, e), slot * INTERN_MAX_LENGTH);
    return text;
  }

  /** A view of the chunk to read four bytes at a time. */
  private viewOf(buf: Uint8Array): DataView<ArrayBufferLike> {
    if (buf !== this.viewed) {
      this.viewed = buf;
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    }
    return this.view;
  }

  /** Whether buf[s, s + length) are the bytes of the intern table's slot. */
  private internedHere(buf: Uint8Array, s: number, length: number, slot: number): boolean {
    // Four bytes at a time (both read little-endian), then the last few.
    const view = this.viewOf(buf);
    const words = this.internedWords;
    const at = slot * INTERN_MAX_LENGTH;
    let j = 0;
    while (j + 4 <= length && view.getInt32(s + j, true) === words.getInt32(at + j, true)) j += 4;
    if (j + 4 <= length) return false;
    const bytes = this.internedBytes;
    while (j < length && bytes[at + j] === buf[s + j]) j++;
    return j === length;
  }

  /** The text of buf[s, e), for a moment: sliced from the chunk's text when it is ASCII. */
  private text(buf: Uint8Array, s: number, e: number): string {
    if (buf !== this.chunk) this.decodeChunk(buf);
    return this.chunkText !== null ? this.chunkText.slice(s, e) : this.utf8.decode(buf.subarray(s, e));
  }

  /**
   * The ASCII text buf[s, e): made from its bytes when short, else sliced from the chunk's text
   * (decoded once, on the first long string of the chunk). `keep`: it will be kept long, so it is
   * copied rather than sliced (a slice keeps the whole chunk's text in memory).
   */
  private ascii(buf: Uint8Array, s: number, e: number, keep: boolean): string {
    if (e - s <= SHORT_STRING) return shortAscii(buf, s, e - s);
    if (!keep) {
      if (buf !== this.chunk) this.decodeChunk(buf);
      if (this.chunkText !== null) return this.chunkText.slice(s, e);
    }
    return this.utf8.decode(buf.subarray(s, e));
  }

  private decodeChunk(buf: Uint8Array): void {
    this.chunk = buf;
    const text = this.utf8.decode(buf);
    // Plain ASCII: as many characters as bytes, none a replacement for an invalid byte.
    this.chunkText = text.length === buf.length && !text.includes("\ufffd") ? text : null;
  }

  /** The string content buf[s, e) with its escapes resolved as JSON.parse does; null if one is invalid. */
  private unescape(buf: Uint8Array, s: number, e: number): string | null {
    let out = "";
    let run = s;
    let i = s;
    while (i < e) {
      if (buf[i] !== BACKSLASH) {
        i++;
        continue;
      }
      if (i > run) out += this.utf8.decode(buf.subarray(run, i));
      const c = buf[i + 1];
      let length = 2;
      if (c === 0x22) out += '"';
      else if (c === 0x5c) out += "\\";
      else if (c === 0x2f) out += "/";
      else if (c === 0x62) out += "\b";
      else if (c === 0x66) out += "\f";
      else if (c === 0x6e) out += "\n";
      else if (c === 0x72) out += "\r";
      else if (c === 0x74) out += "\t";
      else if (c === 0x75) {
        // \uXXXX is one UTF-16 code unit, so a surrogate pair joins by concatenation.
        if (i + 6 > e) return null;
        let code = 0;
        for (let j = i + 2; j < i + 6; j++) {
          const digit = hexDigit(buf[j]);
          if (digit < 0) return null;
          code = code * 16 + digit;
        }
        out += String.fromCharCode(code);
        length = 6;
      } else return null;
      i += length;
      run = i;
    }
    if (run < e) out += this.utf8.decode(buf.subarray(run, e));
    return out;
  }

  /**
   * Reads the JSON number at buf[i] into `number`, exactly as JSON.parse gives it; the index after
   * it, or -1 when it is not one.
   */
  private readNumber(buf: Uint8Array, i: number, end: number): number {
    // Most are integers of a few digits without a leading zero: their value is their digits'.
    let b = i < end ? buf[i] : 0;
    if (b >= 0x31 && b <= 0x39) {
      let value = b - 0x30;
      let j = i + 1;
      for (; j < end; j++) {
        b = buf[j];
        if (b < 0x30 || b > 0x39) break;
        value = value * 10 + (b - 0x30);
      }
      if (j < end && j - i <= 15 && b !== 0x2e && b !== 0x65 && b !== 0x45) {
        this.number = value;
        return j;
      }
    }
    return this.readAnyNumber(buf, i, end);
  }

  /** readNumber for every form of JSON number. */
  private readAnyNumber(buf: Uint8Array, i: number, end: number): number {
    const s = i;
    const negative = buf[i] === 0x2d;
    if (negative) i++;
    const intStart = i;
    let mantissa = 0;
    while (i < end && isDigit(buf[i])) mantissa = mantissa * 10 + (buf[i++] - 0x30);
    const intDigits = i - intStart;
    if (intDigits === 0 || (intDigits > 1 && buf[intStart] === 0x30)) return -1;
    let fractionDigits = 0;
    if (buf[i] === 0x2e) {
      const fracStart = ++i;
      while (i < end && isDigit(buf[i])) mantissa = mantissa * 10 + (buf[i++] - 0x30);
      fractionDigits = i - fracStart;
      if (fractionDigits === 0) return -1;
    }
    let exponent = 0;
    if (buf[i] === 0x65 || buf[i] === 0x45) {
      i++;
      const expNegative = buf[i] === 0x2d;
      if (expNegative || buf[i] === 0x2b) i++;
      const expStart = i;
      while (i < end && isDigit(buf[i])) {
        if (exponent < 100000) exponent = exponent * 10 + (buf[i] - 0x30);
        i++;
      }
      if (i === expStart) return -1;
      if (expNegative) exponent = -exponent;
    }
    if (i >= end) return -1;
    const value = exactDecimal(mantissa, intDigits + fractionDigits, exponent - fractionDigits, negative);
    this.number = Number.isNaN(value) ? Number(String.fromCharCode.apply(null, buf.subarray(s, i) as unknown as number[])) : value;
    return i;
  }

  /**
   * Checks that the value at buf[i] is written as JSON.stringify(JSON.parse(it)) would write it:
   * no whitespace, strings with only the escapes JSON.stringify writes, numbers as String(number)
   * gives them, no key twice in an object and no integer-like keys (which JSON.parse orders first).
   * The index after it, or -1.
   */
  private canonicalValue(buf: Uint8Array, i: number, end: number, nesting: number): number {
    if (i >= end) return -1;
    const b = buf[i];
    if (b === QUOTE) return this.canonicalString(buf, i, end, false);
    if ((b === OPEN_BRACE || b === OPEN_BRACKET) && nesting > this.maxNesting) return -1;
    if (b === OPEN_BRACE) return this.canonicalObject(buf, i, end, nesting);
    if (b === OPEN_BRACKET) {
      i++;
      if (i < end && buf[i] === CLOSE_BRACKET) return i + 1;
      for (;;) {
        i = this.canonicalValue(buf, i, end, nesting + 1);
        if (i < 0 || i >= end) return -1;
        if (buf[i] === CLOSE_BRACKET) return i + 1;
        if (buf[i] !== COMMA) return -1;
        i++;
      }
    }
    if (b === 0x2d || isDigit(b)) return this.canonicalNumber(buf, i, end);
    if (i + 5 > end) return -1;
    if (b === 0x74) return buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65 ? i + 4 : -1;
    if (b === 0x66) return buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65 ? i + 5 : -1;
    if (b === 0x6e) return buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c ? i + 4 : -1;
    return -1;
  }

  private canonicalObject(buf: Uint8Array, i: number, end: number, nesting: number): number {
    i++;
    if (i < end && buf[i] === CLOSE_BRACE) return i + 1;
    const first = this.keyCount;
    for (;;) {
      const keyEnd = this.canonicalString(buf, i, end, true);
      if (keyEnd < 0 || keyEnd >= end || buf[keyEnd] !== COLON) return -1;
      if (!this.newKey(buf, first, i + 1, keyEnd - 1)) return -1;
      i = this.canonicalValue(buf, keyEnd + 1, end, nesting + 1);
      if (i < 0 || i >= end) return -1;
      if (buf[i] === CLOSE_BRACE) {
        this.keyCount = first;
        return i + 1;
      }
      if (buf[i] !== COMMA) return -1;
      i++;
    }
  }

  /**
   * Notes the key buf[s, e) of the object whose keys start at `first`; false if it is there already
   * or integer-like (JSON.parse puts those first, so the text would not come back as written).
   * Keys are plain ASCII (see canonicalString), so equal text means equal bytes.
   */
  private newKey(buf: Uint8Array, first: number, s: number, e: number): boolean {
    const length = e - s;
    let digits = 0;
    while (digits < length && isDigit(buf[s + digits])) digits++;
    if (length > 0 && digits === length) return false;
    const count = this.keyCount;
    if (count - first >= MAX_OBJECT_KEYS || count >= this.keyStarts.length) return false;
    for (let k = first; k < count; k++) {
      const ks = this.keyStarts[k];
      if (this.keyEnds[k] - ks !== length) continue;
      let same = true;
      for (let j = 0; j < length; j++) {
        if (buf[ks + j] !== buf[s + j]) {
          same = false;
          break;
        }
      }
      if (same) return false;
    }
    this.keyStarts[count] = s;
    this.keyEnds[count] = e;
    this.keyCount = count + 1;
    return true;
  }

  /**
   * A string with only the escapes JSON.stringify writes: \" \\ \b \f \n \r \t, and \u00xx (lower
   * case) for the other control characters. Other bytes above 0x7f are kept as they are (UTF-8 text
   * comes back unchanged), but not in keys: two invalid sequences could decode to the same key.
   */
  private canonicalString(buf: Uint8Array, i: number, end: number, key: boolean): number {
    if (buf[i] !== QUOTE) return -1;
    for (i++; i < end; i++) {
      const b = buf[i];
      if (b === QUOTE) return i + 1;
      if (b < 0x20) return -1;
      if (b >= 0x80) {
        if (key) return -1;
        this.nonAscii = 1;
      } else if (b === BACKSLASH) {
        const c = buf[++i];
        if (c === 0x75) {
          if (buf[i + 1] !== 0x30 || buf[i + 2] !== 0x30) return -1;
          const high = buf[i + 3];
          const low = hexDigit(buf[i + 4]);
          // Lower-case hex only; 08 09 0a 0c 0d have short forms (\b \t \n \f \r).
          if ((high !== 0x30 && high !== 0x31) || low < 0 || (buf[i + 4] >= 0x41 && buf[i + 4] <= 0x46)) return -1;
          if (high === 0x30 && (low === 8 || low === 9 || low === 10 || low === 12 || low === 13)) return -1;
          i += 4;
        } else if (!(c === 0x22 || c === 0x5c || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74)) {
          return -1;
        }
      }
    }
    return -1;
  }

  /** A number as String(number) writes it back: a plain integer of up to 15 digits, or checked by String(). */
  private canonicalNumber(buf: Uint8Array, i: number, end: number): number {
    const s = i;
    if (buf[i] === 0x2d) i++;
    while (i < end && isDigit(buf[i])) i++;
    if (i >= end) return -1;
    const b = buf[i];
    const digits = i - s - (buf[s] === 0x2d ? 1 : 0);
    if (b !== 0x2e && b !== 0x65 && b !== 0x45 && digits > 0 && digits <= 15) {
      // "-0" reads as -0, which JSON.stringify writes as 0; leading zeros are not JSON.
      if (buf[s] === 0x2d ? buf[s + 1] === 0x30 : digits > 1 && buf[s] === 0x30) return -1;
      return i;
    }
    const after = this.readNumber(buf, s, end);
    if (after < 0) return -1;
    const text = String.fromCharCode.apply(null, buf.subarray(s, after) as unknown as number[]);
    return String(this.number) === text ? after : -1;
  }

}
