import { copyBytes, withRoom } from "../io/bytes";

/**
 * Text columns leave the builder coded (see CodedText): a value that repeats as an id into the
 * column's dictionary, any other as UTF-8 bytes already laid out as a Parquet page holds them. A
 * sink on another thread then receives a few typed arrays, copied in one piece each, instead of
 * millions of strings that the message would copy, the thread would rebuild and hash, and the
 * writer would encode again. (220 MB trace: about 1.8 s less CPU over the import, most of it on
 * the writer's thread.)
 */

/**
 * Values the dictionary learns from at a time (see TextDictionary.update): DuckDB's vector size,
 * by which the writer decided when it coded text itself.
 */
export const VECTOR_ROWS = 2048;
/** Bounds on one column's dictionary: sinks that decode it in SQL keep the literal small. */
const DICTIONARY_ENTRIES = 8192;
const DICTIONARY_CHARS = 256 * 1024;
/** Values at most this long are encoded by a loop over their characters, longer ones by TextEncoder. */
const SHORT_TEXT = 32;

/** One batch of a text column, coded. */
export interface CodedText {
  /** Per row: the value's dictionary id, or NaN when it is text or NULL. */
  ids: Float64Array;
  /** The entries the column's dictionary gained with this batch: ids continue the earlier batches'. */
  added: string[];
  /** The rows held as text, as a PLAIN Parquet page has them: per value a 4-byte little-endian length, then its UTF-8 bytes. */
  text: Uint8Array;
  /** Per row, where its text ends in `text`: a row without id whose text ends where the previous row's did is NULL. */
  ends: Float64Array;
}

/**
 * ASCII text as it lies in a buffer being read, for a coder to copy without making a string of
 * it (a trace's args: about 0.3 s of the 220 MB trace's parse went to making their strings and
 * encoding them back). A reader reuses one for value after value: it is valid only during the
 * call it is given to.
 */
export class AsciiBytes {
  bytes: Uint8Array = new Uint8Array(0);
  start = 0;
  end = 0;

  get length(): number {
    return this.end - this.start;
  }

  /** The text as a string. */
  text(): string {
    return utf8Decoder.decode(this.bytes.subarray(this.start, this.end));
  }
}

export function isCodedText(value: unknown): value is CodedText {
  return typeof value === "object" && value !== null && (value as CodedText).ids instanceof Float64Array && (value as CodedText).text instanceof Uint8Array;
}

/**
 * A column's dictionary, while its values repeat (span names and categories: a few hundred
 * distinct values over millions of rows). It stops coding when the column proves not repetitive.
 */
class TextDictionary {
  private readonly ids = new Map<string, number>();
  size = 0;
  private chars = 0;
  private seen = 0;
  private missed = 0;
  /** False once the column proves not repetitive: from then on every value is held as text. */
  coding = true;

  /** The last value looked up and its id: a column of one repeating value (a trace's category) skips the map. */
  private lastValue: string | null = null;
  private lastId = -1;

  /** The value's id, adding it while there is room; -1 when it is to be held as text. */
  idOf(value: string): number {
    if (value === this.lastValue) return this.lastId;
    const id = this.lookUp(value);
    this.lastValue = value;
    this.lastId = id;
    return id;
  }

  private lookUp(value: string): number {
    const known = this.ids.get(value);
    if (known !== undefined) return known;
    // A NUL would end the string early where a sink decodes ids in SQL; such values stay text.
    if (this.size >= DICTIONARY_ENTRIES || this.chars + value.length > DICTIONARY_CHARS || value.includes("\0")) return -1;
    this.chars += value.length;
    this.ids.set(value, this.size);
    return this.size++;
  }

  /**
   * After a vector: `misses` of its `values` were not in the dictionary before. The column stops
   * coding when most of its values so far were new (unique text), or when the dictionary is full
   * and most of this vector's values missed (a column that stopped repeating).
   */
  update(values: number, misses: number): void {
    this.seen += values;
    this.missed += misses;
    const full = this.size >= DICTIONARY_ENTRIES || this.chars >= DICTIONARY_CHARS;
    if ((this.seen >= 4096 && this.missed * 2 > this.seen) || (full && misses * 2 > values)) this.coding = false;
  }
}

/** Codes one text column's values as they come, batch after batch (see CodedText). */
export class TextCoder {
  private readonly dictionary = new TextDictionary();
  private added: string[] = [];
  private ids: Float64Array;
  private ends: Float64Array;
  private text: Uint8Array;
  private end = 0;
  length = 0;
  /** The arrays of a batch the sink is done with (see recycle), for the next take. */
  private spare: Pick<CodedText, "ids" | "ends" | "text"> | null = null;
  /** The current vector: its rows, its values, those not in the dictionary at its start, and the dictionary's size then. */
  private vectorRows = 0;
  private vectorValues = 0;
  private vectorMisses = 0;
  private vectorKnown = 0;

  /** `coding` false holds every value as text. */
  constructor(
    private capacity = 1024,
    coding = true,
  ) {
    this.dictionary.coding = coding;
    this.ids = new Float64Array(capacity);
    this.ends = new Float64Array(capacity);
    this.text = new Uint8Array(capacity * 16);
  }

