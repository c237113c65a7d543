import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import { getCommit, headCommit, pin, publishGeneration } from "../../server/store/corpus";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { seedImport } from "../helpers/seed";

describe("corpus commits", () => {
  it("starts at an empty root commit that HEAD names", () => {
    const ws = initWorkspace(tempProject());
    try {
      const head = headCommit(ws.db);
      expect(head).toMatchObject({ seq: 0, parent_id: null, generation_count: 0 });
      expect(pin(ws.db, "HEAD").generations).toEqual([]);
    } finally {
      ws.close();
    }
  });

  it("publishes each generation as a new commit whose parent is HEAD", async () => {
    const ws = initWorkspace(tempProject());
    try {
      const root = headCommit(ws.db);
      const a = await seedImport(ws, { title: "a", native: "a;b 1" });
      const b = await seedImport(ws, { title: "b", native: "a;c 2" });
      const head = headCommit(ws.db);
      expect(head.commit_id).toBe(b.published.commit_id);
      expect(head.parent_id).toBe(a.published.commit_id);
      expect(getCommit(ws.db, a.published.commit_id).parent_id).toBe(root.commit_id);
      expect(head.seq).toBe(2);
      const pinned = pin(ws.db, "HEAD");
      expect(pinned.generations.map((g) => g.generation_id).sort()).toEqual([a.published.generation_id, b.published.generation_id].sort());
      expect(pinned.generations[0].files.map((f) => f.table)).toEqual(["frames", "samples"]);
    } finally {
      ws.close();
    }
  });

  it("keeps a pinned commit's view unchanged by later publishes", async () => {
    const ws = initWorkspace(tempProject());
    try {
      const a = await seedImport(ws, { title: "a", native: "x 1" });
      const before = pin(ws.db, a.published.commit_id);
      await seedImport(ws, { title: "b", native: "y 1" });
      expect(pin(ws.db, a.published.commit_id)).toEqual(before);
      expect(pin(ws.db, "HEAD").generations).toHaveLength(2);
    } finally {
      ws.close();
    }
  });

  it("re-publishing the same artifact with the same extractor version reuses the generation and adds no commit", async () => {
    const ws = initWorkspace(tempProject());
    try {
      const a = await seedImport(ws, { title: "a", native: "x 1" });
      const again = publishGeneration(ws, {
        artifactId: a.artifactId,
        runId: a.run.run_id,
        extractor: "test-extractor",
        extractorVersion: "1",
        evidenceSchemaVersion: 1,
        files: [],
      });
      expect(again).toEqual({ generation_id: a.published.generation_id, commit_id: a.published.commit_id, created: false });
      expect(headCommit(ws.db).seq).toBe(1);
    } finally {
      ws.close();
    }
  });

  it("names an unknown commit with COMMIT_NOT_FOUND", () => {
    const ws = initWorkspace(tempProject());
    try {
      expect(() => pin(ws.db, "cmt_missing")).toThrow(EmberscopeError);
      try {
        pin(ws.db, "cmt_missing");
      } catch (error) {
        expect((error as EmberscopeError).code).toBe("COMMIT_NOT_FOUND");
      }
    } finally {
      ws.close();
    }
  });
});
