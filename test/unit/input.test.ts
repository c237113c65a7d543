import { promises as fsp, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
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
    const openFiles = () => readdirSync("/proc/self/fd").length;
    const before = openFiles();
    let chunks = 0;
    for await (const chunk of decompressedChunks(file, DEFAULT_INPUT_BOUNDS, true)) {
      expect(chunk.length).toBe(2 ** 20);
      expect(openFiles()).toBe(before + 1);
      if (++chunks === 1) break;
    }
    expect(chunks).toBe(1);
    expect(openFiles()).toBe(before);
  });

  it("fails the reader, not the process, when the read ahead fails while the reader works on a chunk", async () => {
    const dir = tempProject();
    const file = path.join(dir, "input.json");
    writeFileSync(file, Buffer.alloc(3 * 2 ** 20, 0x20));
    // The file's second read (the one ahead, under way while the first chunk is parsed) fails.
    const open = fsp.open.bind(fsp);
    const opening = vi.spyOn(fsp, "open").mockImplementation(async (...args: Parameters<typeof fsp.open>) => {
      const handle = await open(...args);
      const read = handle.read.bind(handle) as (...a: unknown[]) => Promise<unknown>;
      let reads = 0;
      (handle as { read: unknown }).read = (...a: unknown[]) => (++reads === 2 ? Promise.reject(new Error("EIO: i/o error, read")) : read(...a));
      return handle;
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const reading = (async () => {
        for await (const _chunk of decompressedChunks(file, DEFAULT_INPUT_BOUNDS, true)) {
          // A parse and a checkpoint that waits for the writer.
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await expect(reading).rejects.toThrow(/EIO/);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      opening.mockRestore();
    }
  });

  it("gunzips as before when asked to reuse memory (gunzip's chunks are its own)", async () => {
    const dir = tempProject();
    const file = path.join(dir, "input.json.gz");
    const content = Buffer.from("[" + Array.from({ length: 50_000 }, (_, i) => `{"ph":"X","ts":${i}}`).join(",") + "]");
    writeFileSync(file, gzipSync(content));
    expect((await read(file, true)).bytes.equals(content)).toBe(true);
  });
});
