import { isCodedText, textLength, type CodedText, type TextDecoding } from "../../analysis/evidence/text-coding";
import { concatBytes, copyBytes, withRoom } from "../../analysis/io/bytes";
import {
  BYTE_ARRAY,
  ByteOutput,
  CompactWriter,
  DATA_PAGE,
  DELTA_BINARY_PACKED,
  DELTA_BYTE_ARRAY,
  DICTIONARY_PAGE,
  DOUBLE,
  INT32,
  INT64,
  INT_32,
  INT_64,
  littleEndianUint32,
  OPTIONAL,
  ParquetFileOutput,
  PLAIN,
  RLE,
  RLE_DICTIONARY,
  UNCOMPRESSED,
  UTF8,
} from "./parquet-format";

export type NumericColumnType = "INTEGER" | "BIGINT" | "DOUBLE";

/** A final file's column: numbers, or text coded as it left the builder (see CodedText). */
export type FinalColumn =
  /** `encoded`: the column's chunks are encoded elsewhere and given whole (see FinalParquetFile.addEncoded). */
  | { name: string; type: NumericColumnType; nullable: boolean; encoded?: boolean }
  /** `dictionary`: the column's dictionary, learned from its batches (ids index it). */
  | { name: string; type: "VARCHAR"; nullable: boolean; dictionary: TextDecoding };

const ROW_GROUP_ROWS = 122_880;
const INT32_MAX = 2 ** 31 - 1;
const INT64_END = 2 ** 63;
/**
 * Deltas are exact in doubles while a page's values lie within 2^52 of each other: each delta is
 * then at most 2^52 in size and each delta less the block's least at most 2^53, integers that a
 * double holds exactly, so IEEE subtraction gives them exactly. A page of BIGINT values spread
 * wider (values near ±2^53, or beyond) is written PLAIN instead, as int64s made with BigInt.
 */
const EXACT_DELTA_RANGE = 2 ** 52;
/** DELTA_BINARY_PACKED's layout: blocks of 128 deltas in 4 miniblocks of 32, each its own bit width. */
const BLOCK_VALUES = 128;
const MINIBLOCKS = 4;
const MINIBLOCK_VALUES = BLOCK_VALUES / MINIBLOCKS;
const TWO_32 = 2 ** 32;
const CREATED_BY = "emberscope Parquet writer";

interface ChunkInfo {
  /** Where the column chunk starts (its dictionary page, if any) and its size with page headers. */
  offset: number;
  size: number;
  dataOffset: number;
  dictionary: boolean;
  encodings: number[];
  nulls: number;
  min: Uint8Array | null;
  max: Uint8Array | null;
}

interface RowGroupInfo {
  rows: number;
  chunks: ChunkInfo[];
}

/**
 * A row group's chunks of some number columns, encoded apart from their file (see NumberChunks):
 * their bytes one after another, and each chunk as ChunkInfo with offsets into those bytes.
 */
export interface EncodedChunks {
  rows: number;
  bytes: Uint8Array;
  chunks: ChunkInfo[];
}

/** Where chunks are written: a file (ParquetFileOutput), or memory (ChunkBytes). */
interface ChunkOutput {
  readonly offset: number;
  write(parts: Uint8Array[]): void;
}

/** Chunks written to memory, taken out a row group at a time (`take`: offsets start from 0 again). */
class ChunkBytes extends ByteOutput implements ChunkOutput {
  get offset(): number {
    return this.length;
  }

  write(parts: Uint8Array[]): void {
    for (const part of parts) this.bytes(part);
  }
}

/**
 * Rows appended batch by batch and cut into row groups of `rowGroupRows` rows, each handed to
 * `write` as per column its numbers or its text rows: a whole row group within a batch where it
 * lies in the batch, any other gathered first. A column of kind "given" takes no values (its
 * chunks are encoded elsewhere).
 */
class RowGroups {
  /** The open row group's rows, one per column; made by the first rows gathered. */
  private buffers: (Float64Array | TextRows | null)[] = [];
  private buffered = 0;

  constructor(
    private readonly kinds: readonly ("numbers" | "text" | "given")[],
    private readonly rowGroupRows: number,
    private readonly write: (columns: readonly (Float64Array | TextRows | null)[], rows: number) => void,
  ) {}

  append(values: readonly (Float64Array | CodedText | undefined)[], length: number): void {
    for (let start = 0; start < length; ) {
      if (this.buffered === 0 && length - start >= this.rowGroupRows) {
        const end = start + this.rowGroupRows;
        this.write(
          this.kinds.map((kind, c) => (kind === "numbers" ? (values[c] as Float64Array).subarray(start, end) : kind === "text" ? textRowsOf(values[c] as CodedText, start, end) : null)),
          this.rowGroupRows,
        );
        start = end;
        continue;
      }
      if (this.buffers.length === 0) this.buffers = this.kinds.map((kind) => (kind === "numbers" ? new Float64Array(this.rowGroupRows) : kind === "text" ? textRows(this.rowGroupRows) : null));
      const rows = Math.min(length - start, this.rowGroupRows - this.buffered);
      for (let c = 0; c < this.kinds.length; c++) {
        const buffer = this.buffers[c];
        if (buffer instanceof Float64Array) buffer.set((values[c] as Float64Array).subarray(start, start + rows), this.buffered);
        else if (buffer) appendText(buffer, values[c] as CodedText, start, rows, this.buffered);
      }
      this.buffered += rows;
      start += rows;
      if (this.buffered === this.rowGroupRows) this.flush();
    }
  }

  /** Hands out the gathered rows, if any, as a row group. */
  flush(): void {
    if (this.buffered === 0) return;
    this.write(this.buffers, this.buffered);
    for (const buffer of this.buffers) if (buffer && !(buffer instanceof Float64Array)) buffer.end = 0;
    this.buffered = 0;
  }
}

