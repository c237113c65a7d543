import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { DRAFT_TABLES, type RowBatch } from "../../analysis/evidence/builder";
import { textLength, type CodedText } from "../../analysis/evidence/text-coding";
import { withRoom } from "../../analysis/io/bytes";

/** The drafts' text columns, in their order in a draft (name, category, status, args). */
export const DRAFT_TEXT_COLUMNS = DRAFT_TABLES.span_drafts.filter((c) => c.type === "VARCHAR").map((c) => c.name);

/** A draft column's code for a row besides a dictionary id (>= 0): text, or NULL. */
const TEXT = -1;
const NULL = -2;
/** Where a draft id stands. */
const UNDRAFTED = 0;
const DRAFTED = 1;
const PLACED = 2;

/**
 * Span drafts kept by the writer until their places come, so that each place is written out at
 * once as a whole span row, in the order places come: the spans file needs no join of drafts and
 * places, and no sort when places come in its order (as a trace's do).
 *
 * Per draft: a byte for where it stands and, per text column, 4 bytes for its dictionary id (or
 * TEXT, NULL); for a column that has text, 8 more for where its text is (a chunk and an offset in
 * it). The text itself (a 4-byte length and UTF-8 bytes, as it arrived) is kept in chunks,
 * spilled to a file past `memoryBytes` (oldest first: places come in about the drafts' order, so
 * those are needed first and read back chunk by chunk).
 */
export class SpanDrafts {
  /** Per text column: per draft id its dictionary id or code (see TEXT, NULL), and where its text is when it has some. */
  private readonly codes: Int32Array[];
  private readonly textChunk: (Int32Array | null)[];
  private readonly textOffset: (Int32Array | null)[];
  private state = new Uint8Array(0);
  private readonly texts: ByteChunks;
  private capacity = 0;
  drafted = 0;
  placed = 0;

  /** Text spills to `spillFile` past `memoryBytes` held, in chunks of `chunkBytes` (tests make both small). */
  constructor(spillFile: string, memoryBytes = DRAFT_TEXT_MEMORY, chunkBytes = CHUNK_BYTES) {
    this.codes = DRAFT_TEXT_COLUMNS.map(() => new Int32Array(0));
    this.textChunk = DRAFT_TEXT_COLUMNS.map(() => null);
    this.textOffset = DRAFT_TEXT_COLUMNS.map(() => null);
    this.texts = new ByteChunks(spillFile, memoryBytes, chunkBytes);
  }

  /** Keeps a batch of drafts (their text columns coded, see CodedText). */
  add(batch: RowBatch): void {
    const ids = batch.columns.draft_id as Float64Array;
    let top = -1;
    for (let row = 0; row < batch.length; row++) {
      const id = ids[row];
      if (!(Number.isInteger(id) && id >= 0 && id < 2 ** 31)) throw new Error(`span draft id ${id} is not an integer in [0, 2^31)`);
      top = Math.max(top, id);
    }
    this.reserve(top + 1);
    this.advance(ids, batch.length, UNDRAFTED, DRAFTED, (id) => `span draft ${id} arrived twice`);
    for (let c = 0; c < DRAFT_TEXT_COLUMNS.length; c++) {
      const column = batch.columns[DRAFT_TEXT_COLUMNS[c]] as CodedText;
      if (column.text.length === 0) {
        codeRows(ids, batch.length, column, this.codes[c]);
        continue;
      }
      // The batch's text is kept as it came, in one piece: a value is where it was in it.
      const { chunk, offset } = this.texts.append(column.text);
      this.textChunk[c] ??= new Int32Array(this.capacity);
      this.textOffset[c] ??= new Int32Array(this.capacity);
      keepRows(ids, batch.length, column, this.codes[c], this.textChunk[c]!, this.textOffset[c]!, chunk, offset);
    }
    this.drafted += batch.length;
  }

  /** Per text column, the arrays `place` fills, reused from call to call. */
  private readonly placing = DRAFT_TEXT_COLUMNS.map(() => ({ ids: new Float64Array(0), ends: new Float64Array(0), text: new Uint8Array(64 * 1024) }));

  /**
   * The text columns of the spans these places place, in the places' order, coded as their drafts
   * were (the drafts' dictionaries decode the ids); each draft is placed once. The arrays are
   * valid until the next call, which reuses them.
   */
  place(draftIds: Float64Array, length: number): CodedText[] {
    this.advance(draftIds, length, DRAFTED, PLACED, (id, state) => `a span place for draft ${id}, which ${state === UNDRAFTED ? "was never drafted" : "was placed already"}`);
    const columns: CodedText[] = [];
    for (let c = 0; c < DRAFT_TEXT_COLUMNS.length; c++) {
      const scratch = this.placing[c];
      if (scratch.ids.length < length) {
        scratch.ids = new Float64Array(length);
        scratch.ends = new Float64Array(length);
      }
      const { ids, ends } = scratch;
      const chunks = this.textChunk[c];
      let end = 0;
      if (chunks === null) placeCodes(draftIds, length, this.codes[c], ids, ends);
      else end = this.placeTexts(draftIds, length, this.codes[c], chunks, this.textOffset[c]!, scratch);
      columns.push({ ids: ids.subarray(0, length), added: [], text: scratch.text.subarray(0, end), ends: ends.subarray(0, length) });
    }
    this.placed += length;
    return columns;
  }

