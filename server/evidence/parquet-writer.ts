import type { DuckDBAppender, DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBType, DuckDBValue } from "@duckdb/node-api";
import type * as DuckDbBindings from "@duckdb/node-bindings";
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { DRAFT_TABLES, isNumericColumn, STAGING_TABLES, type BatchSink, type RowBatch, type StagingTableName } from "../../analysis/evidence/builder";
import { isCodedText, textAt, TextDecoding, type CodedText } from "../../analysis/evidence/text-coding";
import { TABLES, TABLE_NAMES, type ColumnSpec, type TableName } from "../../analysis/evidence/schema";
import type { GenerationFile } from "../domain/models";
import type { ObjectStore } from "../store/object-store";
import { loadDuckDb, openDuckDb, sqlString, type DuckDbModules } from "./duckdb";
import { FinalParquetFile, NumberChunks, type EncodedChunks, type FinalColumn, type NumericColumnType, type NumericFinalColumn } from "./parquet-final";
import { DRAFT_TEXT_COLUMNS, SpanDrafts } from "./span-drafts";

/** DuckDB's packages, set by the first `ParquetGenerationWriter.open` (they load on first use). */
let api: DuckDbModules["api"];
let duckdb: typeof DuckDbBindings;

const VECTOR_SIZE = 2048;
/**
 * DuckDB threads of a writer: a COPY that sorts spans (given whole, or placed out of order) or
 * joins drafts to places (without final files) takes about half as long on two as on one.
 */
const WRITER_THREADS = 2;
const INT32_MAX = 2 ** 31 - 1;

/**
 * Staged rows of one table beyond which they are written out to a part file and the table starts
 * empty again: an in-memory DuckDB keeps table data in memory whatever its memory limit, so a
 * 1 GB input's millions of rows would otherwise all stay resident. (Output tables of numbers and
 * a trace's drafted spans are not staged: see writtenAsFinal and SpanDrafts.)
 */
const SPILL_ROWS = 4_000_000;

const integers = new Int32Array(VECTOR_SIZE);
const validity = new Uint8Array(VECTOR_SIZE / 8);

/** Sets a vector's validity mask (bit set = valid) from `mask`. */
function setValidity(vector: DuckDbBindings.Vector, mask: Uint8Array): void {
  duckdb.vector_ensure_validity_writable(vector);
  duckdb.copy_data_to_vector_validity(vector, 0, mask.buffer as ArrayBuffer, mask.byteOffset, mask.byteLength);
}

/** Marks `invalid` rows of a vector NULL (the others stay valid). */
function setNulls(vector: DuckDbBindings.Vector, invalid: number[]): void {
  validity.fill(0xff);
  for (const row of invalid) validity[row >> 3] &= ~(1 << (row & 7));
  setValidity(vector, validity);
}

/**
 * An INTEGER vector from `rows` values of `source` at `start`. Observed values (a line number) can
 * be fractional or out of range: rounded, or NULL (as is NaN).
 */
function fillInteger(vector: DuckDbBindings.Vector, source: Float64Array, start: number, rows: number): void {
  const invalid: number[] = [];
  for (let row = 0; row < rows; row++) {
    const value = source[start + row];
    if (value === value && Math.abs(value) <= INT32_MAX) integers[row] = Math.round(value);
    else {
      integers[row] = 0;
      invalid.push(row);
    }
  }
  duckdb.copy_data_to_vector(vector, 0, integers.buffer, 0, rows * 4);
  if (invalid.length) setNulls(vector, invalid);
}

/** A vector's doubles for the scratch copy of those of a batch in shared memory. */
const doubles = new Float64Array(VECTOR_SIZE);

function fillDoubles(vector: DuckDbBindings.Vector, source: Float64Array, start: number, rows: number): void {
  // The binding copies from an ArrayBuffer only: a batch read in the writer thread's ring (see BatchRing) lies in a SharedArrayBuffer.
  if (source.buffer instanceof ArrayBuffer) return duckdb.copy_data_to_vector(vector, 0, source.buffer, source.byteOffset + start * 8, rows * 8);
  doubles.set(source.subarray(start, start + rows));
  duckdb.copy_data_to_vector(vector, 0, doubles.buffer, 0, rows * 8);
}

/**
 * Text columns arrive coded (see text-coding.ts) and are staged as they come: each as its text
 * column and its dictionary id beside it. Ids are decoded at COPY by indexing a list literal of
 * the dictionary: a plain projection, so row order and the files' bytes are as if the text had
 * been staged.
 */
function decodeSql(dictionary: readonly string[], name: string): string {
  const text = `"${name}"`;
  if (dictionary.length === 0) return text;
  return `CASE WHEN "${name}${ID_SUFFIX}" IS NULL THEN ${text} ELSE [${dictionary.map(sqlString).join(", ")}]["${name}${ID_SUFFIX}" + 1] END`;
}

