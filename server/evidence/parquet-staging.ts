import type { CodedText } from "../../analysis/evidence/text-coding";
import { BYTE_ARRAY, ByteOutput, CompactWriter, DATA_PAGE, DOUBLE, INT32, littleEndianUint32, OPTIONAL, ParquetFileOutput, PLAIN, REQUIRED, RLE, UNCOMPRESSED, UTF8 } from "./parquet-format";

/**
 * DuckDB's layout of a table filled by its appender, which staged files copy. The final COPY's
 * row groups fall where the chunks it reads fill ROW_GROUP_ROWS, and its chunks end where the
 * staged row groups end; so a file with the table's row groups gives the same Parquet bytes as
 * the table did. The appender takes 2,048-row chunks (the last of a batch shorter) and flushes
 * once it holds APPENDER_FLUSH_ROWS or more rows: a flush starts new row groups of ROW_GROUP_ROWS,
 * except the last flush (closing the appender) when smaller than a row group, which fills up
 * the table's last row group first. (Measured on DuckDB 1.5 with pragma_storage_info; the tests
 * compare the files with the appender's, so a DuckDB that lays tables out otherwise shows there.)
 */
const VECTOR_SIZE = 2048;
const ROW_GROUP_ROWS = 122_880;
const APPENDER_FLUSH_ROWS = 100 * VECTOR_SIZE;
/** Rows buffered at most: a row group held back, a row group, and a chunk. */
const BUFFER_ROWS = 2 * ROW_GROUP_ROWS + VECTOR_SIZE;

/**
 * How a staged column is stored. DOUBLE: required doubles as given, NaN standing for NULL as in
 * the batches (the COPY casts them as it did the staging table's). INT32: an optional int32, each
 * value rounded, or NULL when NaN or beyond an int32 (what the appender path stores for INTEGER
 * columns, see fillInteger): the COPY reads them as they are, where turning doubles into integers
 * in SQL cost it some 40 ns per value (0.5 s for the 220 MB folded file's stacks). TEXT: optional
 * UTF-8 text, null for NULL (span drafts' text, which the appender took a native call per string
 * and a copy into its table for).
 */
export type StagedColumnType = "DOUBLE" | "INT32" | "TEXT";

export interface StagedColumn {
  name: string;
  type: StagedColumnType;
}

const INT32_MAX = 2 ** 31 - 1;
/** Marks a NULL in an INT32 column's buffer: rounding within ±INT32_MAX never gives it. */
const NULL_INT32 = -(2 ** 31);

interface ColumnChunkInfo {
  offset: number;
  size: number;
}

interface RowGroupInfo {
  rows: number;
  chunks: ColumnChunkInfo[];
}

/**
 * Text buffered for a row group at most, per text column: past it the buffered rows are written
 * at once as a row group of their own, so that a trace of long args does not hold gigabytes here.
 */
const TEXT_BYTES_PER_ROW_GROUP = 64 * 1024 * 1024;

/**
 * A staging table written straight to a plain Parquet file: PLAIN encoding, no compression, one
 * data page per column chunk. Staging a number costs a copy (DOUBLE) or a rounding (INT32), where
 * DuckDB's appender took about 20 ns (1.4 s of the 220 MB folded import's writer thread), and the
 * rows wait on disk instead of in memory. Row groups are cut where the appender would have cut
 * the table's (see APPENDER_FLUSH_ROWS), except that a table with text cuts one early when its
 * text passes `textBytesPerRowGroup` (its output must not follow the staged row groups: span
 * drafts are joined and sorted). `finish` writes the last ones and the footer.
 */
export class StagedRows {
  /** Made by the first rows: a table that stays empty costs no buffers. */
  private buffers: (Float64Array | Int32Array | TextBuffer)[] = [];
  /** Rows in the buffers: `held` of them the last row group of the previous flush, still open. */
  private buffered = 0;
  private held = 0;
  /** Rows since the appender's last flush. */
  private flushRows = 0;
  private readonly output: ParquetFileOutput;
  private readonly rowGroups: RowGroupInfo[] = [];
  private finished = false;
  private rows = 0;

  constructor(
    readonly file: string,
    private readonly columns: readonly StagedColumn[],
    private readonly textBytesPerRowGroup = TEXT_BYTES_PER_ROW_GROUP,
  ) {
    this.output = new ParquetFileOutput(file);
  }

