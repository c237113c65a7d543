import { closeSync, openSync, writevSync } from "node:fs";
import { endianness } from "node:os";
import { withRoom } from "../../analysis/io/bytes";

/**
 * The parts of the Parquet format that our own encoder (parquet-final.ts) writes pages with, apart
 * from their values: parquet.thrift's enums, the Thrift compact protocol of page headers and
 * footers, and a file written part by part.
 */

/** Physical types (parquet.thrift `Type`). */
export const INT32 = 1;
export const INT64 = 2;
export const DOUBLE = 5;
export const BYTE_ARRAY = 6;

/** Converted types, as DuckDB's own files carry them (`ConvertedType`). */
export const UTF8 = 0;
export const INT_32 = 17;
export const INT_64 = 18;

/** Encodings (`Encoding`). */
export const PLAIN = 0;
export const RLE = 3;
export const DELTA_BINARY_PACKED = 5;
export const DELTA_BYTE_ARRAY = 7;
export const RLE_DICTIONARY = 8;

export const UNCOMPRESSED = 0;
/** Page types (`PageType`). */
export const DATA_PAGE = 0;
export const DICTIONARY_PAGE = 2;
/** Repetition (`FieldRepetitionType`): every column is OPTIONAL. */
export const OPTIONAL = 1;

/** Thrift compact protocol's type ids, as field headers and list headers carry them. */
const T_TRUE = 1;
const T_FALSE = 2;
const T_I32 = 5;
const T_I64 = 6;
const T_BINARY = 8;
const T_LIST = 9;
const T_STRUCT = 12;

const MAGIC = new TextEncoder().encode("PAR1");

/**
 * Bytes in the making (CompactWriter's, and chunks encoded in memory), in a buffer that grows as it fills; varints are
 * ULEB128, as Thrift's compact protocol writes them. Numbers are doubles: a varint of an integer
 * up to 2^53 is exact (division by 128 is).
 */
export class ByteOutput {
  private buffer: Uint8Array;
  private at = 0;

  constructor(capacity = 256) {
    this.buffer = new Uint8Array(capacity);
  }

  private reserve(bytes: number): void {
    this.buffer = withRoom(this.buffer, this.at, this.at + bytes);
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.at++] = value;
  }

  bytes(values: Uint8Array): void {
    this.reserve(values.length);
    this.buffer.set(values, this.at);
    this.at += values.length;
  }

  varint(value: number): void {
    this.reserve(10);
    while (value >= 128) {
      this.buffer[this.at++] = (value % 128) | 128;
      value = Math.floor(value / 128);
    }
    this.buffer[this.at++] = value;
  }

  get length(): number {
    return this.at;
  }

  /** The bytes so far, in a buffer of their own; the output starts empty again. */
  take(): Uint8Array {
    const bytes = this.toBytes();
    this.at = 0;
    return bytes;
  }

  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.at);
  }
}

/**
 * Thrift compact-protocol output: Parquet's page headers and footer. Integers are zigzag varints
 * (every value here is a count or an offset below 2^53, computed in doubles); each field header
 * carries the id's delta from the previous field of its struct.
 */
export class CompactWriter extends ByteOutput {
  private readonly lastField = [0];

  private zigzag(value: number): void {
    this.varint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  private field(id: number, type: number): void {
    const delta = id - this.lastField[this.lastField.length - 1];
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.lastField[this.lastField.length - 1] = id;
  }

  private listHeader(size: number, type: number): void {
    if (size < 15) this.byte((size << 4) | type);
    else {
      this.byte(0xf0 | type);
      this.varint(size);
    }
  }

  bool(id: number, value: boolean): this {
    this.field(id, value ? T_TRUE : T_FALSE);
    return this;
  }

  i32(id: number, value: number): this {
    this.field(id, T_I32);
    this.zigzag(value);
    return this;
  }

  i64(id: number, value: number): this {
    this.field(id, T_I64);
    this.zigzag(value);
    return this;
  }

  string(id: number, value: string): this {
    return this.binary(id, new TextEncoder().encode(value));
  }

  binary(id: number, value: Uint8Array): this {
    this.field(id, T_BINARY);
    this.varint(value.length);
    this.bytes(value);
    return this;
  }

  i32List(id: number, values: number[]): this {
    this.field(id, T_LIST);
    this.listHeader(values.length, T_I32);
    for (const value of values) this.zigzag(value);
    return this;
  }

  stringList(id: number, values: string[]): this {
    this.field(id, T_LIST);
    this.listHeader(values.length, T_BINARY);
    for (const value of values) {
      const utf8 = new TextEncoder().encode(value);
      this.varint(utf8.length);
      this.bytes(utf8);
    }
    return this;
  }

  struct(id: number, body: (w: this) => void): this {
    this.field(id, T_STRUCT);
    return this.structBody(body);
  }

  structList<T>(id: number, items: T[], body: (w: this, item: T) => void): this {
    this.field(id, T_LIST);
    this.listHeader(items.length, T_STRUCT);
    for (const item of items) this.structBody((w) => body(w, item));
    return this;
  }

  /** A struct's fields and its stop byte; field ids count from 0 again inside it. */
  structBody(body: (w: this) => void): this {
    this.lastField.push(0);
    body(this);
    this.byte(0);
    this.lastField.pop();
    return this;
  }
}

/** A Parquet file written part by part: the magic first, then pages, then `end` with the footer. */
export class ParquetFileOutput {
  private fd: number | null;
  /** Bytes written so far: where the next part starts. */
  offset = 0;

  constructor(readonly file: string) {
    // PLAIN is little-endian; typed arrays are in the platform's order, written as they are.
    if (endianness() !== "LE") throw new Error("writing Parquet needs a little-endian platform");
    this.fd = openSync(file, "w");
    this.write([MAGIC]);
  }

  write(parts: Uint8Array[]): void {
    if (this.fd === null) throw new Error(`the Parquet file ${this.file} is closed`);
    let left = parts.reduce((sum, part) => sum + part.length, 0);
    this.offset += left;
    // writev may write less than asked (a signal, a full disk): go on from where it stopped.
    while (left > 0) {
      const written = writevSync(this.fd, parts);
      left -= written;
      parts = remainder(parts, written);
    }
  }

  /** Writes the footer (FileMetaData) and the file's tail, and closes it. */
  end(footer: Uint8Array): void {
    this.write([footer, littleEndianUint32(footer.length), MAGIC]);
    this.close();
  }

  /** Closes the file, ended or not (its writer removes it with its staging directory). */
  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    closeSync(fd);
  }
}

export function littleEndianUint32(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value, true);
  return bytes;
}

function remainder(parts: Uint8Array[], written: number): Uint8Array[] {
  const rest: Uint8Array[] = [];
  for (const part of parts) {
    if (written >= part.length) written -= part.length;
    else {
      rest.push(written > 0 ? part.subarray(written) : part);
      written = 0;
    }
  }
  return rest;
}