  /**
   * A text column's places where some drafts have text: ids, and the text copied in the places'
   * order; returns where it ends. Places come in about the drafts' order, so their text is mostly
   * consecutive where it is kept: it is copied by runs, not value by value (a loop over a value's
   * bytes cost about 50 ns a value, for 1.95 M spans' args).
   */
  private placeTexts(draftIds: Float64Array, length: number, codes: Int32Array, chunks: Int32Array, offsets: Int32Array, into: { ids: Float64Array; ends: Float64Array; text: Uint8Array }): number {
    const { ids, ends } = into;
    let end = 0;
    let chunk = -1;
    let bytes = into.text;
    // The run of kept bytes not yet copied: [runFrom, runTo) of chunk runChunk, copied to runAt.
    let runChunk = -1;
    let runBytes = bytes;
    let runFrom = 0;
    let runTo = 0;
    let runAt = 0;
    for (let row = 0; row < length; row++) {
      const draft = draftIds[row];
      const code = codes[draft];
      if (code >= 0) ids[row] = code;
      else {
        ids[row] = NaN;
        if (code === TEXT) {
          if (chunks[draft] !== chunk) {
            chunk = chunks[draft];
            bytes = this.texts.chunk(chunk);
          }
          const from = offsets[draft];
          const size = 4 + textLength(bytes, from);
          if (chunk !== runChunk || from !== runTo) {
            copyRun(into, runBytes, runFrom, runTo, runAt);
            runChunk = chunk;
            runBytes = bytes;
            runFrom = runTo = from;
            runAt = end;
          }
          runTo += size;
          end += size;
        }
      }
      ends[row] = end;
    }
    copyRun(into, runBytes, runFrom, runTo, runAt);
    return end;
  }

  /** Chunks of text read back from the spill file so far (tests check that places in another order do not read the file over and over). */
  get readBacks(): number {
    return this.texts.readBacks;
  }

  close(): void {
    this.texts.close();
  }

  /**
   * Moves each of these drafts from state `from` to `to`; if one is not in `from` (or repeats in
   * the batch), none moves and this throws `refusal(id, its state)`.
   */
  private advance(ids: Float64Array, length: number, from: number, to: number, refusal: (id: number, state: number) => string): void {
    for (let row = 0; row < length; row++) {
      const id = ids[row];
      const state = id < this.capacity ? this.state[id] : UNDRAFTED;
      if (state !== from) {
        for (let back = 0; back < row; back++) this.state[ids[back]] = from;
        throw new Error(refusal(id, state));
      }
      this.state[id] = to;
    }
  }

  private reserve(drafts: number): void {
    if (drafts <= this.capacity) return;
    const capacity = Math.max(drafts, this.capacity * 2, 1024);
    const grown = <A extends Int32Array | Uint8Array>(from: A): A => {
      const to = new (from.constructor as new (n: number) => A)(capacity);
      to.set(from);
      return to;
    };
    this.codes.forEach((codes, c) => (this.codes[c] = grown(codes)));
    this.textChunk.forEach((chunks, c) => (this.textChunk[c] = chunks && grown(chunks)));
    this.textOffset.forEach((offsets, c) => (this.textOffset[c] = offsets && grown(offsets)));
    this.state = grown(this.state);
    this.capacity = capacity;
  }
}

/** A batch's codes for a column without text: each row's dictionary id, or NULL. */
function codeRows(ids: Float64Array, length: number, column: CodedText, codes: Int32Array): void {
  for (let row = 0; row < length; row++) {
    const coded = column.ids[row];
    codes[ids[row]] = coded === coded ? coded : NULL;
  }
}

/** A batch's codes for a column with text, and where each row's text is: its chunk, and its offset there (the batch's text starts at `base`). */
function keepRows(ids: Float64Array, length: number, column: CodedText, codes: Int32Array, chunks: Int32Array, offsets: Int32Array, chunk: number, base: number): void {
  let previous = 0;
  for (let row = 0; row < length; row++) {
    const id = ids[row];
    const end = column.ends[row];
    const coded = column.ids[row];
    if (coded === coded) codes[id] = coded;
    else if (end === previous) codes[id] = NULL;
    else {
      codes[id] = TEXT;
      chunks[id] = chunk;
      offsets[id] = base + previous;
    }
    previous = end;
  }
}

