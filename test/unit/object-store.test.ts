import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import type { ObjectId } from "../../server/store/object-store";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

describe("object store", () => {
  it("stores bytes at objects/sha256/ab/<hex>, read-only, once per content", async () => {
    const ws = initWorkspace(tempProject());
    try {
      const bytes = Buffer.from("main;work;hot 42\n");
      const hex = createHash("sha256").update(bytes).digest("hex");
      const first = await ws.objects.put(bytes);
      expect(first).toEqual({ id: `sha256:${hex}`, size: bytes.length, created: true });
      const file = ws.objects.pathOf(first.id);
      expect(file.endsWith(`objects/sha256/${hex.slice(0, 2)}/${hex}`)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o444);
      const again = await ws.objects.put(Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]));
      expect(again).toEqual({ id: first.id, size: bytes.length, created: false });
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
      expect((await ws.objects.read(first.id, bytes.length)).equals(bytes)).toBe(true);
    } finally {
      ws.close();
    }
  });

  it("streams large inputs chunk by chunk and hashes them exactly", async () => {
    const ws = initWorkspace(tempProject());
    try {
      const chunk = Buffer.alloc(1 << 20, 7);
      const hash = createHash("sha256");
      async function* chunks() {
        for (let i = 0; i < 24; i++) {
          hash.update(chunk);
          yield chunk;
        }
      }
      const stored = await ws.objects.put(chunks());
      expect(stored.size).toBe(24 << 20);
      expect(stored.id).toBe(`sha256:${hash.digest("hex")}`);
      expect(await ws.objects.verifyContent(stored.id)).toBe(true);
    } finally {
      ws.close();
    }
  });

  it("stores a file by copying it: the same address as its bytes put, once per content, nothing left in tmp/", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const source = path.join(root, "big.bin");
      const bytes = Buffer.alloc(3 * (1 << 20) + 12_345);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 11)) & 0xff;
      writeFileSync(source, bytes, { mode: 0o640 });
      const stored = await ws.objects.putFile(source);
      expect(stored).toEqual({ id: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, size: bytes.length, created: true });
      expect(statSync(ws.objects.pathOf(stored.id)).mode & 0o777).toBe(0o444);
      expect(await ws.objects.verifyContent(stored.id)).toBe(true);
      expect(await ws.objects.put(bytes)).toEqual({ ...stored, created: false });
      expect(await ws.objects.putFile(source)).toEqual({ ...stored, created: false });
      const empty = path.join(root, "empty.bin");
      writeFileSync(empty, "");
      expect(await ws.objects.putFile(empty)).toMatchObject({ id: `sha256:${createHash("sha256").digest("hex")}`, size: 0 });
      await expect(ws.objects.putFile(path.join(root, "missing.bin"))).rejects.toMatchObject({ code: "ENOENT" });
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    } finally {
      ws.close();
    }
  });

  it("stores a file of its own by moving it from tmp/ (copying one from elsewhere); the file is gone either way", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const bytes = Buffer.from("parquet bytes, say");
      const id = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      const inTmp = path.join(ws.layout.tmp, "extract-1", "spans.parquet");
      mkdirSync(path.dirname(inTmp), { recursive: true });
      writeFileSync(inTmp, bytes);
      const inode = statSync(inTmp).ino;
      expect(await ws.objects.putOwnFile(inTmp)).toEqual({ id, size: bytes.length, created: true });
      // Moved, not copied: the stored object is the same file.
      expect(statSync(ws.objects.pathOf(id as ObjectId)).ino).toBe(inode);
      expect(existsSync(inTmp)).toBe(false);
      const elsewhere = path.join(root, "spans.parquet");
      writeFileSync(elsewhere, bytes);
      expect(await ws.objects.putOwnFile(elsewhere)).toEqual({ id, size: bytes.length, created: false });
      expect(existsSync(elsewhere)).toBe(false);
      await expect(ws.objects.putOwnFile(path.join(ws.layout.tmp, "missing.parquet"))).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      ws.close();
    }
  });

  it("stages a file to be read while it is hashed on another thread: the same address as its bytes put", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const source = path.join(root, "big.bin");
      const bytes = Buffer.alloc(9 * (1 << 20) + 777);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 17 + (i >> 13)) & 0xff;
      writeFileSync(source, bytes);
      const staged = await ws.objects.stageFile(source);
      expect(staged.size).toBe(bytes.length);
      // Readable at once; the source may change afterwards without touching what is stored.
      expect(readFileSync(staged.path).equals(bytes)).toBe(true);
      writeFileSync(source, "changed");
      const stored = await staged.store();
      expect(stored).toEqual({ id: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, size: bytes.length, created: true });
      expect(await staged.store()).toBe(stored);
      expect(await ws.objects.verifyContent(stored.id)).toBe(true);
      expect(statSync(ws.objects.pathOf(stored.id)).mode & 0o777).toBe(0o444);
      // Identical bytes staged again settle on the same object.
      writeFileSync(source, bytes);
      expect(await (await ws.objects.stageFile(source)).store()).toEqual({ ...stored, created: false });
      writeFileSync(source, "");
      expect(await (await ws.objects.stageFile(source)).store()).toMatchObject({ id: `sha256:${createHash("sha256").digest("hex")}`, size: 0 });
      await expect(ws.objects.stageFile(path.join(root, "missing.bin"))).rejects.toMatchObject({ code: "ENOENT" });
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
    } finally {
      ws.close();
    }
  });

  it("a staged copy that disappears before it is stored fails the store and leaves nothing behind", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const source = path.join(root, "gone.bin");
      writeFileSync(source, Buffer.alloc(1 << 20, 7));
      const staged = await ws.objects.stageFile(source);
      rmSync(staged.path);
      await expect(staged.store()).rejects.toThrow();
      expect(readdirSync(ws.layout.tmp)).toEqual([]);
      expect(readdirSync(ws.layout.objects, { recursive: true }).filter((f) => String(f).length > 10)).toEqual([]);
    } finally {
      ws.close();
    }
  });

  it("verifies size on read and content on demand", async () => {
    const ws = initWorkspace(tempProject());
    try {
      const stored = await ws.objects.put(Buffer.from("0123456789"));
      const file = ws.objects.pathOf(stored.id);
      chmodSync(file, 0o644);
      truncateSync(file, 4);
      await expect(ws.objects.read(stored.id, 10)).rejects.toMatchObject({ code: "ARTIFACT_NOT_FOUND" });
      writeFileSync(file, "9876543210");
      expect(await ws.objects.verifySize(stored.id, 10)).toBe(true);
      expect(await ws.objects.verifyContent(stored.id)).toBe(false);
    } finally {
      ws.close();
    }
  });

  it("rejects anything that is not a content address", () => {
    const ws = initWorkspace(tempProject());
    try {
      expect(() => ws.objects.pathOf("sha256:../../etc/passwd" as never)).toThrow(EmberscopeError);
    } finally {
      ws.close();
    }
  });
});