/** Suffix of a text column's staged dictionary id. */
const ID_SUFFIX = "__id";

const textValidity = new Uint8Array(VECTOR_SIZE / 8);
const idValidity = new Uint8Array(VECTOR_SIZE / 8);

/** A text column's two vectors from `rows` rows of a coded batch at `start`: the text where a row has text, the id where it has one. */
function fillText(text: DuckDbBindings.Vector, ids: DuckDbBindings.Vector, source: CodedText, start: number, rows: number): void {
  textValidity.fill(0);
  idValidity.fill(0);
  let coded = 0;
  let texts = 0;
  for (let row = 0; row < rows; row++) {
    const id = source.ids[start + row];
    // An id is not NaN.
    if (id === id) {
      integers[row] = id;
      idValidity[row >> 3] |= 1 << (row & 7);
      coded++;
      continue;
    }
    const value = textAt(source, start + row);
    if (value !== null) {
      duckdb.vector_assign_string_element(text, row, value);
      textValidity[row >> 3] |= 1 << (row & 7);
      texts++;
    }
  }
  if (coded > 0) duckdb.copy_data_to_vector(ids, 0, integers.buffer, 0, rows * 4);
  if (coded < rows) setValidity(ids, idValidity);
  if (texts < rows) setValidity(text, textValidity);
}

/** A staging table's columns: each text column twice, its text and then its dictionary id. */
function stagingColumns(table: StagingTableName): { name: string; sql: string; type: DuckDBType }[] {
  return STAGING_TABLES[table].flatMap((c) => {
    const staged = { name: c.name, sql: stagingSql(c), type: stagingType(c) };
    return c.type === "VARCHAR" ? [staged, { name: `${c.name}${ID_SUFFIX}`, sql: "INTEGER", type: api.INTEGER }] : [staged];
  });
}

function createTableSql(table: StagingTableName): string {
  return `CREATE TABLE "${table}" (${stagingColumns(table).map((c) => `"${c.name}" ${c.sql}`).join(", ")})`;
}

/**
 * Staging types: INTEGER columns as INTEGER (NaN becomes NULL on the way in); BIGINT and DOUBLE as
 * DOUBLE, copied without conversion (NaN = NULL) and cast on COPY. Narrower staging appends
 * faster: DuckDB's appender moves half the bytes for an INTEGER column.
 */
function stagingType(c: ColumnSpec): DuckDBType {
  if (c.type === "INTEGER") return api.INTEGER;
  if (isNumericColumn(c.type)) return api.DOUBLE;
  return c.type === "BOOLEAN" ? api.BOOLEAN : api.VARCHAR;
}

function stagingSql(c: ColumnSpec): string {
  if (c.type === "INTEGER") return "INTEGER";
  return isNumericColumn(c.type) ? "DOUBLE" : c.type;
}

/** A non-text column's value as written to Parquet: numbers in their declared type, NaN turned back into NULL. */
function numericValueSql(c: ColumnSpec): string {
  const name = `"${c.name}"`;
  if (!isNumericColumn(c.type) || c.type === "INTEGER") return name;
  const cast = c.type === "DOUBLE" ? name : `CAST(${name} AS ${c.type})`;
  return c.nullable ? `CASE WHEN isnan(${name}) THEN NULL ELSE ${cast} END` : cast;
}

/**
 * Rows per row group: smaller for spans, whose time-window queries read whole row groups — a
 * window then decodes about 16 k spans instead of 123 k.
 */
const ROW_GROUP_SIZE: Partial<Record<TableName, number>> = { spans: 16_384 };

/**
 * Row order in the Parquet files: spans by start time, so that a time window's query skips row
 * groups by their min/max statistics instead of scanning every span. The keys are unique (span_id is).
 */
const SORT_ORDER: Partial<Record<TableName, string[]>> = {
  spans: ["start_ns", "track_id", "span_id"],
};

/**
 * Output tables written straight into their final file as their rows arrive (FinalParquetFile),
 * with no staging and no COPY: those of numbers only, in the order given (no SORT_ORDER). On the
 * 220 MB folded stacks that is stacks, stack_totals and samples, whose COPYs took 1-1.5 s of CPU.
 */
function writtenAsFinal(table: StagingTableName): boolean {
  return table in TABLES && !SORT_ORDER[table as TableName] && STAGING_TABLES[table].every((c) => isNumericColumn(c.type));
}

/**
 * Whether rows keyed (start, track, span) come in that order after `last`, the previous row's key,
 * which is then set to the batch's last key. Keys are unique (span ids are): an equal one is out
 * of order too.
 */