  push(value: string | null | undefined): void {
    if (this.length === this.capacity) this.grow();
    const row = this.length++;
    this.ids[row] = NaN;
    if (value !== null && value !== undefined) {
      this.vectorValues++;
      const size = this.dictionary.size;
      const id = this.dictionary.coding ? this.dictionary.idOf(value) : -1;
      if (id === size) this.added.push(value);
      if (id < 0 || id >= this.vectorKnown) this.vectorMisses++;
      if (id >= 0) this.ids[row] = id;
      else this.encode(value);
    }
    this.ends[row] = this.end;
    if (++this.vectorRows === VECTOR_ROWS) this.learn();
  }

  /** Pushes ASCII text as it lies in a buffer: its bytes copied as they are, unless the dictionary still codes the column. */
  pushAscii(value: AsciiBytes): void {
    if (this.dictionary.coding) return this.push(value.text());
    if (this.length === this.capacity) this.grow();
    const row = this.length++;
    this.ids[row] = NaN;
    const { bytes, start } = value;
    const size = value.length;
    const text = (this.text = withRoom(this.text, this.end, this.end + 4 + size));
    const at = this.end + 4;
    copyBytes(bytes, start, text, at, size);
    putTextLength(text, this.end, size);
    this.end = at + size;
    this.ends[row] = this.end;
    if (++this.vectorRows === VECTOR_ROWS) this.learn();
  }

  /**
   * The rows since the last take, coded; the coder starts empty again, with the arrays of a batch
   * given back (see recycle) or new ones.
   */
  take(): CodedText {
    const taken: CodedText = { ids: this.ids.subarray(0, this.length), added: this.added, text: this.text.subarray(0, this.end), ends: this.ends.subarray(0, this.length) };
    this.added = [];
    const spare = this.spare;
    this.spare = null;
    this.ids = spare && spare.ids.length >= this.capacity ? spare.ids : new Float64Array(this.capacity);
    this.ends = spare && spare.ends.length >= this.capacity ? spare.ends : new Float64Array(this.capacity);
    this.text = spare && spare.text.length >= Math.max(1024, this.end) ? spare.text : new Uint8Array(Math.max(1024, this.end));
    this.end = 0;
    this.length = 0;
    return taken;
  }

  /** Takes back a batch this coder gave out, once its sink is done with it: the next take reuses its arrays, whole. */
  recycle(batch: CodedText): void {
    this.spare = { ids: new Float64Array(batch.ids.buffer), ends: new Float64Array(batch.ends.buffer), text: new Uint8Array(batch.text.buffer) };
  }

  /** The vector is full: the dictionary learns whether the column repeats. */
  private learn(): void {
    if (this.dictionary.coding) this.dictionary.update(this.vectorValues, this.vectorMisses);
    this.vectorRows = this.vectorValues = this.vectorMisses = 0;
    this.vectorKnown = this.dictionary.size;
  }

  /** Appends the value's length and UTF-8 bytes to the text. */
  private encode(value: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const text = (this.text = withRoom(this.text, this.end, this.end + 4 + 3 * value.length));
    const at = this.end + 4;
    let written = value.length <= SHORT_TEXT ? asciiInto(value, text, at) : -1;
    if (written < 0) written = utf8.encodeInto(value, text.subarray(at)).written;
    putTextLength(text, this.end, written);
    this.end = at + written;
  }

  private grow(): void {
    this.capacity *= 2;
    const ids = new Float64Array(this.capacity);
    ids.set(this.ids);
    this.ids = ids;
    const ends = new Float64Array(this.capacity);
    ends.set(this.ends);
    this.ends = ends;
  }
}

/** The length of the text value at `at` in CodedText's layout (and a PLAIN page's): its 4-byte little-endian prefix. */
export function textLength(bytes: Uint8Array, at: number): number {
  return bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
}

function putTextLength(bytes: Uint8Array, at: number, length: number): void {
  bytes[at] = length & 0xff;
  bytes[at + 1] = (length >>> 8) & 0xff;
  bytes[at + 2] = (length >>> 16) & 0xff;
  bytes[at + 3] = length >>> 24;
}

/** Writes an ASCII value's bytes at `at` and returns their count; -1 (some bytes written) when it is not ASCII. */
function asciiInto(value: string, text: Uint8Array, at: number): number {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0x80) return -1;
    text[at + i] = code;
  }
  return value.length;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** Codes `values` as one batch of a column of their own (`coding` false: all as text). */
export function codeTexts(values: ArrayLike<string | null | undefined>, coding = true): CodedText {
  const coder = new TextCoder(Math.max(1, values.length), coding);
  for (let i = 0; i < values.length; i++) coder.push(values[i]);
  return coder.take();
}

/** Turns a column's coded batches back into values: its dictionary, learned batch by batch. */
export class TextDecoding {
  private readonly values: string[] = [];

  /** Learns the batch's new dictionary entries; call once per batch, in order, before reading it. */
  learn(batch: CodedText): void {
    for (const value of batch.added) this.values.push(value);
  }

  /** The dictionary's entries so far, by id. */
  get dictionary(): readonly string[] {
    return this.values;
  }

  /** A row's value: from the dictionary, from the text, or null. */
  value(batch: CodedText, row: number): string | null {
    const id = batch.ids[row];
    if (id === id) return this.values[id];
    return textAt(batch, row);
  }
}

/** A row's text, or null when it has none (NULL, or a dictionary id). */
export function textAt(batch: CodedText, row: number): string | null {
  const start = row > 0 ? batch.ends[row - 1] : 0;
  const end = batch.ends[row];
  if (end === start) return null;
  return utf8Decoder.decode(batch.text.subarray(start + 4, end));
}
