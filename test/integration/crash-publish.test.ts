import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { callService } from "../../server/services/service";
import { validateWorkspace } from "../../server/services/validate";
import { headCommit, pin } from "../../server/store/corpus";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { REPO_ROOT } from "../helpers/cli";
import { tempProject } from "../helpers/project";

const PUBLISHER = path.join(REPO_ROOT, "test", "fixtures", "publish-loop.ts");

function startPublisher(root: string, count: number | "forever", label: string): { child: ChildProcess; lines: string[]; ready: Promise<void>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", PUBLISHER, root, String(count === "forever" ? "Infinity" : count), label], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffer = "";
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      buffer += d;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (line === "ready") resolve();
      }
    });
    child.on("exit", () => reject(new Error(`publisher exited before ready: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, ready, exited };
}

async function assertHealthy(root: string, atLeastPublished: number) {
  const ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" as const };
  const report = await callService(validateWorkspace, ctx, { full: true });
  expect(report.problems).toEqual([]);
  const ws = openWorkspace({ cwd: root, projectRoot: root });
  try {
    const head = headCommit(ws.db);
    const commits = (ws.db.prepare("SELECT count(*) AS n FROM commits").get() as { n: number }).n;
    expect(head.seq).toBe(commits - 1);
    expect(commits - 1).toBeGreaterThanOrEqual(atLeastPublished);
    const pinned = pin(ws.db, "HEAD");
    expect(pinned.generations).toHaveLength(head.seq);
    for (const g of pinned.generations) {
      for (const f of g.files) expect(await ws.objects.verifySize(f.object_id as never, f.size_bytes)).toBe(true);
    }
    return head.seq;
  } finally {
    ws.close();
  }
}

describe("publishing under crashes and concurrency", () => {
  it("leaves HEAD valid and the workspace openable when the publisher is killed -9 at random points", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    let published = 0;
    const KILLS = 15;
    for (let i = 0; i < KILLS; i++) {
      const publisher = startPublisher(root, "forever", `k${i}`);
      await publisher.ready;
      // Killed at a random point of a later publish, after its first one is in: on a busy machine a
      // fixed delay from start could land before any publish at all, and test nothing.
      for (let waited = 0; !publisher.lines.some((l) => l.startsWith("published")) && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 250));
      publisher.child.kill("SIGKILL");
      await publisher.exited;
      published += publisher.lines.filter((l) => l.startsWith("published")).length;
      const seq = await assertHealthy(root, published);
      published = seq;
    }
    expect(published).toBeGreaterThanOrEqual(KILLS);
  }, 120_000);

  it("serializes concurrent publishers without losing a commit", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const EACH = 25;
    const publishers = ["a", "b", "c"].map((label) => startPublisher(root, EACH, label));
    const codes = await Promise.all(publishers.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0]);
    const seq = await assertHealthy(root, 3 * EACH);
    expect(seq).toBe(3 * EACH);
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const chain = ws.db.prepare("SELECT c.seq, p.seq AS parent_seq FROM commits c LEFT JOIN commits p ON p.id = c.parent_id ORDER BY c.seq").all() as { seq: number; parent_seq: number | null }[];
      expect(chain.every((c) => c.seq === 0 || c.parent_seq === c.seq - 1)).toBe(true);
      const titles = ws.db.prepare("SELECT title FROM runs").all() as { title: string }[];
      for (const label of ["a", "b", "c"]) expect(titles.filter((t) => t.title.startsWith(`${label}-`))).toHaveLength(EACH);
    } finally {
      ws.close();
    }
  }, 120_000);
});
