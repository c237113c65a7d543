import { writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { DEFAULT_INPUT_BOUNDS, decompressedChunks } from "../../server/evidence/input";
import { tempProject } from "../helpers/project";

/** Every chunk, copied as it comes (before the next is asked for), and the distinct buffers they lay in. */
async function read(file: string, reuse: boolean): Promise<{ bytes: Buffer; chunks: number; buffers: number }> {
  const copies: Uint8Array[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const chunk of decompressedChunks(file, DEFAULT_INPUT_BOUNDS, reuse)) {
    copies.push(chunk.slice());
    buffers.add(chunk.buffer);
  }
  return { bytes: Buffer.concat(copies), chunks: copies.length, buffers: buffers.size };
}

describe("decompressedChunks", () => {
  it("reads a file into two buffers in turn when asked to reuse memory, giving the same bytes as fresh chunks", async () => {
    const dir = tempProject();
    const file = path.join(dir, "input.json");
    // Three and a half chunks of varied bytes.
    const content = Buffer.from(Array.from({ length: 3.5 * 2 ** 20 }, (_, i) => (i * 7919) % 251));
    writeFileSync(file, content);
    const fresh = await read(file, false);
    const reused = await read(file, true);
    expect(fresh.bytes.equals(content)).toBe(true);
    expect(reused.bytes.equals(content)).toBe(true);
    expect(reused.chunks).toBe(4);
    expect(reused.buffers).toBe(2);
    expect(fresh.buffers).toBeGreaterThanOrEqual(4);
  });

  it("closes the file when its reader stops early, with the next chunk's read under way", async () => {
    const dir = tempProject();
    const file = path.join(dir, "input.json");
    writeFileSync(file, Buffer.alloc(3 * 2 ** 20, 0x20));
    let chunks = 0;
    for await (const chunk of decompressedChunks(file, DEFAULT_INPUT_BOUNDS, true)) {
      expect(chunk.length).toBe(2 ** 20);
      if (++chunks === 1) break;
    }
    expect(chunks).toBe(1);
  });

  it("gunzips as before when asked to reuse memory (gunzip's chunks are its own)", async () => {
    const dir = tempProject();
    const file = path.join(dir, "input.json.gz");
    const content = Buffer.from("[" + Array.from({ length: 50_000 }, (_, i) => `{"ph":"X","ts":${i}}`).join(",") + "]");
    writeFileSync(file, gzipSync(content));
    expect((await read(file, true)).bytes.equals(content)).toBe(true);
  });
});