/**
 * The final Parquet file of an output table, written as its rows arrive, in place of staging them
 * and a DuckDB COPY: DuckDB's writer cost 40-50 ns a value whatever its options (1-1.5 s of a
 * 220 MB folded import), this about 20 on the same 2-core machine (where a bare loop over a
 * Float64Array takes 1-2). `append` rows as they come (numbers with NaN for NULL, text coded as
 * it left the builder), then `finish`.
 *
 * The file reads as a COPY's does: `generation_id` first (a one-entry dictionary), then the
 * columns in their order as INT32 (INTEGER), INT64 (BIGINT), DOUBLE or UTF-8 BYTE_ARRAY
 * (VARCHAR), all OPTIONAL, rows in the order given, row groups of 122,880 rows unless told
 * otherwise, each column chunk with null-count and (but for text not dictionary-coded, see
 * text) min/max statistics so that DuckDB skips row groups as it does in its own files. Pages are
 * uncompressed, one per column chunk. Integers are dictionary-coded while their distinct values
 * are at most an eighth of the chunk's, else DELTA_BINARY_PACKED; doubles dictionary-coded while
 * their distinct values are at most half the chunk's (as DuckDB's writer does), else PLAIN. Text
 * is dictionary-coded when every value of the chunk came as a dictionary id (see TextCoder), else
 * DELTA_BYTE_ARRAY.
 */
export class FinalParquetFile {
  private readonly output: ParquetFileOutput;
  private readonly rowGroups: RowGroupInfo[] = [];
  private readonly groups: RowGroups;
  /** Per text column, its dictionary's entries as PLAIN values (null for numbers). */
  private readonly entries: (EntryBytes | null)[];
  /** Chunks of the `encoded` columns given ahead of their rows, a row group each, in order. */
  private readonly encoded: EncodedChunks[] = [];
  private rows = 0;
  private finished = false;
  private encoder: ChunkEncoder | null = null;
  private readonly generationId: Uint8Array;

  constructor(
    readonly file: string,
    generationId: string,
    private readonly columns: readonly FinalColumn[],
    private readonly rowGroupRows = ROW_GROUP_ROWS,
  ) {
    this.generationId = new TextEncoder().encode(generationId);
    this.entries = columns.map((c) => (c.type === "VARCHAR" ? new EntryBytes(c.dictionary) : null));
    const kinds = columns.map((c) => (c.type === "VARCHAR" ? "text" : c.encoded ? "given" : "numbers"));
    this.groups = new RowGroups(kinds, rowGroupRows, (values, rows) => this.writeRowGroup(values, rows));
    this.output = new ParquetFileOutput(file);
  }

  /**
   * Appends `length` rows: per column in the columns' order, a Float64Array of numbers or a batch
   * of coded text (nothing for an `encoded` column: its chunks come by addEncoded, before the rows
   * that complete their row group).
   */
  append(values: readonly (Float64Array | CodedText | undefined)[], length: number): void {
    if (this.finished) throw new Error(`rows for ${this.file} after it was finished`);
    this.columns.forEach((column, c) => {
      if (column.type !== "VARCHAR" && column.encoded) return;
      if ((column.type === "VARCHAR") !== isCodedText(values[c])) throw new Error(`${this.file}: column ${column.name} (${column.type}) was given ${column.type === "VARCHAR" ? "numbers" : "text"}`);
    });
    this.groups.append(values, length);
    this.rows += length;
  }

  /** Whether some columns' chunks come encoded (addEncoded) rather than their values. */
  get takesEncoded(): boolean {
    return this.columns.some((c) => c.type !== "VARCHAR" && c.encoded === true);
  }

  /** Gives the `encoded` columns' chunks of the next row groups (see NumberChunks). */
  addEncoded(groups: readonly EncodedChunks[]): void {
    this.encoded.push(...groups);
  }

  /** Writes the last row group and the footer, and closes the file; returns the rows written. */
  finish(): number {
    if (this.finished) return this.rows;
    this.groups.flush();
    if (this.encoded.length > 0) throw new Error(`${this.file}: ${this.encoded.length} row groups of encoded chunks have no rows`);
    this.output.end(this.footer());
    this.finished = true;
    this.encoder = null;
    return this.rows;
  }

  /** Closes the file, finished or not (the writer removes it with its staging directory). */
  close(): void {
    this.output.close();
  }

  /** Writes a row group of `rows` rows: per column its numbers, its text rows, or (null) its chunk given encoded. */
  private writeRowGroup(columns: readonly (Float64Array | TextRows | null)[], rows: number): void {
    this.encoder ??= new ChunkEncoder(this.rowGroupRows);
    const chunks = [this.encoder.generationId(this.output, this.generationId, rows)];
    const given = columns.includes(null) ? this.encoded.shift() : undefined;
    if (given && given.rows !== rows) throw new Error(`${this.file}: a row group of ${rows} rows was given encoded chunks of ${given.rows}`);
    let next = 0;
    for (let c = 0; c < this.columns.length; c++) {
      const values = columns[c];
      if (values instanceof Float64Array) chunks.push(this.encoder.numbers(this.output, this.columns[c] as NumericFinalColumn, values, rows));
      else if (values) chunks.push(this.encoder.text(this.output, values, this.entries[c]!.current(), rows));
      else {
        if (!given) throw new Error(`${this.file}: a row group of ${rows} rows came before its encoded chunks`);
        chunks.push(writeGiven(this.output, given, next++));
      }
    }
    this.rowGroups.push({ rows, chunks });
  }