  /**
   * Appends `length` rows, a column of values per staged column in their order: a Float64Array
   * (NaN for NULL) for numbers, coded text for TEXT (its rows held as text; a row coded by an id
   * is NULL here, its id staged in a column of its own).
   */
  append(values: readonly (Float64Array | CodedText)[], length: number): void {
    if (length > 0 && this.buffers.length === 0) {
      this.buffers = this.columns.map((c) => (c.type === "DOUBLE" ? new Float64Array(BUFFER_ROWS) : c.type === "INT32" ? new Int32Array(BUFFER_ROWS) : new TextBuffer()));
    }
    for (let start = 0; start < length; start += VECTOR_SIZE) {
      const rows = Math.min(VECTOR_SIZE, length - start);
      for (let c = 0; c < this.columns.length; c++) {
        const buffer = this.buffers[c];
        if (buffer instanceof Float64Array) buffer.set((values[c] as Float64Array).subarray(start, start + rows), this.buffered);
        else if (buffer instanceof Int32Array) roundIntegers(buffer, this.buffered, values[c] as Float64Array, start, rows);
        else buffer.append(this.buffered, values[c] as CodedText, start, rows);
      }
      this.buffered += rows;
      this.flushRows += rows;
      // This flush will fill a row group: it starts its own, and the held one is complete.
      if (this.held > 0 && this.flushRows >= ROW_GROUP_ROWS) this.writeRowGroup(this.held);
      if (this.held === 0 && this.buffered >= ROW_GROUP_ROWS) this.writeRowGroup(ROW_GROUP_ROWS);
      if (this.flushRows >= APPENDER_FLUSH_ROWS) {
        this.held = this.buffered;
        this.flushRows = 0;
      }
      if (this.buffered > 0 && this.textBytesHeld() >= this.textBytesPerRowGroup) this.writeRowGroup(this.buffered);
    }
    this.rows += length;
  }

  /** Writes the last row groups and the footer, and closes the file; once. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    // The last flush: less than a row group fills up the held one, as far as it goes.
    while (this.buffered > 0) this.writeRowGroup(Math.min(this.buffered, ROW_GROUP_ROWS));
    this.output.end(this.footer());
  }

  /** Closes the file, finished or not (the writer removes it with its staging directory). */
  close(): void {
    this.output.close();
  }

  /** The most text bytes a column holds for the buffered rows. */
  private textBytesHeld(): number {
    let most = 0;
    for (const buffer of this.buffers) if (buffer instanceof TextBuffer) most = Math.max(most, buffer.bytesHeld(this.buffered));
    return most;
  }

  /** Writes the first `rows` buffered rows as a row group, and moves the rest to the front. */
  private writeRowGroup(rows: number): void {
    const parts: Uint8Array[] = [];
    const chunks: ColumnChunkInfo[] = [];
    let offset = this.output.offset;
    for (const buffer of this.buffers) {
      const page = buffer instanceof Float64Array ? [bytesOf(buffer, rows)] : buffer instanceof Int32Array ? integerPage(buffer, rows) : buffer.page(rows);
      const size = page.reduce((sum, part) => sum + part.length, 0);
      const header = new CompactWriter()
        .structBody((w) =>
          w
            .i32(1, DATA_PAGE)
            .i32(2, size)
            .i32(3, size)
            .struct(5, (h) => h.i32(1, rows).i32(2, PLAIN).i32(3, RLE).i32(4, RLE)),
        )
        .toBytes();
      parts.push(header, ...page);
      chunks.push({ offset, size: header.length + size });
      offset += header.length + size;
    }
    this.output.write(parts);
    this.rowGroups.push({ rows, chunks });
    for (const buffer of this.buffers) {
      if (buffer instanceof TextBuffer) buffer.shift(rows, this.buffered);
      else buffer.copyWithin(0, rows, this.buffered);
    }
    this.buffered -= rows;
    this.held = 0;
  }

  private footer(): Uint8Array {
    return new CompactWriter()
      .structBody((w) =>
        w
          .i32(1, 1)
          .structList(2, [null, ...this.columns], (e, column) => {
            if (column === null) e.string(4, "schema").i32(5, this.columns.length);
            else {
              e.i32(1, physicalType(column.type)).i32(3, column.type === "DOUBLE" ? REQUIRED : OPTIONAL).string(4, column.name);
              // Without it a reader takes the bytes for a BLOB.
              if (column.type === "TEXT") e.i32(6, UTF8);
            }
          })
          .i64(3, this.rows)
          .structList(4, this.rowGroups, (g, group) =>
            g
              .structList(1, group.chunks.map((chunk, c) => ({ chunk, column: this.columns[c] })), (cc, { chunk, column }) => {
                cc.i64(2, chunk.offset).struct(3, (m) =>
                  m
                    .i32(1, physicalType(column.type))
                    .i32List(2, [PLAIN])
                    .stringList(3, [column.name])
                    .i32(4, UNCOMPRESSED)
                    .i64(5, group.rows)
                    .i64(6, chunk.size)
                    .i64(7, chunk.size)
                    .i64(9, chunk.offset),
                );
              })
              .i64(2, group.chunks.reduce((sum, chunk) => sum + chunk.size, 0))
              .i64(3, group.rows),
          ),
      )
      .toBytes();
  }
}

function physicalType(type: StagedColumnType): number {
  return type === "DOUBLE" ? DOUBLE : type === "INT32" ? INT32 : BYTE_ARRAY;
}

function bytesOf(values: Float64Array | Int32Array, length: number): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, length * values.BYTES_PER_ELEMENT);
}

