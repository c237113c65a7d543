import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { heldWorkspace, releaseHeldWorkspaces, RETIRED_HANDLE_CLOSE_MS } from "../../server/mcp/held-workspace";
import { viewForAgent } from "../../server/mcp/view";
import { callService, importArtifact, setAgentAccess } from "../../server/services";
import { pin } from "../../server/store/corpus";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { memoryClient } from "./clients";

afterEach(() => releaseHeldWorkspaces());

function importFolded(root: string, name: string, stacks: string) {
  writeFileSync(path.join(root, name), stacks);
  return callService(importArtifact, { locator: { cwd: root, projectRoot: root }, actor: "cli" }, { path: name });
}

/** What a long-lived server keeps between calls must never outlive the facts it was read from. */
describe("what the MCP server keeps between calls", () => {
  it("a held handle whose workspace was re-created is replaced at once and closed later", () => {
    const root = tempProject();
    initWorkspace(root).close();
    const locator = { cwd: root, projectRoot: root };
    vi.useFakeTimers();
    try {
      const first = heldWorkspace(locator)!;
      expect(heldWorkspace(locator)).toBe(first);
      rmSync(path.join(root, ".emberscope"), { recursive: true, force: true });
      initWorkspace(root).close();
      const second = heldWorkspace(locator)!;
      expect(second).not.toBe(first);
      // A call still running on the old handle may finish on it...
      expect(first.db.open).toBe(true);
      vi.advanceTimersByTime(RETIRED_HANDLE_CLOSE_MS);
      // ...but it does not stay open for the server's life.
      expect(first.db.open).toBe(false);
      expect(second.db.open).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a pinned commit is kept per connection, yet HEAD names a commit published by another connection at once", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const ws = heldWorkspace({ cwd: root, projectRoot: root })!;
    const empty = pin(ws.db, "HEAD");
    expect(pin(ws.db, "HEAD")).toBe(empty);
    // Another connection (as the CLI in another process would) publishes a new commit.
    const first = await importFolded(root, "a.folded", "main;work 5\n");
    const head = pin(ws.db, "HEAD");
    expect(head.commit_id).toBe(first.commit_id);
    expect(head.generations).toHaveLength(1);
    // An older commit stays exactly as it was.
    expect(pin(ws.db, empty.commit_id)).toEqual(empty);
    expect(empty.generations).toEqual([]);
  });

  it("HEAD also follows a commit published on the same connection", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const locator = { cwd: root, projectRoot: root };
    const ws = heldWorkspace(locator)!;
    const before = pin(ws.db, "HEAD");
    writeFileSync(path.join(root, "b.folded"), "main;other 3\n");
    const published = await callService(importArtifact, { locator, actor: "agent", heldWorkspace: () => ws }, { path: "b.folded" });
    expect(pin(ws.db, "HEAD").commit_id).toBe(published.commit_id);
    expect(pin(ws.db, "HEAD").commit_id).not.toBe(before.commit_id);
  });

  it("a commit pinned inside a transaction that is rolled back is not kept", () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const parent = pin(ws.db, "HEAD");
      let doomed = "";
      expect(() =>
        ws.db.transaction(() => {
          doomed = "cmt_doomed";
          ws.db.prepare("INSERT INTO commits (id, seq, parent_id, message, created_at) VALUES (?, ?, ?, 'x', 'now')").run(doomed, parent.seq + 1, parent.commit_id);
          expect(pin(ws.db, "HEAD").commit_id).toBe(doomed);
          throw new Error("roll back");
        })(),
      ).toThrow("roll back");
      expect(() => pin(ws.db, doomed)).toThrow(expect.objectContaining({ code: "COMMIT_NOT_FOUND" }));
      expect(pin(ws.db, "HEAD")).toBe(parent);
    } finally {
      ws.close();
    }
  });

  it("kept commits are shared read-only: changing one throws instead of changing what later readers see", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    await importFolded(root, "a.folded", "main;work 5\n");
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const pinned = pin(ws.db, "HEAD");
      expect(() => pinned.generations.push(pinned.generations[0])).toThrow(TypeError);
      expect(() => ((pinned.generations[0].files[0] as { object_id: string }).object_id = "x")).toThrow(TypeError);
      expect(pin(ws.db, "HEAD").generations).toHaveLength(1);
    } finally {
      ws.close();
    }
  });

  it("an agent's next hotspots call reads the commit a person's import just published", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const run = await importFolded(root, "a.folded", "main;work 5\nmain;idle 1\n");
    const agent = await memoryClient(root, { held: true });
    try {
      const before = await agent.call("analyze_hotspots", { run_id: run.run_id });
      expect(before.ok && before.value.commit_id).toBe(run.commit_id);
      const later = await importFolded(root, "b.folded", "main;other 3\n");
      const after = await agent.call("analyze_hotspots", { run_id: run.run_id });
      expect(after.ok && after.value.commit_id).toBe(later.commit_id);
      const other = await agent.call("analyze_hotspots", { run_id: later.run_id });
      expect(other.ok && other.value.rows.map((r: { name: string }) => r.name)).toContain("other");
    } finally {
      await agent.close();
    }
  });

  it("redacts a string first seen after the projections of earlier calls were kept", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    await callService(setAgentAccess, { locator: { cwd: root, projectRoot: root }, actor: "cli" }, { enabled: true });
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const options = { ws, projectRoot: root, detail: "redacted" as const };
      const seen = { rows: [{ name: "main", file: "src/main.js" }] };
      viewForAgent(seen, options);
      // Every string already projected: this call needs no redactor at all.
      expect(viewForAgent(seen, options).report.redacted.PATH).toBe(0);
      const fresh = viewForAgent({ rows: [{ name: "main", file: "/opt/secret-place/app.js", password: "hunter2hunter2" }] }, options);
      expect(fresh.value.rows[0].file).toMatch(/^PATH_[0-9a-f]{6}$/);
      expect(fresh.value.rows[0].password).toMatch(/^SECRET_[0-9a-f]{6}$/);
      expect(fresh.report.redacted).toMatchObject({ PATH: 1, SECRET: 1 });
    } finally {
      ws.close();
    }
  });
});