  private footer(): Uint8Array {
    const schema = [{ name: "generation_id", physical: BYTE_ARRAY, converted: UTF8 }, ...this.columns.map((c) => ({ name: c.name, physical: physicalType(c.type), converted: convertedType(c.type) }))];
    return new CompactWriter()
      .structBody((w) =>
        w
          .i32(1, 1)
          .structList(2, [null, ...schema], (e, column) => {
            if (column === null) e.string(4, "schema").i32(5, schema.length);
            else {
              e.i32(1, column.physical).i32(3, OPTIONAL).string(4, column.name);
              if (column.converted !== null) e.i32(6, column.converted);
            }
          })
          .i64(3, this.rows)
          .structList(4, this.rowGroups, (g, group) =>
            g
              .structList(1, group.chunks.map((chunk, c) => ({ chunk, column: schema[c] })), (cc, { chunk, column }) => {
                cc.i64(2, chunk.offset).struct(3, (m) => {
                  m.i32(1, column.physical)
                    .i32List(2, chunk.encodings)
                    .stringList(3, [column.name])
                    .i32(4, UNCOMPRESSED)
                    .i64(5, group.rows)
                    .i64(6, chunk.size)
                    .i64(7, chunk.size)
                    .i64(9, chunk.dataOffset);
                  if (chunk.dictionary) m.i64(11, chunk.offset);
                  m.struct(12, (s) => {
                    s.i64(3, chunk.nulls);
                    if (chunk.max && chunk.min) s.binary(5, chunk.max).binary(6, chunk.min).bool(7, true).bool(8, true);
                  });
                });
              })
              .i64(2, group.chunks.reduce((sum, chunk) => sum + chunk.size, 0))
              .i64(3, group.rows),
          )
          .string(6, CREATED_BY)
          // TypeDefinedOrder for every column: min/max compare as the types do (signed integers).
          .structList(7, schema, (o) => o.struct(1, () => undefined)),
      )
      .toBytes();
  }
}

/** Writes chunk `index` of a row group's encoded chunks at the output's offset; returns it as written there. */
function writeGiven(output: ChunkOutput, given: EncodedChunks, index: number): ChunkInfo {
  const chunk = given.chunks[index];
  const offset = output.offset;
  output.write([given.bytes.subarray(chunk.offset, chunk.offset + chunk.size)]);
  return { ...chunk, offset, dataOffset: offset + chunk.dataOffset - chunk.offset };
}

/**
 * Row groups of number columns encoded apart from their file, as FinalParquetFile encodes them,
 * for a file whose writer takes them whole (`encoded` columns, FinalParquetFile.addEncoded). An
 * import's thread encodes a trace's placed spans' numbers so, while the writer's thread gathers
 * their text: at the end of a trace import that thread alone had both to do.
 */
export class NumberChunks {
  private readonly output = new ChunkBytes();
  private readonly groups: RowGroups;
  private encoder: ChunkEncoder | null = null;
  private done: EncodedChunks[] = [];

  constructor(
    private readonly columns: readonly NumericFinalColumn[],
    private readonly rowGroupRows = ROW_GROUP_ROWS,
  ) {
    this.groups = new RowGroups(
      columns.map(() => "numbers"),
      rowGroupRows,
      (values, rows) => this.encode(values as Float64Array[], rows),
    );
  }

  /** Appends `length` rows (a Float64Array per column); returns the row groups they completed. */
  append(values: readonly Float64Array[], length: number): EncodedChunks[] {
    this.groups.append(values, length);
    return this.take();
  }

  /** The last row group, if any rows are left. */
  finish(): EncodedChunks[] {
    this.groups.flush();
    return this.take();
  }

  private encode(values: readonly Float64Array[], rows: number): void {
    this.encoder ??= new ChunkEncoder(this.rowGroupRows);
    const chunks = this.columns.map((column, c) => this.encoder!.numbers(this.output, column, values[c], rows));
    this.done.push({ rows, bytes: this.output.take(), chunks });
  }

  private take(): EncodedChunks[] {
    const done = this.done;
    this.done = [];
    return done;
  }
}

export type NumericFinalColumn = Extract<FinalColumn, { type: NumericColumnType }>;

function physicalType(type: FinalColumn["type"]): number {
  return type === "INTEGER" ? INT32 : type === "BIGINT" ? INT64 : type === "DOUBLE" ? DOUBLE : BYTE_ARRAY;
}

function convertedType(type: FinalColumn["type"]): number | null {
  return type === "INTEGER" ? INT_32 : type === "BIGINT" ? INT_64 : type === "VARCHAR" ? UTF8 : null;
}

/**
 * A row group's rows of a text column, as CodedText has them: per row its dictionary id (NaN when
 * none) and where its text ends in `text`, where the row group's text starts at `start` and ends
 * at `end`.
 */
interface TextRows {
  ids: Float64Array;
  ends: Float64Array;
  text: Uint8Array;
  start: number;
  end: number;
}

/** Room for an open row group's text rows, filled by appendText. */
function textRows(rows: number): TextRows {
  return { ids: new Float64Array(rows), ends: new Float64Array(rows), text: new Uint8Array(64 * 1024), start: 0, end: 0 };
}

/** The text rows [from, to) of a coded batch, where they are. */
function textRowsOf(batch: CodedText, from: number, to: number): TextRows {
  return { ids: batch.ids.subarray(from, to), ends: batch.ends.subarray(from, to), text: batch.text, start: from > 0 ? batch.ends[from - 1] : 0, end: batch.ends[to - 1] };
}

/** Appends `rows` rows of a coded batch from its row `start` to a row group's text rows at row `at`. */
function appendText(to: TextRows, from: CodedText, start: number, rows: number, at: number): void {
  const first = start > 0 ? from.ends[start - 1] : 0;
  const last = rows > 0 ? from.ends[start + rows - 1] : first;
  to.ids.set(from.ids.subarray(start, start + rows), at);
  const shift = to.end - first;
  for (let k = 0; k < rows; k++) to.ends[at + k] = from.ends[start + k] + shift;
  const size = last - first;
  to.text = withRoom(to.text, to.end, to.end + size);
  to.text.set(from.text.subarray(first, last), to.end);
  to.end += size;
}

/** A text column's dictionary entries as PLAIN values (a 4-byte little-endian length, then UTF-8), made as the dictionary grows. */
class EntryBytes {
  private readonly values: Uint8Array[] = [];

  constructor(private readonly dictionary: TextDecoding) {}

  /** Every entry the dictionary has learned so far, by id. */
  current(): readonly Uint8Array[] {
    const { dictionary } = this.dictionary;
    for (let id = this.values.length; id < dictionary.length; id++) this.values.push(plainText(new TextEncoder().encode(dictionary[id])));
    return this.values;
  }
}

/** A text value as PLAIN holds it: its 4-byte little-endian length, then its UTF-8 bytes. */
function plainText(utf8: Uint8Array): Uint8Array {
  const value = new Uint8Array(4 + utf8.length);
  value.set(littleEndianUint32(utf8.length));
  value.set(utf8, 4);
  return value;
}

