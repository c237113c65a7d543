import { InputBoundError } from "../formats/errors";

export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * `bytes` if it holds `needed` bytes, else a larger buffer (twice as large, or `needed`) holding
 * its first `used` bytes: for buffers that grow as they fill.
 */
export function withRoom(bytes: Uint8Array, used: number, needed: number): Uint8Array {
  if (needed <= bytes.length) return bytes;
  const grown = new Uint8Array(Math.max(needed, bytes.length * 2));
  grown.set(bytes.subarray(0, used));
  return grown;
}

/** Concatenates chunks (for small structures only; large inputs stay chunked). */
export function concatBytes(chunks: Uint8Array[]): Uint8Array {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Gunzips a chunk stream with the platform's DecompressionStream (browser and Node alike),
 * failing once the output exceeds `maxRatio` × the compressed bytes read so far (zip bombs).
 */
export async function* gunzip(chunks: AsyncIterable<Uint8Array>, maxRatio: number, minAllowance = 64 * 1024 * 1024): AsyncGenerator<Uint8Array> {
  const stream = new DecompressionStream("gzip");
  const writer = stream.writable.getWriter();
  let compressed = 0;
  const feeding = (async () => {
    try {
      for await (const chunk of chunks) {
        compressed += chunk.length;
        await writer.write(chunk as Uint8Array<ArrayBuffer>);
      }
      await writer.close();
    } catch (error) {
      await writer.abort(error).catch(() => undefined);
    }
  })();
  const reader = stream.readable.getReader();
  let expanded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      expanded += value.length;
      if (expanded > Math.max(minAllowance, compressed * maxRatio)) {
        throw new InputBoundError("expansion_ratio", maxRatio, `The gzip stream expands more than ${maxRatio}× its compressed size.`);
      }
      yield value;
    }
  } finally {
    reader.releaseLock();
    await feeding;
  }
}