function continuesInOrder(starts: Float64Array, tracks: Float64Array, spans: Float64Array, length: number, last: Float64Array): boolean {
  let start = last[0];
  let track = last[1];
  let span = last[2];
  for (let row = 0; row < length; row++) {
    const s = starts[row];
    const t = tracks[row];
    const p = spans[row];
    if (s < start || (s === start && (t < track || (t === track && p <= span)))) return false;
    start = s;
    track = t;
    span = p;
  }
  last[0] = start;
  last[1] = track;
  last[2] = span;
  return true;
}

/**
 * The columns of spans whose chunks a writer on another thread gets encoded by its caller (see
 * placedNumberChunks), so that the two threads share the spans file's work while places come:
 * the writer also gathers and encodes the text. Measured on the 220 MB trace, summing the
 * writer's time per batch of places and the caller's time waiting for it (two imports each):
 * with span, parent and start encoded by the caller, the writer took 840 and 694 ms and the
 * caller waited 336 and 157 ms; with track and depth as well, 597-676 ms and 72-96 ms; with
 * duration too, the caller became the busier (its encoding 541-603 ms, against 251-307 ms).
 * End to end the three were within this machine's noise (three alternating imports each:
 * medians 4.45, 4.49 and 4.63 s); the sums show where the time goes.
 */
const ENCODED_BY_CALLER = ["span_id", "parent_span_id", "start_ns", "track_id", "depth"];
const PLACED_NUMBERS: NumericFinalColumn[] = TABLES.spans.filter((c) => ENCODED_BY_CALLER.includes(c.name)).map((c) => ({ name: c.name, type: c.type as NumericColumnType, nullable: c.nullable }));

/**
 * An encoder of span places' numbers into the spans file's row groups, for a writer on another
 * thread: the caller sends the places' chunks encoded (`write`'s `encoded`) and the places with
 * only their draft ids, their order keys and the numbers it encodes itself (PLACE_COLUMNS_WITH_ENCODED).
 */
export function placedNumberChunks(): { columns: string[]; chunks: NumberChunks } {
  return { columns: PLACED_NUMBERS.map((c) => c.name), chunks: new NumberChunks(PLACED_NUMBERS, ROW_GROUP_SIZE.spans) };
}

/**
 * What a batch of places still carries when some of its numbers go encoded: its drafts, its order
 * keys (see notePlaceOrder) and the numbers the writer encodes itself.
 */
export const PLACE_COLUMNS_WITH_ENCODED = ["draft_id", ...new Set([...SORT_ORDER.spans!, ...TABLES.spans.filter((c) => isNumericColumn(c.type) && !ENCODED_BY_CALLER.includes(c.name)).map((c) => c.name)])];

/** The staging tables an output table is written from: spans also from the drafts and their places. */
function stagingTablesOf(table: TableName): StagingTableName[] {
  return table === "spans" ? ["spans", "span_drafts", "span_places"] : [table];
}

/** Where a writer stages (the workspace's tmp/) and stores its files; a Workspace is one. */
export interface WriterTarget {
  layout: { tmp: string };
  objects: ObjectStore;
}

/**
 * Receives the evidence batches of one generation and writes one Parquet file per table into the
 * object store. Output tables of numbers go into their final files as they arrive (see
 * writtenAsFinal); so do spans drafted and then placed (a trace's), whole as their places come
 * (see SpanDrafts and writtenFinal). The others are staged in an in-memory DuckDB (spilling to
 * the workspace's tmp/ when large) and written by COPY when complete or on finish, with zstd at
 * level 1 (about twice as fast to write as the default level, for files about a fifth larger).
 * Every file carries `generation_id` so readers can union generations by name.
 */
export class ParquetGenerationWriter implements BatchSink {
  /**
   * `write` keeps no array of a batch once it resolves: the appender copies into DuckDB's chunks,
   * final files encode a whole row group where it lies and copy a part of one, span drafts copy
   * their codes and text. The builder reuses the arrays, and the writer thread reads batches in
   * place in the ring it shares with the import (see BatchRing).
   */
  readonly copies = true;

  private constructor(
    private readonly ws: WriterTarget,
    private readonly generationId: string,
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly stagingDir: string,
    private readonly spillRows: number,
    /**
     * Whether output tables of numbers go into their final files, and span drafts are kept
     * (SpanDrafts) and their places written as whole spans, as their batches come; else every
     * table is staged through DuckDB's appender and written by COPY.
     */
    private readonly finalFiles: boolean,
  ) {
    this.drafts = new SpanDrafts(path.join(stagingDir, "span_drafts.text"));
  }

  /** Span drafts until their places come (their text spills into the staging directory past a bound). */
  private readonly drafts: SpanDrafts;