/**
 * DuckDB's CAST of a DOUBLE to BIGINT (the COPY cast staged BIGINT values so): to the nearest
 * integer, ties to even. Math.round takes ties up; an odd result of a tie is one too high.
 */
function roundHalfEven(value: number): number {
  const rounded = Math.round(value);
  return rounded - value === 0.5 && rounded % 2 !== 0 ? rounded - 1 : rounded;
}

/** The number of bits an unsigned integer below 2^64, held exactly in a double, needs. */
function bitLength(value: number): number {
  return value < TWO_32 ? 32 - Math.clz32(value) : 64 - Math.clz32(Math.floor(value / TWO_32));
}

/**
 * Encodes column chunks into a file. Its buffers are sized for one row group and reused; a page
 * is laid out in `bytes` (bounded ahead: see pageBytes) by functions that write at an offset and
 * return the next, so that no byte costs a bounds check or a call.
 */
class ChunkEncoder {
  /** A column's non-NULL values, as written, and each row's definition level (1 = a value). */
  private readonly present: Float64Array;
  private readonly presentWords: Uint32Array;
  private readonly defined: Uint8Array;
  private readonly indices: Uint32Array;
  private readonly dictionary: ValueDictionary;
  /** A block's deltas, less their least; past the last value 0. */
  private readonly deltas = new Float64Array(BLOCK_VALUES);
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  /** A text chunk's suffix lengths (DELTA_BYTE_ARRAY; its prefix lengths go in `present`), and its suffixes' bytes. */
  private readonly suffixLengths: Float64Array;
  private suffixes: Uint8Array = new Uint8Array(0);
  /** Room for the PLAIN values of a text chunk that mixes dictionary ids and text. */
  private plain: Uint8Array = new Uint8Array(0);
  /** Per dictionary id, its entry in the chunk's own dictionary (-1: none yet); the chunk's entries' ids. */
  private localOf = new Int32Array(0);
  private used = new Int32Array(0);

  constructor(rows: number) {
    this.present = new Float64Array(rows);
    this.presentWords = new Uint32Array(this.present.buffer);
    this.defined = new Uint8Array(rows);
    this.indices = new Uint32Array(rows);
    this.dictionary = new ValueDictionary(rows);
    this.suffixLengths = new Float64Array(rows);
    // A text page's two streams of lengths (see text) take at most 4 bytes a value each, with a
    // block's header and the last miniblock's padding twice: room beyond one stream of deltas.
    this.bytes = new Uint8Array(pageBytes(rows) + Math.ceil(rows / BLOCK_VALUES) * 14 + MINIBLOCK_VALUES * 8);
    this.view = new DataView(this.bytes.buffer);
  }

  /** The generation_id chunk: a one-entry dictionary, and every row pointing at it. */
  generationId(output: ChunkOutput, id: Uint8Array, rows: number): ChunkInfo {
    const dictionary = plainText(id);
    const { bytes } = this;
    let at = this.levels(rows, null);
    // Bit width 1, then one RLE run of index 0.
    bytes[at++] = 1;
    at = putVarint(bytes, at, rows * 2);
    bytes[at++] = 0;
    return this.write(output, [bytes.subarray(0, at)], RLE_DICTIONARY, rows, { values: dictionary, count: 1 }, { nulls: 0, min: id, max: id });
  }

  numbers(output: ChunkOutput, column: NumericFinalColumn, values: Float64Array, rows: number): ChunkInfo {
    const { bytes, present, defined } = this;
    const n =
      column.type === "INTEGER"
        ? presentIntegers(values, rows, present, defined)
        : column.type === "BIGINT"
          ? presentBigints(values, rows, column.nullable, present, defined)
          : presentDoubles(values, rows, column.nullable, present, defined);
    if (n < 0) throw new Error(`${column.name}: ${values[-n - 1]} is no BIGINT`);
    const nan = column.type === "DOUBLE" && !column.nullable && hasNaN(present, n);
    const min = least(present, n);
    const max = greatest(present, n);
    let at = this.levels(rows, n === rows ? null : this.defined);
    let encoding = PLAIN;
    let dictionary: { values: Uint8Array; count: number } | undefined;
    let count = 0;
    if (n === 0) {
      // Only NULLs: no values.
    } else if (column.type === "DOUBLE") {
      count = this.dictionary.build(this.presentWords, n, this.indices, n >> 1);
      if (count > 0) {
        encoding = RLE_DICTIONARY;
        dictionary = { values: this.dictionary.entryBytes(count), count };
        const width = Math.max(1, bitLength(count - 1));
        bytes[at++] = width;
        at = putHybrid(bytes, at, this.indices, n, width);
      } else {
        bytes.set(new Uint8Array(present.buffer, 0, n * 8), at);
        at += n * 8;
      }
    } else if ((count = this.dictionary.build(this.presentWords, n, this.indices, n >> 3)) > 0) {
      // Integers of few distinct values (sample weights, metric ids, frames): a dictionary, as
      // DuckDB's writer chooses; deltas of such columns can take 20 bits a value where its
      // indices take a few (a 10 M-sample profile's samples: 142 MB against DuckDB's 77.5 MB).
      encoding = RLE_DICTIONARY;
      dictionary = { values: integerEntries(this.dictionary.entryValues(count), column.type), count };
      const width = Math.max(1, bitLength(count - 1));
      bytes[at++] = width;
      at = putHybrid(bytes, at, this.indices, n, width);
    } else if (max - min <= (column.type === "INTEGER" ? INT32_MAX : EXACT_DELTA_RANGE)) {
      // Readers may decode INT32 deltas in 32-bit arithmetic (Arrow's does): values within
      // 2^31 - 1 of each other keep every delta within ±(2^31 - 1) and every packed value (a
      // delta less the block's least) below 2^32. Wider INTEGER chunks are PLAIN.
      encoding = DELTA_BINARY_PACKED;
      at = putDeltas(bytes, this.view, at, present, n, this.deltas);
    } else {
      // INTEGER values more than 2^31 - 1 apart, or BIGINT values more than 2^52 apart.
      if (column.type === "INTEGER") for (let k = 0; k < n; k++, at += 4) this.view.setInt32(at, present[k], true);
      else for (let k = 0; k < n; k++, at += 8) this.view.setBigInt64(at, BigInt(present[k]), true);
    }
    const hasRange = n > 0 && !nan;
    return this.write(output, [bytes.subarray(0, at)], encoding, rows, dictionary, {
      nulls: rows - n,
      min: hasRange ? statistic(column.type, min) : null,
      max: hasRange ? statistic(column.type, max) : null,
    });
  }