/** Rounds `rows` values of `source` from `start` into `buffer` from `at`: NULL when NaN or beyond an int32. */
function roundIntegers(buffer: Int32Array, at: number, source: Float64Array, start: number, rows: number): void {
  for (let row = 0; row < rows; row++) {
    const value = source[start + row];
    // False for NaN as for values beyond an int32.
    buffer[at + row] = value >= -INT32_MAX && value <= INT32_MAX ? Math.round(value) : NULL_INT32;
  }
}

/**
 * An optional column's definition levels: a 4-byte length, then the RLE/bit-packed hybrid at bit
 * width 1. Without NULLs (`defined` null) one run of 1s; with some, one bit-packed run of a bit
 * per row (`defined`, padded to a byte: a reader stops at the page's value count).
 */
function definitionLevels(rows: number, defined: Uint8Array | null): Uint8Array[] {
  const header = new ByteOutput();
  if (defined === null) {
    header.varint(rows * 2);
    header.byte(1);
    return [littleEndianUint32(header.length), header.toBytes()];
  }
  header.varint(defined.length * 2 + 1);
  return [littleEndianUint32(header.length + defined.length), header.toBytes(), defined];
}

/** An INT32 column's data page: its definition levels and its non-NULL values. */
function integerPage(buffer: Int32Array, rows: number): Uint8Array[] {
  let nulls = 0;
  for (let row = 0; row < rows; row++) if (buffer[row] === NULL_INT32) nulls++;
  if (nulls === 0) return [...definitionLevels(rows, null), bytesOf(buffer, rows)];
  const defined = new Uint8Array(Math.ceil(rows / 8));
  const kept = new Int32Array(rows - nulls);
  let k = 0;
  for (let row = 0; row < rows; row++) {
    const value = buffer[row];
    if (value === NULL_INT32) continue;
    defined[row >> 3] |= 1 << (row & 7);
    kept[k++] = value;
  }
  return [...definitionLevels(rows, defined), bytesOf(kept, kept.length)];
}

/**
 * A TEXT column's buffered rows, as their page's values (a 4-byte length and the UTF-8 bytes each,
 * nothing for NULL): coded text arrives in that form, and is copied in as it is.
 */
class TextBuffer {
  private bytes = new Uint8Array(1 << 20);
  /** Per buffered row, where its value ends in `bytes`, and 1 when it is NULL. */
  private readonly ends = new Int32Array(BUFFER_ROWS);
  private readonly nulls = new Uint8Array(BUFFER_ROWS);

  /** Copies in `rows` rows of `source` from `start`, as buffered rows from `at`. */
  append(at: number, source: CodedText, start: number, rows: number): void {
    const end = this.bytesHeld(at);
    const from = start > 0 ? source.ends[start - 1] : 0;
    const to = source.ends[start + rows - 1];
    // Offsets and page sizes are int32 (StagedRows cuts row groups long before, see textBytesPerRowGroup).
    if (end + (to - from) > INT32_MAX) throw new Error(`a staged text page would pass 2 GiB (${to - from} bytes of text in ${rows} rows)`);
    if (end + (to - from) > this.bytes.length) this.grow(end + (to - from));
    this.bytes.set(source.text.subarray(from, to), end);
    let previous = from;
    for (let row = 0; row < rows; row++) {
      const next = source.ends[start + row];
      this.nulls[at + row] = next === previous ? 1 : 0;
      this.ends[at + row] = end + (next - from);
      previous = next;
    }
  }

  /** The bytes the first `rows` rows' values take. */
  bytesHeld(rows: number): number {
    return rows > 0 ? this.ends[rows - 1] : 0;
  }

  /** The data page of the first `rows` rows: definition levels, then the values. */
  page(rows: number): Uint8Array[] {
    let nulls = 0;
    for (let row = 0; row < rows; row++) nulls += this.nulls[row];
    let defined: Uint8Array | null = null;
    if (nulls > 0) {
      defined = new Uint8Array(Math.ceil(rows / 8));
      for (let row = 0; row < rows; row++) if (this.nulls[row] === 0) defined[row >> 3] |= 1 << (row & 7);
    }
    return [...definitionLevels(rows, defined), this.bytes.subarray(0, this.ends[rows - 1])];
  }

  /** Drops the first `rows` of the `buffered` rows, moving the others to the front. */
  shift(rows: number, buffered: number): void {
    const cut = this.ends[rows - 1];
    this.bytes.copyWithin(0, cut, buffered > 0 ? this.ends[buffered - 1] : cut);
    for (let row = rows; row < buffered; row++) this.ends[row - rows] = this.ends[row] - cut;
    this.nulls.copyWithin(0, rows, buffered);
  }

  private grow(needed: number): void {
    const grown = new Uint8Array(Math.min(INT32_MAX, Math.max(needed, this.bytes.length * 2)));
    grown.set(this.bytes);
    this.bytes = grown;
  }
}
