import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { THREADED_WRITER_FROM_BYTES } from "../../server/evidence/extract";
import { writerThreadStats } from "../../server/evidence/writer-thread";
import { callService, importArtifact, listRuns, showHead, type ServiceContext } from "../../server/services";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { failure } from "../helpers/failure";

describe("a value no int64 holds, through the import service", () => {
  it("fails a large trace whose last event is 1e17 µs after the first with ARTIFACT_PARSE_FAILED naming ts, after its spans were streamed to the writer thread, and publishes nothing", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    // Large enough for the threaded writer: span drafts go out while the file is parsed, the bad time comes last.
    const events = Array.from({ length: Math.ceil((THREADED_WRITER_FROM_BYTES + 2 ** 20) / 50) }, (_, i) => `{"name":"f${i % 50}","ph":"X","ts":${i * 10},"dur":5,"pid":1,"tid":1}`);
    events.push(`{"name":"late","ph":"X","ts":1e17,"dur":5,"pid":1,"tid":1}`);
    writeFileSync(path.join(root, "far.json"), `[${events.join(",")}]`);
    const head = await callService(showHead, ctx, {});
    const threads = writerThreadStats();

    const error = await failure(callService(importArtifact, ctx, { path: "far.json" }));
    expect(error.toDocument()).toMatchObject({ code: "ARTIFACT_PARSE_FAILED", details: { format: "chrome-trace", field: "ts" } });
    expect(writerThreadStats().started).toBe(threads.started + 1);

    const runId = (error.details as { run_id: string }).run_id;
    expect((await callService(listRuns, ctx, {})).items.find((r) => r.run_id === runId)).toMatchObject({ status: "failed", extraction_state: "failed" });
    expect((await callService(showHead, ctx, {})).commit_id).toBe(head.commit_id);
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      expect(ws.db.prepare("SELECT COUNT(*) AS n FROM generations").get()).toEqual({ n: 0 });
    } finally {
      ws.close();
    }
    expect(readdirSync(path.join(root, ".emberscope", "tmp"))).toEqual([]);
  }, 120_000);
});