  /**
   * An OPTIONAL column's definition levels at the page's start: a 4-byte length, then the
   * RLE/bit-packed hybrid at bit width 1 of `defined` (1 = a value), or one run of 1s when every
   * row has a value (`defined` null). Returns where the values start.
   */
  private levels(rows: number, defined: Uint8Array | null): number {
    const { bytes } = this;
    let at = 4;
    if (defined === null) {
      at = putVarint(bytes, at, rows * 2);
      bytes[at++] = 1;
    } else at = putHybrid(bytes, at, defined, rows, 1);
    this.view.setUint32(0, at - 4, true);
    return at;
  }

  /**
   * A text column's chunk: dictionary-coded when every value has a dictionary id, else
   * DELTA_BYTE_ARRAY (PLAIN when all its rows are NULL).
   * `entries`: the column's dictionary entries as PLAIN values, by id.
   */
  text(output: ChunkOutput, rows: TextRows, entries: readonly Uint8Array[], count: number): ChunkInfo {
    const { bytes } = this;
    const n = definedTexts(rows.ids, rows.ends, rows.start, count, this.defined);
    const coded = countIds(rows.ids, count);
    let at = this.levels(count, n === count ? null : this.defined);
    if (n > 0 && coded === n) {
      if (this.localOf.length < entries.length) {
        this.localOf = new Int32Array(entries.length).fill(-1);
        this.used = new Int32Array(entries.length);
      }
      const used = localIndices(rows.ids, count, entries.length, this.localOf, this.used, this.indices);
      if (used < 0) throw new Error(`dictionary id ${rows.ids[-used - 1]} is not in its column's dictionary (${entries.length} entries)`);
      const values: Uint8Array[] = [];
      for (let k = 0; k < used; k++) {
        this.localOf[this.used[k]] = -1;
        values.push(entryOf(entries, this.used[k]));
      }
      const width = Math.max(1, bitLength(used - 1));
      bytes[at++] = width;
      at = putHybrid(bytes, at, this.indices, n, width);
      const page = concatBytes(values);
      return this.write(output, [bytes.subarray(0, at)], RLE_DICTIONARY, count, { values: page, count: used }, { nulls: count - n, ...textRange(page, page.length) });
    }
    // Otherwise DELTA_BYTE_ARRAY, from the values laid out as a PLAIN page has them (with no
    // ids, the rows' text is exactly that already): each value as the length of the prefix it
    // shares with the one before and the rest of it. Such a chunk's values are mostly unique (a
    // span's args, `{"i":1234}`): its min and max, which would skip nothing, are left out (finding
    // them cost 35-70 ns a value), and its values mostly differ from the one before in their last
    // bytes (220 MB trace: args 36.1 MB PLAIN, 9.4 MB so; the import's time within noise).
    const stats = { nulls: count - n, min: null, max: null };
    if (n === 0) return this.write(output, [bytes.subarray(0, at)], PLAIN, count, undefined, stats);
    const values = coded === 0 ? rows.text.subarray(rows.start, rows.end) : this.plainTexts(rows, entries, count);
    const suffixes = this.prefixCoded(values, n);
    at = putDeltas(bytes, this.view, at, this.present, n, this.deltas);
    at = putDeltas(bytes, this.view, at, this.suffixLengths, n, this.deltas);
    return this.write(output, [bytes.subarray(0, at), suffixes], DELTA_BYTE_ARRAY, count, undefined, stats);
  }

  /**
   * DELTA_BYTE_ARRAY's parts of `n` values laid out as PLAIN (4-byte length, bytes): each one's
   * prefix length shared with the value before into `present`, its suffix length into
   * `suffixLengths`; returns the suffixes' bytes, one after another.
   */
  private prefixCoded(values: Uint8Array, n: number): Uint8Array {
    const suffixes = (this.suffixes = withRoom(this.suffixes, 0, values.length));
    const { present, suffixLengths } = this;
    const words = new DataView(values.buffer, values.byteOffset, values.byteLength);
    let at = 0;
    let out = 0;
    let previous = 0;
    let previousLength = 0;
    for (let k = 0; k < n; k++) {
      const length = textLength(values, at);
      const start = at + 4;
      const shared = Math.min(length, previousLength);
      // Four bytes at a time, then byte by byte.
      let prefix = 0;
      while (prefix + 4 <= shared && words.getInt32(start + prefix) === words.getInt32(previous + prefix)) prefix += 4;
      while (prefix < shared && values[start + prefix] === values[previous + prefix]) prefix++;
      present[k] = prefix;
      suffixLengths[k] = length - prefix;
      copyBytes(values, start + prefix, suffixes, out, length - prefix);
      out += length - prefix;
      previous = start;
      previousLength = length;
      at = start + length;
    }
    return suffixes.subarray(0, out);
  }

  /** A text chunk's values as a PLAIN page holds them, ids replaced by their entries. */
  private plainTexts(rows: TextRows, entries: readonly Uint8Array[], count: number): Uint8Array {
    const { ids, ends, text } = rows;
    let size = 0;
    for (let row = 0, previous = rows.start; row < count; row++) {
      const id = ids[row];
      size += id === id ? entryOf(entries, id).length : ends[row] - previous;
      previous = ends[row];
    }
    const plain = (this.plain = withRoom(this.plain, 0, size));
    let at = 0;
    for (let row = 0, previous = rows.start; row < count; row++) {
      const id = ids[row];
      if (id === id) {
        plain.set(entries[id], at);
        at += entries[id].length;
      } else {
        for (let k = previous; k < ends[row]; k++) plain[at++] = text[k];
      }
      previous = ends[row];
    }
    return plain.subarray(0, at);
  }