  /**
   * `spillRows`: staged rows per table before a part file is written (tests make it small).
   * `finalFiles: false` stages every table through the appender and writes it by COPY (tests
   * compare the two ways).
   */
  static async open(ws: WriterTarget, generationId: string, options: { spillRows?: number; finalFiles?: boolean } = {}): Promise<ParquetGenerationWriter> {
    ({ api, bindings: duckdb } = await loadDuckDb());
    const finalFiles = options.finalFiles ?? true;
    const stagingDir = path.join(ws.layout.tmp, `extract-${process.pid}-${randomBytes(6).toString("hex")}`);
    await fsp.mkdir(stagingDir, { recursive: true });
    let duck: WriterDuckDb | null = null;
    try {
      duck = (finalFiles ? await takeSpareDuckDb(stagingDir) : null) ?? (await openWriterDuckDb(stagingDir, finalFiles));
      return new ParquetGenerationWriter(ws, generationId, duck.instance, duck.connection, stagingDir, options.spillRows ?? SPILL_ROWS, finalFiles);
    } catch (error) {
      duck?.connection.closeSync();
      duck?.instance.closeSync();
      await fsp.rm(stagingDir, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * Keeps one writer's DuckDB open ahead of the next import (a server's, which has idle time):
   * made now, and again after each writer that took it has closed. Making it (a new instance,
   * its staging tables) took 25-290 ms of the import's time on a loaded machine, before the parse.
   */
  static keepSpare(): SpareKeeping {
    keepingSpare = true;
    spare ??= makeSpare();
    return keeping;
  }

  /** Resolves once the kept spare is made (at once when none is kept or being made); never fails. */
  static async spareMade(): Promise<void> {
    // A writer closing asks for the next spare on the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    await spare;
  }

  /** The final files of the tables written as their rows arrive (see writtenAsFinal; spans, of placed drafts), made by their first batch (or their finish). */
  private readonly finals = new Map<StagingTableName, FinalParquetFile>();

  /** `encodedNumbers`: made by places whose numbers come encoded (see write), the spans file takes those chunks. */
  private finalFile(table: StagingTableName, encodedNumbers = false): FinalParquetFile {
    let file = this.finals.get(table);
    if (!file) {
      // Spans here are placed drafts: their text comes coded by the drafts' dictionaries.
      const dictionaries = this.dictionariesOf(table === "spans" ? "span_drafts" : table);
      const columns = STAGING_TABLES[table].map(
        (c): FinalColumn =>
          c.type === "VARCHAR" ? { name: c.name, type: "VARCHAR", nullable: c.nullable, dictionary: dictionaries.get(c.name)! } : { name: c.name, type: c.type as NumericColumnType, nullable: c.nullable, encoded: encodedNumbers && ENCODED_BY_CALLER.includes(c.name) },
      );
      // Named apart from the COPY's target: the spans COPY may read this file (see outputSource).
      file = new FinalParquetFile(path.join(this.stagingDir, `${table}.final.parquet`), this.generationId, columns, ROW_GROUP_SIZE[table as TableName]);
      this.finals.set(table, file);
    }
    return file;
  }

  /** One appender per table, kept open across batches (closing one flushes it into the table). */
  private readonly appenders = new Map<StagingTableName, DuckDBAppender>();
  /** One data chunk per table, refilled for every 2,048 rows (the appender copies what it is given). */
  private readonly chunks = new Map<StagingTableName, DuckDBDataChunk>();
  /** Rows in each staging table now, and the part files it has spilled to. */
  private readonly staged = new Map<StagingTableName, number>();
  private readonly parts = new Map<StagingTableName, string[]>();
  private readonly written = new Map<StagingTableName, number>();

  /** Staging tables declared complete, and the output tables `complete` wrote (their storing under way). */
  private readonly completed = new Set<StagingTableName>();
  private readonly early = new Map<TableName, Promise<GenerationFile>>();
  /** Early tables are written one after another on their own connection (opened on first use). */
  private earlyWrites: Promise<void> = Promise.resolve();
  private earlyConnection: DuckDBConnection | null = null;

  /** Per staging table, the dictionary of each of its text columns (by column name), learned batch by batch. */
  private readonly dictionaries = new Map<StagingTableName, Map<string, TextDecoding>>();

  private dictionariesOf(table: StagingTableName): Map<string, TextDecoding> {
    let dictionaries = this.dictionaries.get(table);
    if (!dictionaries) {
      dictionaries = new Map(STAGING_TABLES[table].filter((c) => c.type === "VARCHAR").map((c) => [c.name, new TextDecoding()]));
      this.dictionaries.set(table, dictionaries);
    }
    return dictionaries;
  }

  /**
   * `encoded`: for span places, their numbers already encoded into the spans file's row groups
   * that these places complete (placedNumberChunks), the batch then carrying only
   * PLACE_COLUMNS_WITH_ENCODED. A writer's places come all one way or all the other.
   */
  async write(batch: RowBatch, encoded?: EncodedChunks[]): Promise<void> {
    if (this.completed.has(batch.table)) throw new Error(`rows for ${batch.table} arrived after it was declared complete`);
    if (encoded && !(this.finalFiles && batch.table === "span_places")) throw new Error(`encoded chunks came with rows for ${batch.table}, which this writer does not write into a final file`);
    const specs = STAGING_TABLES[batch.table] as readonly ColumnSpec[] | undefined;
    if (!specs) throw new Error(`rows for ${batch.table}, which is no staging table`);
    const dictionaries = this.dictionariesOf(batch.table);
    for (const c of specs) {
      if (c.type !== "VARCHAR") continue;
      const column = batch.columns[c.name];
      if (!isCodedText(column)) throw new Error(`${batch.table}.${c.name} did not arrive coded`);
      dictionaries.get(c.name)!.learn(column);
    }
    if (staysOut(batch.table, this.finalFiles)) {
      if (batch.table === "span_drafts") this.drafts.add(batch);
      else if (batch.table === "span_places") {
        const spans = this.placedFile(encoded !== undefined);
        if (encoded) spans.addEncoded(encoded);
        spans.append(this.placedSpans(batch), batch.length);
        this.notePlaceOrder(batch);
      } else
        this.finalFile(batch.table).append(
          specs.map((c) => batch.columns[c.name] as Float64Array),
          batch.length,
        );
      this.written.set(batch.table, this.totalRows(batch.table) + batch.length);
      return;
    }
    let appender = this.appenders.get(batch.table);
    if (!appender) {
      appender = await this.connection.createAppender(batch.table);
      this.appenders.set(batch.table, appender);
    }
    let chunk = this.chunks.get(batch.table);
    if (!chunk) {
      chunk = api.DuckDBDataChunk.create(stagingColumns(batch.table).map((c) => c.type));
      this.chunks.set(batch.table, chunk);
    }
    for (let start = 0; start < batch.length; start += VECTOR_SIZE) {
      const rows = Math.min(batch.length, start + VECTOR_SIZE) - start;
      chunk.reset();
      chunk.rowCount = rows;
      let v = 0;
      for (const c of specs) {
        const source = batch.columns[c.name];
        const vector = duckdb.data_chunk_get_vector(chunk.chunk, v);
        if (source instanceof Float64Array) {
          if (c.type === "INTEGER") fillInteger(vector, source, start, rows);
          // DOUBLE staging keeps NaN (NULL on COPY): the numbers are copied as they are, in one call.
          else fillDoubles(vector, source, start, rows);
        } else if (c.type === "VARCHAR") {
          fillText(vector, duckdb.data_chunk_get_vector(chunk.chunk, ++v), source as CodedText, start, rows);
        } else {
          chunk.setColumnValues(v, Array.prototype.slice.call(source, start, start + rows) as DuckDBValue[]);
        }
        v++;
      }
      appender.appendDataChunk(chunk);
    }
    this.written.set(batch.table, this.totalRows(batch.table) + batch.length);
    const staged = (this.staged.get(batch.table) ?? 0) + batch.length;
    this.staged.set(batch.table, staged);
    if (staged >= this.spillRows) await this.spill(batch.table);
  }

  /** The rest of the span places' numbers, encoded (see write): the row groups after those already given. */
  addEncodedPlaces(encoded: EncodedChunks[]): void {
    this.placedFile(true).addEncoded(encoded);
  }

  /** The spans file that places go into, their numbers given encoded or not (all one way or all the other). */
  private placedFile(encodedNumbers: boolean): FinalParquetFile {
    const spans = this.finalFile("spans", encodedNumbers);
    if (spans.takesEncoded !== encodedNumbers) throw new Error("span places came both with their numbers and with them encoded");
    return spans;
  }

  /** A batch of places as spans' columns (TABLES.spans), each with its draft's text, coded by the drafts' dictionaries; numbers given encoded are absent. */
  private placedSpans(places: RowBatch): (Float64Array | CodedText | undefined)[] {
    const texts = this.drafts.place(places.columns.draft_id as Float64Array, places.length);
    return TABLES.spans.map((c) => (c.type === "VARCHAR" ? texts[DRAFT_TEXT_COLUMNS.indexOf(c.name)] : (places.columns[c.name] as Float64Array)));
  }

  private async spill(table: StagingTableName): Promise<void> {
    this.appenders.get(table)?.closeSync();
    this.appenders.delete(table);
    const parts = this.parts.get(table) ?? [];
    const part = path.join(this.stagingDir, `${table}.part${parts.length}.parquet`);
    await this.connection.run(`COPY "${table}" TO ${sqlString(part)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`);
    await this.connection.run(`DROP TABLE "${table}"`);
    await this.connection.run(createTableSql(table));
    parts.push(part);
    this.parts.set(table, parts);
    this.staged.set(table, 0);
  }

  /** A staging table's rows as staged (text columns beside their dictionary ids): the table itself and any part files it spilled to. */
  private stagedRows(table: StagingTableName): string {
    const parts = this.parts.get(table);
    return parts?.length ? `(SELECT * FROM "${table}" UNION ALL SELECT * FROM read_parquet([${parts.map(sqlString).join(", ")}]))` : `"${table}"`;
  }

  /** A staging table's rows with their text decoded. */
  private decoded(table: StagingTableName): string {
    const dictionaries = this.dictionariesOf(table);
    const columns = STAGING_TABLES[table].map((c) => (c.type === "VARCHAR" ? `${decodeSql(dictionaries.get(c.name)!.dictionary, c.name)} AS "${c.name}"` : `"${c.name}"`));
    return `(SELECT ${columns.join(", ")} FROM ${this.stagedRows(table)})`;
  }

  /**
   * Rows to write for a table, their text still as staged, and the dictionaries that decode it.
   * Spans come from their staging table and from the drafts placed:
   * - with final files, the placed drafts' file holds whole spans, text decoded (this COPY runs
   *   only when that file cannot be the final one, see writtenFinal);
   * - else the drafts joined to their places. Text is decoded after the join and the sort, which
   *   then hold ids instead of strings; the spans staged as such have their text decoded in the
   *   union (each staging table has dictionaries of its own) and no ids, so the drafts'
   *   dictionaries decode all.
   */
  private outputSource(table: TableName): { rows: string; dictionaries: Map<string, TextDecoding> } {
    if (table !== "spans" || this.totalRows("span_places") === 0) return { rows: this.stagedRows(table), dictionaries: this.dictionariesOf(table) };
    if (this.finalFiles) {
      const placed = this.finalFile("spans");
      placed.finish();
      const columns = TABLES.spans.map((c) => `"${c.name}"`).join(", ");
      return {
        rows: `(SELECT ${columns} FROM ${this.decoded("spans")} UNION ALL SELECT ${columns} FROM read_parquet(${sqlString(placed.file)}))`,
        // Nothing to decode: empty dictionaries leave the text as it is.
        dictionaries: new Map(TABLES.spans.map((c) => [c.name, new TextDecoding()])),
      };
    }
    const drafted = new Set(DRAFT_TABLES.span_drafts.map((c) => c.name as string));
    const direct: string[] = [];
    const joined: string[] = [];
    for (const c of TABLES.spans) {
      direct.push(`"${c.name}"`);
      joined.push(drafted.has(c.name) ? `d."${c.name}"` : `p."${c.name}"`);
      if (c.type !== "VARCHAR") continue;
      direct.push(`CAST(NULL AS INTEGER) AS "${c.name}${ID_SUFFIX}"`);
      joined.push(`d."${c.name}${ID_SUFFIX}"`);
    }
    return {
      rows: `(SELECT ${direct.join(", ")} FROM ${this.decoded("spans")} UNION ALL SELECT ${joined.join(", ")} FROM ${this.stagedRows("span_places")} p JOIN ${this.stagedRows("span_drafts")} d USING (draft_id))`,
      dictionaries: this.dictionariesOf("span_drafts"),
    };
  }

  /**
   * Whether the span places so far came in the spans file's order (SORT_ORDER: start_ns, track_id,
   * span_id), and the last one's key (start, track, span). The builder writes whole numbers for
   * all three, so comparing the values given compares them as written.
   */
  private placesInOrder = true;
  private readonly lastPlace = Float64Array.of(-Infinity, -Infinity, -Infinity);

  private notePlaceOrder(batch: RowBatch): void {
    if (!this.placesInOrder) return;
    const { start_ns, track_id, span_id } = batch.columns as Record<string, Float64Array>;
    this.placesInOrder = continuesInOrder(start_ns, track_id, span_id, batch.length, this.lastPlace);
  }

  /**
   * The COPY's query: a table's rows in their order, each column as written (text decoded, numbers
   * cast). The sort is on the staged values, cast as written so that it orders as the files hold
   * them; the projection over the sorted subquery keeps its order (DuckDB preserves row order
   * through projections of a single subquery, and COPY writes rows in that order).
   */
  private outputQuery(table: TableName): string {
    const { rows, dictionaries } = this.outputSource(table);
    const specs = TABLES[table];
    const columns = specs.map((c) => `${c.type === "VARCHAR" ? decodeSql(dictionaries.get(c.name)!.dictionary, c.name) : numericValueSql(c)} AS "${c.name}"`);
    const order = SORT_ORDER[table]?.map((name) => numericValueSql(specs.find((c) => c.name === name)!));
    const ordered = order ? `(SELECT * FROM ${rows} ORDER BY ${order.join(", ")})` : rows;
    return `SELECT ${sqlString(this.generationId)} AS generation_id, ${columns.join(", ")} FROM ${ordered}`;
  }

  /** Rows written to a staging table so far, spilled or not. */
  private totalRows(table: StagingTableName): number {
    return this.written.get(table) ?? 0;
  }

  /**
   * Staging tables that will get no more rows. Every output table whose staging tables are all
   * complete is written out now, on a connection of its own, so that this returns at once: the
   * builder derives its totals meanwhile and their rows are appended while the COPY runs (on the
   * 220 MB folded stacks, stacks and samples are written while their totals are derived; waiting
   * for those COPYs held the totals' batches back by about a second).
   */
  async complete(tables: StagingTableName[]): Promise<void> {
    // The builder keeps a core busy deriving totals: a second DuckDB thread would mostly take
    // CPU from it (a COPY of 3.7 M stack rows: 0.36 s on two threads, 0.39-0.5 s on one, for 60%
    // more CPU). finish() gives the COPYs both cores again.
    await this.connection.run("SET threads = 1");
    for (const table of tables) this.completed.add(table);
    for (const table of TABLE_NAMES) {
      if (this.early.has(table) || !stagingTablesOf(table).every((t) => this.completed.has(t))) continue;
      if (this.writtenFinal(table)) {
        this.early.set(table, this.storeFinal(table));
        continue;
      }
      // Closed now, between batches: closing flushes into the table on the main connection, which
      // must not happen while that connection runs a spill's COPY.
      this.closeAppenders(stagingTablesOf(table));
      const written = this.earlyWrites.then(async () => {
        this.earlyConnection ??= await this.instance.connect();
        return this.writeTable(table, this.earlyConnection);
      });
      // One COPY at a time on that connection; a failure reaches the finish through `early`.
      this.earlyWrites = written.then(
        () => undefined,
        () => undefined,
      );
      const stored = written.then((w) => w.stored);
      stored.catch(() => undefined);
      this.early.set(table, stored);
    }
  }

  /** Writes every table as Parquet into the object store; returns the files for the generation row. */
  async finish(): Promise<GenerationFile[]> {
    await this.connection.run(`SET threads = ${WRITER_THREADS}`);
    const stored: Promise<GenerationFile>[] = [];
    try {
      for (const appender of this.appenders.values()) appender.closeSync();
      this.appenders.clear();
      for (const table of TABLE_NAMES) stored.push(this.early.get(table) ?? (this.writtenFinal(table) ? this.storeFinal(table) : (await this.writeTable(table)).stored));
      return await Promise.all(stored);
    } finally {
      await Promise.allSettled([...stored, ...this.early.values()]);
      await this.close();
    }
  }

  /** Ends staging of these tables before they are read: appenders flush into their tables. */
  private closeAppenders(tables: StagingTableName[]): void {
    for (const table of tables) {
      this.appenders.get(table)?.closeSync();
      this.appenders.delete(table);
    }
  }

  private checkDraftsPlaced(): void {
    if (this.drafts.placed !== this.drafts.drafted) throw new Error(`${this.drafts.drafted - this.drafts.placed} span drafts were never placed`);
  }

  /** COPYs one output table to Parquet; returns its storing into the object store, under way. */
  private async writeTable(table: TableName, connection = this.connection): Promise<{ stored: Promise<GenerationFile> }> {
    this.closeAppenders(stagingTablesOf(table));
    if (table === "spans" && this.finalFiles) this.checkDraftsPlaced();
    const target = path.join(this.stagingDir, `${table}.parquet`);
    const copied = await connection.runAndReadAll(
      `COPY (${this.outputQuery(table)}) TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE ${ROW_GROUP_SIZE[table] ?? 122_880})`,
    );
    const rowCount = Number(copied.getRows()[0][0]);
    // The builder refuses a draft given twice and a place without its draft (and so, with final
    // files, does SpanDrafts), so the COPY writes one row per place; its row count checks that (on
    // its own, a missing and a duplicated draft would cancel out in a join).
    const expectedSpans = this.totalRows("spans") + this.totalRows("span_places");
    if (table === "spans" && rowCount !== expectedSpans) throw new Error(`span drafts and places do not pair up: ${rowCount} spans written, ${expectedSpans} expected`);
    await connection.run(`DROP TABLE "${table}"`);
    // Stored (hashed, copied, synced) while DuckDB writes the next table.
    const stored = this.store(table, target, rowCount);
    stored.catch(() => undefined);
    return { stored };
  }

  /**
   * Whether a table's final file, written as its rows came, is the one stored: a table of numbers
   * (writtenAsFinal), or spans when every span was a placed draft and the places came in the
   * spans file's order (SORT_ORDER). Otherwise the spans COPY sorts the placed drafts' file
   * together with the spans staged as such.
   */
  private writtenFinal(table: TableName): boolean {
    if (!this.finalFiles) return false;
    if (table !== "spans") return writtenAsFinal(table);
    return this.totalRows("span_places") > 0 && this.totalRows("spans") === 0 && this.placesInOrder;
  }

  /** Finishes a table's final file (its last row group, its footer); returns its storing, under way. */
  private storeFinal(table: TableName): Promise<GenerationFile> {
    const file = this.finalFile(table);
    const stored = (async () => {
      if (table === "spans") this.checkDraftsPlaced();
      return this.store(table, file.file, file.finish());
    })();
    // Awaited by the finish, maybe after other tables' COPYs: not an unhandled rejection meanwhile.
    stored.catch(() => undefined);
    return stored;
  }

  private async store(table: TableName, file: string, rowCount: number): Promise<GenerationFile> {
    const stored = await this.ws.objects.putOwnFile(file);
    return { table, object_id: stored.id, size_bytes: stored.size, row_count: rowCount };
  }

  async close(): Promise<void> {
    // An early COPY still running would be cut off by closing the instance under it.
    await this.earlyWrites;
    try {
      for (const file of this.finals.values()) file.close();
      this.drafts.close();
      for (const appender of this.appenders.values()) appender.closeSync();
      this.appenders.clear();
      this.earlyConnection?.closeSync();
      this.connection.closeSync();
      this.instance.closeSync();
    } catch {
      // already closed
    }
    await fsp.rm(this.stagingDir, { recursive: true, force: true });
    // The next import's instance is made now that this one's work is done.
    // Asked when it runs, not now: a keeping stopped in between makes none.
    setImmediate(() => {
      if (keepingSpare) spare ??= makeSpare();
    });
  }
}

/** Whether a staging table's rows never reach DuckDB: written into a final file, or kept as span drafts. */
function staysOut(table: StagingTableName, finalFiles: boolean): boolean {
  return finalFiles && (writtenAsFinal(table) || table === "span_drafts" || table === "span_places");
}

interface WriterDuckDb {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
}

/**
 * A writer's in-memory DuckDB with its staging tables. Staging spills to disk beyond its memory
 * limit (into `tempDirectory`, or where the writer that takes a spare one sets it), keeping a
 * 1 GB import within about 2 GB of RSS in all.
 */
async function openWriterDuckDb(tempDirectory: string | undefined, finalFiles: boolean): Promise<WriterDuckDb> {
  ({ api, bindings: duckdb } = await loadDuckDb());
  const { instance, connection } = await openDuckDb({ tempDirectory, memoryLimit: "768MB", threads: WRITER_THREADS });
  try {
    for (const table of Object.keys(STAGING_TABLES) as StagingTableName[]) if (!staysOut(table, finalFiles)) await connection.run(createTableSql(table));
  } catch (error) {
    connection.closeSync();
    instance.closeSync();
    throw error;
  }
  return { instance, connection };
}

let keepingSpare = false;
/** The spare writer DuckDB (with final files), under way or made; null once taken. It failing leaves the next writer to open its own. */
let spare: Promise<WriterDuckDb | null> | null = null;

/** The spare's keeping: how many writers took one, and its end (the spare closed). */
export interface SpareKeeping {
  readonly taken: number;
  stop(): Promise<void>;
}

const keeping = {
  taken: 0,
  async stop(): Promise<void> {
    keepingSpare = false;
    // Taken from the slot before the wait, so an import opening meanwhile cannot take what is closed here.
    const pending = spare;
    spare = null;
    const left = pending ? await pending : null;
    left?.connection.closeSync();
    left?.instance.closeSync();
  },
};

function makeSpare(): Promise<WriterDuckDb | null> {
  return openWriterDuckDb(undefined, true).catch(() => null);
}

/** The spare DuckDB, if one is kept, spilling into `stagingDir` from now on; null when there is none. */
async function takeSpareDuckDb(stagingDir: string): Promise<WriterDuckDb | null> {
  const taken = spare;
  spare = null;
  const made = taken ? await taken : null;
  if (!made) return null;
  try {
    await made.connection.run(`SET temp_directory = ${sqlString(stagingDir)}`);
    keeping.taken++;
    return made;
  } catch {
    made.connection.closeSync();
    made.instance.closeSync();
    return null;
  }
}

export type { TableName };
