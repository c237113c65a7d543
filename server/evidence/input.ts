import { createReadStream, promises as fsp } from "node:fs";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { EvidenceParseError, InputBoundError } from "../../analysis/formats/errors";
import { isGzip } from "../../analysis/io/bytes";

export const SNIFF_BYTES = 64 * 1024;
/** Bytes per chunk read from a file (and per chunk gunzip gives). */
const CHUNK_BYTES = 1 << 20;

/** Bounds on one import, from configuration (defaults per DESIGN.md §6). */
export interface InputBounds {
  maxBytes: number;
  maxExpansionRatio: number;
}

export const DEFAULT_INPUT_BOUNDS: InputBounds = {
  maxBytes: 4 * 1024 ** 3,
  maxExpansionRatio: 200,
};

/** Bytes [start, end) of a file, fewer where it ends first. */
export async function readRange(file: string, start: number, end: number): Promise<Buffer> {
  const handle = await fsp.open(file, "r");
  try {
    const buffer = Buffer.alloc(Math.max(0, end - start));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * About how many bytes a parse of the file reads: its size, or for gzip the size its trailer
 * records (modulo 4 GiB, and of the last member only: a hint, not a bound).
 */
export async function expectedInputBytes(file: string): Promise<number> {
  const handle = await fsp.open(file, "r");
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.alloc(4);
    await handle.read(bytes, 0, 2, 0);
    if (size < 18 || !isGzip(bytes.subarray(0, 2))) return size;
    await handle.read(bytes, 0, 4, size - 4);
    return Math.max(size, bytes.readUInt32LE(0));
  } finally {
    await handle.close();
  }
}

/**
 * The decompressed bytes of a stored file as a chunk stream. Gzip is undone here, once for every
 * format, and an expansion beyond `maxExpansionRatio` × the compressed size fails with an
 * InputBoundError (a decompression bomb) instead of filling the disk or memory.
 *
 * `reuse` (see ImportSource.chunks): a plain file is read into two buffers in turn, not a new one
 * per chunk; each chunk is then valid until the next is asked for.
 */
export async function* decompressedChunks(file: string, bounds: InputBounds, reuse = false): AsyncGenerator<Uint8Array> {
  const head = await readRange(file, 0, 2);
  if (!isGzip(head)) {
    if (reuse) yield* reusedChunks(file);
    else for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) yield chunk as Buffer;
    return;
  }
  const compressedSize = (await fsp.stat(file)).size;
  const limit = Math.max(64 * 1024 * 1024, compressedSize * bounds.maxExpansionRatio);
  let expanded = 0;
  const gunzip = createReadStream(file, { highWaterMark: CHUNK_BYTES }).pipe(createGunzip({ chunkSize: CHUNK_BYTES }));
  const chunks = (gunzip as Readable)[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch {
        throw new EvidenceParseError("gzip", "corrupt or truncated gzip stream", { offset: expanded });
      }
      if (next.done) break;
      expanded += next.value.length;
      if (expanded > limit) {
        throw new InputBoundError("expansion_ratio", bounds.maxExpansionRatio, `The gzip stream expands more than ${bounds.maxExpansionRatio}× its compressed size.`);
      }
      yield next.value;
    }
  } finally {
    gunzip.destroy();
  }
}

/**
 * A file's bytes read into two buffers in turn (see decompressedChunks): the next chunk is read
 * into one while the other is being parsed, as a stream reads ahead.
 */
async function* reusedChunks(file: string): AsyncGenerator<Uint8Array> {
  const handle = await fsp.open(file, "r");
  const buffers = [new Uint8Array(CHUNK_BYTES), new Uint8Array(CHUNK_BYTES)];
  const readInto = (buffer: Uint8Array) => {
    const read = handle.read(buffer, 0, CHUNK_BYTES, null);
    // Its failure reaches the reader when it asks for the chunk; until then (the reader parses
    // the one before) it must not count as unhandled, which would end the process.
    read.catch(() => undefined);
    return read;
  };
  let reading = readInto(buffers[0]);
  try {
    for (let turn = 0; ; turn ^= 1) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) return;
      reading = readInto(buffers[turn ^ 1]);
      yield buffers[turn].subarray(0, bytesRead);
    }
  } finally {
    // A reader that stops early leaves a read under way.
    await reading.catch(() => undefined);
    await handle.close();
  }
}

/** The first bytes of the decompressed input, for format detection. A broken gzip header yields what it can. */
export async function sniffHead(file: string, bounds: InputBounds): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of decompressedChunks(file, bounds)) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= SNIFF_BYTES) break;
    }
  } catch {
    // A corrupt stream is reported by the importer with its offset; detection uses what was read.
  }
  return Buffer.concat(parts).subarray(0, SNIFF_BYTES);
}