  /** Writes a chunk's pages (its dictionary first, if any) to the file; `page`: the data page's bytes, in parts. */
  private write(
    output: ChunkOutput,
    page: Uint8Array[],
    encoding: number,
    rows: number,
    dictionary: { values: Uint8Array; count: number } | undefined,
    stats: { nulls: number; min: Uint8Array | null; max: Uint8Array | null },
  ): ChunkInfo {
    const parts: Uint8Array[] = [];
    const offset = output.offset;
    if (dictionary) {
      const size = dictionary.values.length;
      parts.push(
        new CompactWriter()
          .structBody((w) =>
            w
              .i32(1, DICTIONARY_PAGE)
              .i32(2, size)
              .i32(3, size)
              .struct(7, (h) => h.i32(1, dictionary.count).i32(2, PLAIN)),
          )
          .toBytes(),
        dictionary.values,
      );
    }
    const dataOffset = offset + parts.reduce((sum, part) => sum + part.length, 0);
    const size = page.reduce((sum, part) => sum + part.length, 0);
    parts.push(
      new CompactWriter()
        .structBody((w) =>
          w
            .i32(1, DATA_PAGE)
            .i32(2, size)
            .i32(3, size)
            .struct(5, (h) => h.i32(1, rows).i32(2, encoding).i32(3, RLE).i32(4, RLE)),
        )
        .toBytes(),
      ...page,
    );
    output.write(parts);
    const encodings = dictionary ? [PLAIN, RLE, RLE_DICTIONARY] : [encoding, RLE];
    return { offset, size: output.offset - offset, dataOffset, dictionary: dictionary !== undefined, encodings, ...stats };
  }
}

/*
 * The loops over a chunk's values are functions of their arrays that return a number: V8 compiles
 * such a loop while it runs the first time (on-stack replacement), and in that code whatever
 * follows the loop and has not run yet (a property read, a result object) has no type feedback;
 * on Node 20 the compiled loop then left for the interpreter at that point on every call, and a
 * running minimum that met both ±Infinity and small integers was boxed at every value.
 */

/**
 * INTEGER values as staging took them (and the appender path does): rounded, NULL when NaN or
 * beyond an int32. Fills `present` and `defined` (1 = a value); returns how many have a value.
 */
function presentIntegers(values: Float64Array, rows: number, present: Float64Array, defined: Uint8Array): number {
  let n = 0;
  for (let row = 0; row < rows; row++) {
    const value = values[row];
    if (value >= -INT32_MAX && value <= INT32_MAX) {
      defined[row] = 1;
      present[n++] = Math.round(value);
    } else defined[row] = 0;
  }
  return n;
}

/**
 * BIGINT values as the COPY cast them: ties to even; NaN NULL when nullable. A value the cast
 * refused (NaN otherwise, beyond an int64) returns -(its row + 1).
 */
function presentBigints(values: Float64Array, rows: number, nullable: boolean, present: Float64Array, defined: Uint8Array): number {
  let n = 0;
  for (let row = 0; row < rows; row++) {
    const value = values[row];
    if (value !== value && nullable) defined[row] = 0;
    else if (value >= -INT64_END && value < INT64_END) {
      defined[row] = 1;
      present[n++] = roundHalfEven(value);
    } else return -row - 1;
  }
  return n;
}

/** DOUBLE values: NaN NULL when nullable, else kept as a value (as the COPY wrote it). */
function presentDoubles(values: Float64Array, rows: number, nullable: boolean, present: Float64Array, defined: Uint8Array): number {
  let n = 0;
  for (let row = 0; row < rows; row++) {
    const value = values[row];
    if (value !== value && nullable) defined[row] = 0;
    else {
      defined[row] = 1;
      present[n++] = value;
    }
  }
  return n;
}

/**
 * A text chunk's definition levels into `defined` (1 = a value): a row has one when it has a
 * dictionary id or text (its text ends past where the previous row's did; the first row's text
 * starts at `start`). Returns how many have.
 */
function definedTexts(ids: Float64Array, ends: Float64Array, start: number, rows: number, defined: Uint8Array): number {
  let n = 0;
  let previous = start;
  for (let row = 0; row < rows; row++) {
    const id = ids[row];
    const end = ends[row];
    const value = id === id || end !== previous ? 1 : 0;
    defined[row] = value;
    n += value;
    previous = end;
  }
  return n;
}

function countIds(ids: Float64Array, rows: number): number {
  let coded = 0;
  for (let row = 0; row < rows; row++) if (ids[row] === ids[row]) coded++;
  return coded;
}

/**
 * The chunk's own dictionary: each row's id becomes the index of its entry among the ids in the
 * order first met (`used`), written to `indices` for the rows with an id. `localOf` (-1 for ids
 * not met) is left holding the chunk's entries; returns how many there are, or -(row + 1) for a
 * row whose id is not below `entries` (`localOf` then all -1 again).
 */
function localIndices(ids: Float64Array, rows: number, entries: number, localOf: Int32Array, used: Int32Array, indices: Uint32Array): number {
  let count = 0;
  let k = 0;
  for (let row = 0; row < rows; row++) {
    const id = ids[row];
    if (id !== id) continue;
    if (!(id < entries)) {
      for (let c = 0; c < count; c++) localOf[used[c]] = -1;
      return -row - 1;
    }
    let local = localOf[id];
    if (local < 0) {
      local = localOf[id] = count;
      used[count++] = id;
    }
    indices[k++] = local;
  }
  return count;
}

function entryOf(entries: readonly Uint8Array[], id: number): Uint8Array {
  const entry = entries[id];
  if (!entry) throw new Error(`dictionary id ${id} is not in its column's dictionary (${entries.length} entries)`);
  return entry;
}

/**
 * Text statistics longer than this are left out (min and max both): readers treat a chunk
 * without them as unknown, and the footer stays small whatever the values' length.
 */
const MAX_TEXT_STATISTIC = 256;

/**
 * The least and greatest of PLAIN text values (4-byte length, then UTF-8: a dictionary page's
 * entries) in `values` up to `end`, compared as unsigned bytes (for UTF-8, by code point), as Parquet orders UTF8 columns.
 * Null both when there are none or either is longer than MAX_TEXT_STATISTIC.
 */
