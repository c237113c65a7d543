import { Bool, Float64, Int32, Int64, makeData, makeVector, Table, tableToIPC, Utf8, vectorFromArray, type DataType, type Vector } from "apache-arrow";
import { asyncBufferFromUrl, cachedAsyncBuffer, parquetMetadataAsync, parquetRead } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import type { ColumnSpec, ColumnType } from "../../analysis/evidence/schema";

/** A nullable numeric column: typed values with Arrow's validity bitmap (a null leaves its slot 0). */
interface NullableColumn {
  values: Int32Array | Float64Array | BigInt64Array;
  valid: Uint8Array;
  nulls: number;
}

type Column = Int32Array | Float64Array | BigInt64Array | NullableColumn | unknown[];

const isNullable = (c: Column): c is NullableColumn => !Array.isArray(c) && !ArrayBuffer.isView(c);

const ARROW: Record<ColumnType, () => DataType> = {
  INTEGER: () => new Int32(),
  BIGINT: () => new Int64(),
  DOUBLE: () => new Float64(),
  VARCHAR: () => new Utf8(),
  BOOLEAN: () => new Bool(),
};

/**
 * Numeric columns decode straight into typed arrays (a nullable one with a validity bitmap: a
 * million-row nullable BIGINT through vectorFromArray took seconds); text and booleans into plain arrays.
 */
function allocate(spec: ColumnSpec, rows: number): Column {
  if (spec.nullable && (spec.type === "INTEGER" || spec.type === "DOUBLE" || spec.type === "BIGINT")) {
    const values = spec.type === "INTEGER" ? new Int32Array(rows) : spec.type === "DOUBLE" ? new Float64Array(rows) : new BigInt64Array(rows);
    return { values, valid: new Uint8Array((rows + 7) >> 3), nulls: 0 };
  }
  if (!spec.nullable && spec.type === "INTEGER") return new Int32Array(rows);
  if (!spec.nullable && spec.type === "DOUBLE") return new Float64Array(rows);
  if (!spec.nullable && spec.type === "BIGINT") return new BigInt64Array(rows);
  return new Array(rows).fill(null);
}

function copyInto(target: Column, source: ArrayLike<unknown>, at: number): void {
  if (isNullable(target)) {
    const { values, valid } = target;
    const big = values instanceof BigInt64Array;
    for (let i = 0; i < source.length; i++) {
      const v = source[i];
      if (v === null || v === undefined) {
        target.nulls++;
        continue;
      }
      const row = at + i;
      if (big) (values as BigInt64Array)[row] = typeof v === "bigint" ? v : BigInt(v as number);
      else (values as Int32Array | Float64Array)[row] = Number(v);
      valid[row >> 3] |= 1 << (row & 7);
    }
  } else if (target instanceof BigInt64Array) {
    if (source instanceof BigInt64Array) target.set(source, at);
    else for (let i = 0; i < source.length; i++) target[at + i] = BigInt(source[i] as number | bigint);
  } else if (target instanceof Int32Array || target instanceof Float64Array) {
    if (ArrayBuffer.isView(source) && !(source instanceof BigInt64Array) && !(source instanceof BigUint64Array)) target.set(source as unknown as ArrayLike<number>, at);
    else for (let i = 0; i < source.length; i++) target[at + i] = Number(source[i]);
  } else {
    for (let i = 0; i < source.length; i++) target[at + i] = source[i] ?? null;
  }
}

function toVector(spec: ColumnSpec, column: Column | null, rows: number): Vector {
  if (!column) return vectorFromArray(new Array(rows).fill(null), ARROW[spec.type]());
  if (isNullable(column)) {
    return makeVector(makeData({ type: ARROW[spec.type]() as Int32, length: rows, nullCount: column.nulls, nullBitmap: column.nulls ? column.valid : null, data: column.values as Int32Array }));
  }
  if (ArrayBuffer.isView(column)) return makeVector(column);
  const values = spec.type === "BIGINT" ? column.map((v) => (v === null ? null : BigInt(v as bigint | number))) : column;
  return vectorFromArray(values as never[], ARROW[spec.type]());
}

/** Files up to this size are read with one request: every column is decoded anyway, and on loopback
 * one response beats a footer request plus one range request per column chunk. */
const WHOLE_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Reads one evidence Parquet file (a small one whole, a larger one by range requests: footer, then
 * the column chunks) and returns
 * it as an Arrow IPC stream with the schema's column types. DuckDB-WASM 1.32 does not link its
 * parquet extension and would fetch it from the internet, so the browser decodes Parquet itself.
 * `generation_id` is left out: it is constant per file, and the view adds it back.
 */
export async function parquetFileToArrowIpc(url: string, byteLength: number, columns: ColumnSpec[]): Promise<{ ipc: Uint8Array; rows: number }> {
  const file =
    byteLength <= WHOLE_FILE_BYTES
      ? await fetch(url).then((r) => {
          if (!r.ok) throw new Error(`GET ${url}: ${r.status} ${r.statusText}`);
          return r.arrayBuffer();
        })
      : cachedAsyncBuffer(await asyncBufferFromUrl({ url, byteLength }));
  return parquetBufferToArrowIpc(file, columns);
}

/** The same from bytes already in hand (an export bundle's part); `generation_id` is left out likewise. */
export async function parquetBufferToArrowIpc(file: ArrayBuffer | Awaited<ReturnType<typeof asyncBufferFromUrl>>, columns: ColumnSpec[]): Promise<{ ipc: Uint8Array; rows: number }> {
  const metadata = await parquetMetadataAsync(file);
  const present = new Set(metadata.schema.map((s) => s.name));
  const wanted = columns.filter((c) => present.has(c.name));
  const rows = Number(metadata.num_rows);
  const data = new Map<string, Column>(wanted.map((c) => [c.name, allocate(c, rows)]));
  if (wanted.length && rows > 0) {
    await parquetRead({
      file,
      metadata,
      compressors,
      columns: wanted.map((c) => c.name),
      onChunk: ({ columnName, columnData, rowStart }) => {
        const target = data.get(columnName);
        if (target) copyInto(target, columnData as ArrayLike<unknown>, rowStart);
      },
    });
  }
  const vectors: Record<string, Vector> = {};
  for (const column of columns) vectors[column.name] = toVector(column, data.get(column.name) ?? null, rows);
  return { ipc: tableToIPC(new Table(vectors), "stream"), rows };
}
