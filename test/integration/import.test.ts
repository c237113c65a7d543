import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { analyzeHotspots, callService, importArtifact, listArtifacts, listRuns, runViewFacts, showHead, summarizeRun, validateWorkspace, type ServiceContext } from "../../server/services";
import { THREADED_WRITER_FROM_BYTES } from "../../server/evidence/extract";
import { writerThreadStats } from "../../server/evidence/writer-thread";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { failure } from "../helpers/failure";

function setup(actor: ServiceContext["actor"] = "test") {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor };
  const file = (name: string, content: string | Buffer) => {
    const target = path.join(root, name);
    writeFileSync(target, content);
    return target;
  };
  return { root, ctx, file };
}

const FOLDED = ["main;parse;tokenize 30", "main;parse;hotLoop 120", "main;render 25", "main;hotLoop 5"].join("\n") + "\n";

describe("import service", () => {
  it("stores the artifact, extracts one generation, publishes a commit and answers hotspots", async () => {
    const { ctx, file } = setup();
    const threads = writerThreadStats();
    const result = await callService(importArtifact, ctx, { path: file("app.folded", FOLDED) });
    expect(writerThreadStats().started).toBe(threads.started); // a small input is written on this thread
    expect(result).toMatchObject({ format: "folded", reused_generation: false, limitations: [] });
    expect(result.rows).toMatchObject({ samples: 4, frames: 5 });
    expect(result.artifact_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const { store, parse, totals, write, total } = result.timings_ms;
    for (const ms of [store, parse, totals, write]) expect(ms).toBeGreaterThanOrEqual(0);
    expect(write).toBeGreaterThan(0); // Parquet files were written
    expect(total).toBeGreaterThanOrEqual(store + parse + totals + write - 4); // each phase rounds by ≤ 0.5 ms
    const head = await callService(showHead, ctx, {});
    expect(head.commit_id).toBe(result.commit_id);
    const runs = await callService(listRuns, ctx, {});
    expect(runs.items[0]).toMatchObject({ run_id: result.run_id, kind: "import", source: "folded", status: "succeeded", title: "app.folded" });
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id });
    expect(hotspots.rows[0]).toMatchObject({ name: "hotLoop", self: 125, total: 125 });
    expect(hotspots).toMatchObject({ metric: "samples", grand_total: 180, status: { state: "available" } });
    const summary = await callService(summarizeRun, ctx, { run_id: result.run_id });
    expect(summary.metrics).toEqual([expect.objectContaining({ name: "samples", total: 180 })]);
  });

  it("summarizes a trace of spans only with the wall_ns its spans' self times give", async () => {
    const { ctx, file } = setup();
    const trace = [
      { name: "Task", ph: "X", pid: 1, tid: 1, ts: 0, dur: 10 },
      { name: "Inner", ph: "X", pid: 1, tid: 1, ts: 2, dur: 3 },
    ];
    const result = await callService(importArtifact, ctx, { path: file("app.json", JSON.stringify(trace)) });
    expect(result.limitations.map((l) => l.code)).toEqual(["SAMPLES_FROM_SPANS"]);
    const summary = await callService(summarizeRun, ctx, { run_id: result.run_id });
    // Partial: its samples are derived, which the limitation says.
    expect(summary).toMatchObject({ spans: { spans: 2, edges: 0, measurements: 0 }, status: { state: "partial" } });
    // The run page's first facts (evidence.run_view) are the summary's, without its top frames and track lists.
    const facts = await callService(runViewFacts, ctx, { run_id: result.run_id });
    expect(facts).toEqual({ commit_id: summary.commit_id, metrics: summary.metrics, spans: summary.spans, primary_metric: summary.primary_metric, limitations: summary.limitations, metadata: summary.metadata });
    expect(facts.limitations.map((l) => l.code)).toEqual(["SAMPLES_FROM_SPANS"]);
    // Task's self time is 10 - 3 µs, Inner's 3 µs: together the 10 µs the trace spans.
    expect(summary.metrics).toEqual([expect.objectContaining({ name: "wall_ns", total: 10_000 })]);
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id, metric: "wall_ns" });
    expect(hotspots.rows.map((r) => [r.name, r.self, r.total])).toEqual([
      ["Task", 7_000, 10_000],
      ["Inner", 3_000, 3_000],
    ]);
  });

  it("fails an import that yields no samples, spans or measurements with ARTIFACT_EMPTY, naming what was passed over, and publishes nothing", async () => {
    const { ctx, file } = setup();
    const before = await callService(showHead, ctx, {});
    // Metadata and an object snapshot: a valid trace with nothing this importer shows.
    const trace = { traceEvents: [{ name: "process_name", ph: "M", pid: 1, args: { name: "p" } }, { name: "Snap", ph: "O", id: 1, pid: 1, tid: 1, ts: 5 }] };
    const error = await failure(callService(importArtifact, ctx, { path: file("nothing.json", JSON.stringify(trace)) }));
    expect(error.toDocument()).toMatchObject({ code: "ARTIFACT_EMPTY", retryable: false, details: { format: "chrome-trace", reason: "no samples, spans or measurements", skipped: [expect.objectContaining({ code: "UNSUPPORTED_PHASE", count: 1 })] } });
    expect(error.message).toMatch(/holds no samples, spans or measurements/);
    expect((await callService(showHead, ctx, {})).commit_id).toBe(before.commit_id);
    const runs = await callService(listRuns, ctx, {});
    expect(runs.items[0]).toMatchObject({ status: "failed", extraction_state: "failed", details: { error: { code: "ARTIFACT_EMPTY" } } });
    // The artifact stays with the failed run, as for a malformed input.
    expect((await callService(listArtifacts, ctx, {})).items).toHaveLength(1);
  });

  it("reuses identical bytes and their generation, but records a new run", async () => {
    const { ctx, file } = setup();
    const first = await callService(importArtifact, ctx, { path: file("a.folded", FOLDED) });
    const second = await callService(importArtifact, ctx, { path: file("b.folded", FOLDED) });
    expect(second.artifact_id).toBe(first.artifact_id);
    expect(second.generation_id).toBe(first.generation_id);
    expect(second.reused_generation).toBe(true);
    expect(second.timings_ms).toMatchObject({ parse: 0, totals: 0, write: 0 });
    expect(second.run_id).not.toBe(first.run_id);
    expect(second.rows).toEqual(first.rows);
    const artifacts = await callService(listArtifacts, ctx, {});
    expect(artifacts.items).toHaveLength(1);
    expect(artifacts.items[0].registrations).toHaveLength(2);
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: second.run_id });
    expect(hotspots.rows[0].name).toBe("hotLoop");
  });

  it("gunzips input transparently", async () => {
    const { ctx, file } = setup();
    const result = await callService(importArtifact, ctx, { path: file("app.folded.gz", gzipSync(FOLDED)) });
    expect(result.format).toBe("folded");
    expect(result.rows.samples).toBe(4);
  });

  it("refuses an unknown format with UNSUPPORTED_FORMAT listing the supported ones, storing nothing", async () => {
    const { ctx, file } = setup();
    const error = await failure(callService(importArtifact, ctx, { path: file("notes.bin", Buffer.from([0, 1, 2, 3, 250, 251, 252, 7, 8, 9])) }));
    expect(error.code).toBe("UNSUPPORTED_FORMAT");
    expect((error.details.supported as { format: string }[]).map((s) => s.format)).toContain("pprof");
    expect((await callService(listArtifacts, ctx, {})).items).toEqual([]);
  });

  it("says what a file no importer reads looks like: a ZIP archive, written by zip, is named as one", async () => {
    const { root, ctx, file } = setup();
    file("app.folded", FOLDED);
    execFileSync("zip", ["-q", "profiles.zip", "app.folded"], { cwd: root });
    const error = await failure(callService(importArtifact, ctx, { path: path.join(root, "profiles.zip") }));
    expect(error.code).toBe("UNSUPPORTED_FORMAT");
    expect(error.message).toMatch(/^This looks like a ZIP archive, which Emberscope cannot import \(extract the profile from it and import that\)\. Supported formats: /);
    expect(error.details.recognised).toEqual({ id: "zip", title: "a ZIP archive", hint: "extract the profile from it and import that" });
    const unknown = await failure(callService(importArtifact, ctx, { path: file("notes.bin", Buffer.from([0, 1, 2, 3, 250, 251, 252, 7, 8, 9])) }));
    expect(unknown.details.recognised).toBeNull();
    expect((await callService(listArtifacts, ctx, {})).items).toEqual([]);
  });

  it("reports an empty file as ARTIFACT_PARSE_FAILED at offset 0", async () => {
    const { ctx, file } = setup();
    const error = await failure(callService(importArtifact, ctx, { path: file("empty.folded", "") }));
    expect(error.toDocument()).toMatchObject({ code: "ARTIFACT_PARSE_FAILED", details: { offset: 0 } });
  });

  it("keeps the artifact and a failed run for malformed input, and publishes nothing", async () => {
    const { ctx, file } = setup();
    const before = await callService(showHead, ctx, {});
    const error = await failure(callService(importArtifact, ctx, { path: file("broken.folded", "main;a;b notanumber\n;;; -3\n"), format: "folded" }));
    expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
    expect(error.details).toMatchObject({ format: "folded", line: expect.any(Number) });
    expect((await callService(showHead, ctx, {})).commit_id).toBe(before.commit_id);
    const runs = await callService(listRuns, ctx, {});
    expect(runs.items[0]).toMatchObject({ status: "failed", extraction_state: "failed", details: { error: { code: "ARTIFACT_PARSE_FAILED" } } });
    expect((await callService(listArtifacts, ctx, {})).items).toHaveLength(1);
    expect((await callService(validateWorkspace, ctx, { full: true })).ok).toBe(true);
  });

  it("bounds size and gzip expansion with ARTIFACT_TOO_LARGE", async () => {
    const { ctx, file } = setup();
    const big = await failure(callService(importArtifact, ctx, { path: file("big.folded", FOLDED.repeat(100)), max_bytes: 1000 }));
    expect(big.toDocument()).toMatchObject({ code: "ARTIFACT_TOO_LARGE", details: { bound: "size", limit: 1000 } });
    const bomb = gzipSync(Buffer.concat([Buffer.from("main;a 1\n"), Buffer.alloc(300 * 1024 * 1024, 0x0a)]), { level: 9 });
    const error = await failure(callService(importArtifact, ctx, { path: file("bomb.folded.gz", bomb), format: "folded" }));
    expect(error.toDocument()).toMatchObject({ code: "ARTIFACT_TOO_LARGE", details: { bound: "expansion_ratio" } });
  }, 60_000);

  it("writes a large input on the writer thread: totals match the file's own counts", async () => {
    const { root, ctx, file } = setup();
    const lines: string[] = [];
    const selfByLeaf = new Map<string, number>();
    let total = 0;
    let bytes = 0;
    for (let i = 0; bytes < THREADED_WRITER_FROM_BYTES + 2 ** 20; i++) {
      const leaf = `leaf_${i % 997}`;
      const count = 1 + (i % 13);
      lines.push(`main;module_${i % 31}.handler;${"middle;".repeat(8)}${leaf} ${count}`);
      bytes += lines[lines.length - 1].length + 1;
      selfByLeaf.set(leaf, (selfByLeaf.get(leaf) ?? 0) + count);
      total += count;
    }
    const threads = writerThreadStats();
    const text = lines.join("\n") + "\n";
    const result = await callService(importArtifact, ctx, { path: file("big.folded", text) });
    expect(writerThreadStats()).toEqual({ started: threads.started + 1, live: threads.live });
    expect(result.rows.samples).toBe(lines.length);
    // Parsed while it was hashed: the artifact is still the address of the bytes, registered with the run.
    expect(result.artifact_id).toBe(`sha256:${createHash("sha256").update(text).digest("hex")}`);
    const registered = (await callService(listArtifacts, ctx, {})).items.flatMap((a) => a.registrations.map((r) => [a.artifact_id, r.run_id]));
    expect(registered).toEqual([[result.artifact_id, result.run_id]]);
    const top = await callService(analyzeHotspots, ctx, { run_id: result.run_id, limit: 20 });
    const highest = [...selfByLeaf.values()].sort((a, b) => b - a).slice(0, 20);
    expect(top.grand_total).toBe(total);
    expect(top.rows.map((r) => r.self)).toEqual(highest);
    for (const row of top.rows) expect(selfByLeaf.get(row.name)).toBe(row.self);
    expect(readdirSync(path.join(root, ".emberscope", "tmp"))).toEqual([]);
    // The same bytes again: hashed first, since a generation of that size exists, and reused.
    const again = await callService(importArtifact, ctx, { path: file("copy.folded", text) });
    expect(again).toMatchObject({ artifact_id: result.artifact_id, generation_id: result.generation_id, reused_generation: true });
    expect(writerThreadStats().started).toBe(threads.started + 1);
    expect(readdirSync(path.join(root, ".emberscope", "tmp"))).toEqual([]);
  }, 120_000);

  it("a large file that changes while it is imported fails with ARTIFACT_CHANGED and publishes nothing", async () => {
    const { root, ctx, file } = setup();
    const line = `main;${"frame;".repeat(20)}leaf 1\n`;
    const target = file("growing.folded", line.repeat(Math.ceil((THREADED_WRITER_FROM_BYTES * 2) / line.length)));
    const head = await callService(showHead, ctx, {});
    const importing = failure(callService(importArtifact, ctx, { path: target }));
    // Once the run exists the file was looked at; the parse of 32 MB is still under way.
    while ((await callService(listRuns, ctx, {})).items.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    appendFileSync(target, "main;late 1\n");
    const error = await importing;
    expect(error.toDocument()).toMatchObject({ code: "ARTIFACT_CHANGED", retryable: true, recovery: { operation: "imports.import", arguments: { path: target } } });
    expect((await callService(showHead, ctx, {})).commit_id).toBe(head.commit_id);
    expect((await callService(listRuns, ctx, {})).items[0]).toMatchObject({ status: "failed" });
    expect(readdirSync(path.join(root, ".emberscope", "tmp"))).toEqual([]);
  }, 120_000);

  it("a gzipped input is judged by the size it expands to", async () => {
    const { ctx, file } = setup();
    const line = `main;${"frame;".repeat(30)}leaf 1\n`;
    const text = line.repeat(Math.ceil((THREADED_WRITER_FROM_BYTES + 2 ** 20) / line.length));
    const threads = writerThreadStats();
    const result = await callService(importArtifact, ctx, { path: file("big.folded.gz", gzipSync(text)) });
    expect(result.rows.samples).toBe(text.length / line.length);
    expect(writerThreadStats().started).toBe(threads.started + 1);
  }, 120_000);

  it("a large input that turns out malformed publishes nothing and leaves no staging behind", async () => {
    const { root, ctx, file } = setup();
    const events = Array.from({ length: Math.ceil((THREADED_WRITER_FROM_BYTES + 2 ** 20) / 50) }, (_, i) => `{"name":"f${i % 50}","ph":"X","ts":${i * 10},"dur":5,"pid":1,"tid":1}`);
    const head = await callService(showHead, ctx, {});
    const threads = writerThreadStats();
    const text = `[${events.join(",")},{"name": oops}]`;
    const error = await failure(callService(importArtifact, ctx, { path: file("broken.json", text) }));
    expect(error.code).toBe("ARTIFACT_PARSE_FAILED");
    // The native artifact is kept (stored once its hash was known) and registered with the failed run.
    const artifactId = `sha256:${createHash("sha256").update(text).digest("hex")}`;
    expect(error.details).toMatchObject({ artifact_id: artifactId });
    const runId = (error.details as { run_id: string }).run_id;
    const registered = (await callService(listArtifacts, ctx, {})).items.flatMap((a) => a.registrations.map((r) => [a.artifact_id, r.run_id]));
    expect(registered).toEqual([[artifactId, runId]]);
    expect((await callService(listRuns, ctx, {})).items.find((r) => r.run_id === runId)).toMatchObject({ status: "failed" });
    expect(writerThreadStats()).toEqual({ started: threads.started + 1, live: threads.live });
    expect((await callService(showHead, ctx, {})).commit_id).toBe(head.commit_id);
    expect(readdirSync(path.join(root, ".emberscope", "tmp"))).toEqual([]);
  }, 120_000);

  it("confines agents to the project root and names missing files", async () => {
    const { ctx } = setup("agent");
    const outside = await failure(callService(importArtifact, ctx, { path: "/etc/hostname" }));
    expect(outside.code).toBe("POLICY_DENIED");
    expect(outside.message).not.toContain("/etc");
    const missing = await failure(callService(importArtifact, ctx, { path: "nope.folded" }));
    expect(missing.toDocument()).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "path" } });
  });
});