function textRange(values: Uint8Array, end: number): { min: Uint8Array | null; max: Uint8Array | null } {
  let minAt = -1;
  let minLength = 0;
  let maxAt = -1;
  let maxLength = 0;
  for (let at = 0; at < end; ) {
    const length = textLength(values, at);
    at += 4;
    if (minAt < 0 || compareBytes(values, at, length, minAt, minLength) < 0) {
      minAt = at;
      minLength = length;
    }
    if (maxAt < 0 || compareBytes(values, at, length, maxAt, maxLength) > 0) {
      maxAt = at;
      maxLength = length;
    }
    at += length;
  }
  if (minAt < 0 || minLength > MAX_TEXT_STATISTIC || maxLength > MAX_TEXT_STATISTIC) return { min: null, max: null };
  return { min: values.slice(minAt, minAt + minLength), max: values.slice(maxAt, maxAt + maxLength) };
}

/** Compares two byte strings of `bytes` as unsigned bytes, the shorter first when one begins the other. */
function compareBytes(bytes: Uint8Array, a: number, aLength: number, b: number, bLength: number): number {
  const length = Math.min(aLength, bLength);
  for (let k = 0; k < length; k++) {
    const difference = bytes[a + k] - bytes[b + k];
    if (difference !== 0) return difference;
  }
  return aLength - bLength;
}

function hasNaN(values: Float64Array, n: number): boolean {
  for (let k = 0; k < n; k++) if (values[k] !== values[k]) return true;
  return false;
}

/** The least of the first `n` values, NaN left out (Infinity when none). */
function least(values: Float64Array, n: number): number {
  let min = Infinity;
  for (let k = 0; k < n; k++) if (values[k] < min) min = values[k];
  return min;
}

function greatest(values: Float64Array, n: number): number {
  let max = -Infinity;
  for (let k = 0; k < n; k++) if (values[k] > max) max = values[k];
  return max;
}

/**
 * DELTA_BINARY_PACKED of the `n` present values, which lie within EXACT_DELTA_RANGE of each
 * other: a header (block size, miniblocks per block, count, first value), then per block of 128
 * deltas their least (zigzag), each miniblock's bit width, and the deltas less the least, 32 to
 * a miniblock at its bit width, least significant bit first: exactly `width` 32-bit words.
 */
function putDeltas(bytes: Uint8Array, view: DataView, at: number, present: Float64Array, n: number, deltas: Float64Array): number {
  at = putVarint(bytes, at, BLOCK_VALUES);
  at = putVarint(bytes, at, MINIBLOCKS);
  at = putVarint(bytes, at, n);
  at = putZigzag(bytes, at, present[0]);
  for (let first = 1; first < n; first += BLOCK_VALUES) {
    const count = Math.min(BLOCK_VALUES, n - first);
    let smallest = Infinity;
    for (let k = 0; k < count; k++) {
      const delta = present[first + k] - present[first + k - 1];
      deltas[k] = delta;
      if (delta < smallest) smallest = delta;
    }
    at = putZigzag(bytes, at, smallest);
    const widthsAt = at;
    at += MINIBLOCKS;
    for (let m = 0; m < MINIBLOCKS; m++) {
      const from = m * MINIBLOCK_VALUES;
      // Miniblocks past the last value are left out (width 0); their widths are read and ignored.
      const to = Math.min(count, from + MINIBLOCK_VALUES);
      let most = 0;
      for (let k = from; k < from + MINIBLOCK_VALUES; k++) {
        const delta = k < to ? deltas[k] - smallest : 0;
        deltas[k] = delta;
        if (delta > most) most = delta;
      }
      const width = bitLength(most);
      bytes[widthsAt + m] = width;
      if (width > 32) at = putWideMiniblock(view, at, deltas, from, width);
      else if (width > 0) {
        let word = 0;
        let bits = 0;
        for (let k = from; k < from + MINIBLOCK_VALUES; k++) {
          // A delta below 2^32: its bits as an int32's.
          const delta = deltas[k];
          word |= delta << bits;
          bits += width;
          if (bits >= 32) {
            view.setInt32(at, word, true);
            at += 4;
            bits -= 32;
            // `| 0` keeps the word an int32 (V8 boxes a uint32 past 2^31).
            word = bits > 0 ? (delta >>> (width - bits)) | 0 : 0;
          }
        }
      }
    }
  }
  return at;
}

/**
 * The most bytes a page of `rows` rows takes: definition levels (at most a byte per row, runs and
 * all), then values: 8 bytes each, or as deltas at most 8 bytes each and 14 per block of 128 plus
 * the last miniblock's padding to 32 values (8 bytes each at most), or dictionary indices (16 bits
 * at most, see ValueDictionary) with their runs' headers.
 */
function pageBytes(rows: number): number {
  return 4 + rows + 16 + rows * 8 + Math.ceil(rows / BLOCK_VALUES) * 14 + MINIBLOCK_VALUES * 8 + 64;
}

/** An integer column's dictionary entries (integers held in doubles) as a PLAIN page's INT32 or INT64 values. */
function integerEntries(values: Float64Array, type: NumericColumnType): Uint8Array {
  const entries = type === "INTEGER" ? Int32Array.from(values) : BigInt64Array.from(values, (value) => BigInt(value));
  return new Uint8Array(entries.buffer);
}

/** A min or max as PLAIN's little-endian bytes of the column's type. */
function statistic(type: NumericColumnType, value: number): Uint8Array {
  const bytes = new Uint8Array(type === "INTEGER" ? 4 : 8);
  const view = new DataView(bytes.buffer);
  if (type === "INTEGER") view.setInt32(0, value, true);
  else if (type === "BIGINT") view.setBigInt64(0, BigInt(value), true);
  else view.setFloat64(0, value, true);
  return bytes;
}