/** Copies bytes [from, to) of `bytes` into `into.text` at `at`, growing it as needed. */
function copyRun(into: { text: Uint8Array }, bytes: Uint8Array, from: number, to: number, at: number): void {
  const size = to - from;
  if (size === 0) return;
  const text = (into.text = withRoom(into.text, at, at + size));
  // A value or two of a few bytes: copied by hand, without a view made for them.
  if (size <= 64) for (let k = 0; k < size; k++) text[at + k] = bytes[from + k];
  else text.set(bytes.subarray(from, to), at);
}

/** Places of a column without text: ids (NaN for NULL), and no text. */
function placeCodes(draftIds: Float64Array, length: number, codes: Int32Array, ids: Float64Array, ends: Float64Array): void {
  for (let row = 0; row < length; row++) {
    const code = codes[draftIds[row]];
    ids[row] = code >= 0 ? code : NaN;
    ends[row] = 0;
  }
}

/** Text bytes held in memory at most, across a writer's drafts, before chunks go to the spill file. */
const DRAFT_TEXT_MEMORY = 256 * 1024 * 1024;
const CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * Spilled chunks kept once read back. Places come sorted by start while drafts came in the file's
 * order: the threads of a trace drift apart in the file (each thread's clock wanders, as in
 * gen-trace's 8 threads), and places alternate between those regions, so a chunk
 * of each must stay until every thread has passed it. With 4 chunks of 8 MiB kept, a 200 MB trace
 * whose drafts spilled past 32 MB took 151 s of CPU instead of 5 s, re-reading chunks at each
 * switch, and gen-trace's 1 GB never finished; with 32 of 4 MiB it took 5.8 s and 1 GB 19.6 s.
 */
const READ_BACK_CHUNKS = 32;

/**
 * Values appended in chunks (a value never straddles two); chunks past the memory budget are
 * written to the spill file, oldest first, and read back whole when a value in them is wanted.
 */
class ByteChunks {
  private readonly chunks: (Uint8Array | null)[] = [];
  /** Per chunk: its bytes used, and where it starts in the spill file once written there. */
  private readonly used: number[] = [];
  private readonly spilledAt: number[] = [];
  private spillEnd = 0;
  private fd: number | null = null;
  private held = 0;
  /** The oldest chunk still in memory. */
  private oldest = 0;
  /** Spilled chunks read back, the most recently used last (at most READ_BACK_CHUNKS). */
  private readonly readBackCache = new Map<number, Uint8Array>();
  /** Chunks read back from the spill file so far. */
  readBacks = 0;

  constructor(
    private readonly spillFile: string,
    private readonly memoryBytes: number,
    private readonly chunkBytes: number,
  ) {}

  /** Appends `source` in one piece; returns where it starts: its chunk, and its offset there. */
  append(source: Uint8Array): { chunk: number; offset: number } {
    const size = source.length;
    let chunk = this.chunks.length - 1;
    if (chunk < 0 || this.used[chunk] + size > this.chunks[chunk]!.length) {
      chunk = this.chunks.length;
      this.chunks.push(new Uint8Array(Math.max(this.chunkBytes, size)));
      this.used.push(0);
      this.spilledAt.push(-1);
      this.held += this.chunks[chunk]!.length;
      while (this.held > this.memoryBytes && this.oldest < chunk) this.spill(this.oldest++);
    }
    const at = this.used[chunk];
    this.chunks[chunk]!.set(source, at);
    this.used[chunk] = at + size;
    return { chunk, offset: at };
  }

  /** A chunk's bytes, read back from the spill file if it was spilled. */
  chunk(chunk: number): Uint8Array {
    return this.chunks[chunk] ?? this.readBack(chunk);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private spill(chunk: number): void {
    this.fd ??= openSync(this.spillFile, "w+");
    const bytes = this.chunks[chunk]!;
    let written = 0;
    while (written < this.used[chunk]) written += writeSync(this.fd, bytes, written, this.used[chunk] - written, this.spillEnd + written);
    this.spilledAt[chunk] = this.spillEnd;
    this.spillEnd += this.used[chunk];
    this.held -= bytes.length;
    this.chunks[chunk] = null;
  }

  private readBack(chunk: number): Uint8Array {
    const cached = this.readBackCache.get(chunk);
    if (cached) {
      this.readBackCache.delete(chunk);
      this.readBackCache.set(chunk, cached);
      return cached;
    }
    this.readBacks++;
    const bytes = new Uint8Array(this.used[chunk]);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(this.fd!, bytes, read, bytes.length - read, this.spilledAt[chunk] + read);
      if (n === 0) throw new Error(`the span drafts' spill file ended early (chunk ${chunk})`);
      read += n;
    }
    this.readBackCache.set(chunk, bytes);
    if (this.readBackCache.size > READ_BACK_CHUNKS) this.readBackCache.delete(this.readBackCache.keys().next().value!);
    return bytes;
  }
}
