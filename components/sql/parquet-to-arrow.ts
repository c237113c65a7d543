import { Bool, Float64, Int32, Int64, makeVector, Table, tableToIPC, Utf8, vectorFromArray, type DataType, type Vector } from "apache-arrow";
import { asyncBufferFromUrl, cachedAsyncBuffer, parquetMetadataAsync, parquetRead } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import type { ColumnSpec, ColumnType } from "../../analysis/evidence/schema";

type Column = Int32Array | Float64Array | BigInt64Array | unknown[];

const ARROW: Record<ColumnType, () => DataType> = {
  INTEGER: () => new Int32(),
  BIGINT: () => new Int64(),
  DOUBLE: () => new Float64(),
  VARCHAR: () => new Utf8(),
  BOOLEAN: () => new Bool(),
};

/** Non-null numeric columns decode straight into typed arrays; the rest into plain arrays. */
function allocate(spec: ColumnSpec, rows: number): Column {
  if (!spec.nullable && spec.type === "INTEGER") return new Int32Array(rows);
  if (!spec.nullable && spec.type === "DOUBLE") return new Float64Array(rows);
  if (!spec.nullable && spec.type === "BIGINT") return new BigInt64Array(rows);
  return new Array(rows).fill(null);
}

function copyInto(target: Column, source: ArrayLike<unknown>, at: number): void {
  if (target instanceof BigInt64Array) {
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