/** A miniblock of deltas wider than 32 bits (BIGINT values far apart): each as its low word's 32 bits and then its high word's. */
function putWideMiniblock(view: DataView, at: number, deltas: Float64Array, from: number, width: number): number {
  const words = new Uint32Array(width + 1);
  let bit = 0;
  for (let k = from; k < from + MINIBLOCK_VALUES; k++) {
    const delta = deltas[k];
    // `>>> 0` takes a double's integer modulo 2^32: the low word.
    put(words, delta >>> 0, 32, bit);
    put(words, Math.floor(delta / TWO_32), width - 32, bit + 32);
    bit += width;
  }
  for (let w = 0; w < width; w++, at += 4) view.setUint32(at, words[w], true);
  return at;
}

/** ORs a value of `width` bits (at most 32, the value below 2^width) into `words` at bit `bit`. */
function put(words: Uint32Array, value: number, width: number, bit: number): void {
  const word = bit >>> 5;
  const shift = bit & 31;
  words[word] |= value << shift;
  if (shift + width > 32) words[word + 1] |= value >>> (32 - shift);
}

/** A ULEB128 varint of a non-negative integer up to 2^53 at `at`; returns the next offset. */
function putVarint(bytes: Uint8Array, at: number, value: number): number {
  while (value >= 128) {
    bytes[at++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  bytes[at++] = value;
  return at;
}

/** An int64's zigzag varint (BigInt beyond 2^52, where doubles would lose the odd numbers). */
function putZigzag(bytes: Uint8Array, at: number, value: number): number {
  if (Math.abs(value) <= EXACT_DELTA_RANGE) return putVarint(bytes, at, value >= 0 ? value * 2 : -value * 2 - 1);
  let zigzag = value >= 0 ? BigInt(value) * 2n : -BigInt(value) * 2n - 1n;
  while (zigzag >= 128n) {
    bytes[at++] = Number(zigzag & 127n) | 128;
    zigzag >>= 7n;
  }
  bytes[at++] = Number(zigzag);
  return at;
}

/**
 * Parquet's RLE/bit-packed hybrid of `n` values of `width` bits (at most 24) at `at`: a run of 8
 * or more equal values starting where a group of 8 would start is an RLE run, other values go in
 * groups of 8 bit-packed; the last group is padded with zeros (a reader stops at the page's count).
 */
function putHybrid(bytes: Uint8Array, at: number, values: Uint8Array | Uint32Array, n: number, width: number): number {
  const valueBytes = (width + 7) >> 3;
  let packedFrom = 0;
  let groups = 0;
  let i = 0;
  while (i < n) {
    const value = values[i];
    let end = i + 1;
    while (end < n && values[end] === value) end++;
    if (end - i >= 8 || end === n) {
      at = putPacked(bytes, at, values, packedFrom, groups, width, n);
      groups = 0;
      at = putVarint(bytes, at, (end - i) * 2);
      for (let b = 0; b < valueBytes; b++) bytes[at++] = (value >>> (8 * b)) & 0xff;
      i = end;
      packedFrom = i;
    } else {
      groups++;
      i += 8;
    }
  }
  return putPacked(bytes, at, values, packedFrom, groups, width, n);
}

/** A bit-packed run at `at`: `groups` groups of 8 values from `from`, least significant bit first, zeros past `n`. */
function putPacked(bytes: Uint8Array, at: number, values: Uint8Array | Uint32Array, from: number, groups: number, width: number, n: number): number {
  if (groups === 0) return at;
  at = putVarint(bytes, at, groups * 2 + 1);
  const end = from + groups * 8;
  const last = Math.min(end, n);
  let pending = 0;
  let bits = 0;
  for (let k = from; k < last; k++) {
    pending |= values[k] << bits;
    bits += width;
    while (bits >= 8) {
      bytes[at++] = pending & 0xff;
      pending >>>= 8;
      bits -= 8;
    }
  }
  // The padding's bits: what is pending, then zeros up to the groups' whole bytes.
  for (let left = bits + (end - last) * width; left > 0; left -= 8) {
    bytes[at++] = pending & 0xff;
    pending >>>= 8;
  }
  return at;
}

/**
 * The distinct values of a column chunk, by their bits as doubles (so -0 and 0, and NaNs, stay
 * as they are), in an open-addressing table; gives up past `limit` entries (a larger dictionary
 * saves little over PLAIN, or over deltas).
 */
class ValueDictionary {
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly entries: Uint32Array;

  /** `rows`: a row group's, whose values have at most half as many entries. */
  constructor(rows: number) {
    const limit = rows >> 1;
    let size = 16;
    while (size < limit * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    this.entries = new Uint32Array(Math.max(1, limit) * 2);
  }

  /** Each of the `n` values' entry into `indices`; returns the entries, or 0 past `limit` of them. */
  build(words: Uint32Array, n: number, indices: Uint32Array, limit: number): number {
    const { slots, mask, entries } = this;
    slots.fill(0);
    let count = 0;
    let lastLow = -1;
    let lastHigh = -1;
    let lastIndex = 0;
    for (let k = 0; k < n; k++) {
      const low = words[2 * k];
      const high = words[2 * k + 1];
      // Runs of one value (zeros, mostly) skip the table.
      if (low === lastLow && high === lastHigh) {
        indices[k] = lastIndex;
        continue;
      }
      const hash = Math.imul(low ^ Math.imul(high, 0x9e3779b1), 0x85ebca77);
      let slot = (hash ^ (hash >>> 16)) & mask;
      for (;;) {
        const entry = slots[slot] - 1;
        if (entry < 0) {
          if (count === limit) return 0;
          entries[2 * count] = low;
          entries[2 * count + 1] = high;
          slots[slot] = ++count;
          lastIndex = count - 1;
          break;
        }
        if (entries[2 * entry] === low && entries[2 * entry + 1] === high) {
          lastIndex = entry;
          break;
        }
        slot = (slot + 1) & mask;
      }
      indices[k] = lastIndex;
      lastLow = low;
      lastHigh = high;
    }
    return count;
  }

  /** The first `count` entries as a PLAIN dictionary page's values. */
  entryBytes(count: number): Uint8Array {
    return new Uint8Array(this.entries.buffer, 0, count * 8);
  }

  /** The first `count` entries as the doubles they are. */
  entryValues(count: number): Float64Array {
    return new Float64Array(this.entries.buffer, 0, count);
  }
}
