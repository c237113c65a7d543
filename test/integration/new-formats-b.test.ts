// End-to-end imports of the second half of issue 19's new formats (V8 --prof logs, Java Flight
// Recorder) and of demangled native frames, through the import service: detection, Parquet files
// in the object store, a commit, and hotspots whose totals agree with the tools' own readers
// (node --prof-process, jfr print, c++filt), kept beside the fixtures.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sqlString } from "../../server/evidence/duckdb";
import { analyzeHotspots, callService, importArtifact, summarizeRun, type ServiceContext } from "../../server/services";
import { pin } from "../../server/store/corpus";
import type { ObjectId } from "../../server/store/object-store";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { queryDuckDb } from "../helpers/duckdb";
import { tempProject } from "../helpers/project";

const FIXTURES = new URL("../fixtures/", import.meta.url);

function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
  const bring = (fixture: string, name = path.basename(fixture)) => {
    const target = path.join(root, name);
    copyFileSync(new URL(fixture, FIXTURES), target);
    return target;
  };
  return { root, ctx, bring };
}

/** Every hotspot row of a run's metric (self, total by frame name; names are unique in these fixtures). */
async function hotspots(ctx: ServiceContext, runId: string, metric: string) {
  const page = await callService(analyzeHotspots, ctx, { run_id: runId, metric, limit: 1000 });
  return { grandTotal: page.grand_total, byName: new Map(page.rows.map((r) => [r.name, r])) };
}

/** The rows of one table of the generation at HEAD, read back from its Parquet file by DuckDB. */
async function tableAtHead(root: string, generationId: string, table: string, columns: string): Promise<Record<string, unknown>[]> {
  const ws = openWorkspace({ cwd: root, projectRoot: root });
  try {
    const generation = pin(ws.db, "HEAD").generations.find((g) => g.generation_id === generationId)!;
    const file = generation.files.find((f) => f.table === table)!;
    return (await queryDuckDb(`SELECT ${columns} FROM read_parquet(${sqlString(ws.objects.pathOf(file.object_id as ObjectId))}) ORDER BY 1`)).objects;
  } finally {
    ws.close();
  }
}

/** node --prof-process's flat profile: ticks of each JavaScript function (tiers summed), by `name file:line:col`. */
function tickProcessorJs(fixture: string): { ticks: number; js: Map<string, number> } {
  const out = readFileSync(new URL(fixture, FIXTURES), "utf8");
  const js = new Map<string, number>();
  for (const m of out.split("[JavaScript]:")[1].split("\n\n")[0].matchAll(/^\s+(\d+)\s+[\d.]+%\s+[\d.]+%\s+\w+: [~*^+]?"?(\S*) (\S+):\d+:\d+"?$/gm)) {
    js.set(m[2], (js.get(m[2]) ?? 0) + Number(m[1]));
  }
  return { ticks: Number(/\((\d+) ticks,/.exec(out)![1]), js };
}

describe("new formats (issue 19, second half of item 11) through the import service", () => {
  it("imports a Node 20 --prof log: every tick a sample, JavaScript self time as node --prof-process counts it", async () => {
    const { ctx, bring } = setup();
    const result = await callService(importArtifact, ctx, { path: bring("v8-log/isolate-0x11b3ff90-27620-v8.log") });
    expect(result.format).toBe("v8-log");
    const expected = tickProcessorJs("v8-log/isolate-0x11b3ff90-27620-v8.prof-process.txt");
    expect(expected.js).toEqual(new Map([["fib", 387], ["strings", 30]]));
    expect(result.rows.samples).toBe(expected.ticks);
    const { grandTotal, byName } = await hotspots(ctx, result.run_id, "samples");
    expect(grandTotal).toBe(expected.ticks);
    for (const [name, ticks] of expected.js) expect([name, byName.get(name)?.self]).toEqual([name, ticks]);
    expect(result.limitations.map((l) => l.code)).toContain("V8_LOG_LIBRARY_UNSYMBOLIZED");
    const summary = await callService(summarizeRun, ctx, { run_id: result.run_id });
    expect(summary.metrics).toEqual([expect.objectContaining({ name: "samples", total: expected.ticks })]);
  });

  it("imports speedscope's Node 8 --prof log with the tick processor's counts", async () => {
    const { ctx, bring } = setup();
    const result = await callService(importArtifact, ctx, { path: bring("peer/node/8.5.0/isolate-0x102802600-v8.log") });
    expect(result.format).toBe("v8-log");
    const expected = tickProcessorJs("v8-log/node-8.5.0-isolate-0x102802600-v8.prof-process.txt");
    const { grandTotal, byName } = await hotspots(ctx, result.run_id, "samples");
    expect(grandTotal).toBe(93);
    expect(expected.js).toEqual(new Map([["d", 14], ["b", 8], ["c", 2]]));
    for (const [name, ticks] of expected.js) expect(byName.get(name)?.self).toBe(ticks);
    // The libraries, as the tick processor's [Shared libraries] section counts them, and its unaccounted ticks.
    expect(byName.get("node")?.self).toBe(42);
    expect(byName.get("(unknown)")?.self).toBe(12);
  });

  it("imports JDK 17's recording and speedscope's: execution samples per thread as jfr print counts them", async () => {
    const { ctx, bring } = setup();
    for (const [fixture, oracle] of [
      ["jfr/burn.jfr", "jfr/burn.jfr.expected.json"],
      ["peer/java-flight-recorder/heavy.jfr", "jfr/heavy.jfr.expected.json"],
    ]) {
      const result = await callService(importArtifact, ctx, { path: bring(fixture) });
      expect(result.format).toBe("jfr");
      const expected = JSON.parse(readFileSync(new URL(oracle, FIXTURES), "utf8"))["jdk.ExecutionSample"] as { count: number; frames: Record<string, { self: number; total: number }> };
      const { grandTotal, byName } = await hotspots(ctx, result.run_id, "samples");
      expect(grandTotal).toBe(expected.count);
      for (const [name, { self, total }] of Object.entries(expected.frames)) {
        if (self > 0) expect([name, byName.get(name)?.self, byName.get(name)?.total]).toEqual([name, self, total]);
      }
      const tracks = await tableAtHead(ctx.locator.projectRoot!, result.generation_id, "tracks", "thread_name");
      expect(tracks.map((t) => t.thread_name)).toEqual(expect.arrayContaining(["main"]));
      expect(result.limitations.map((l) => l.code)).toContain("JFR_EVENTS_NOT_IMPORTED");
    }
  });

  it("shows mangled native frames demangled in hotspots and keeps the mangled name in the frames file", async () => {
    const { root, ctx } = setup();
    const file = path.join(root, "native.folded");
    writeFileSync(file, "main;_ZN3geo5Point6originEv;_Z5deltav 30\nmain;_RNvCseg5vz0rOR1E_6sample5areas 12\nmain 1\n");
    const result = await callService(importArtifact, ctx, { path: file });
    const { byName } = await hotspots(ctx, result.run_id, "samples");
    expect(byName.get("delta()")).toMatchObject({ self: 30, total: 30, kind: "native" });
    expect(byName.get("sample::areas")).toMatchObject({ self: 12 });
    const frames = await tableAtHead(root, result.generation_id, "frames", "name, mangled_name, kind");
    expect(frames).toEqual([
      { name: "delta()", mangled_name: "_Z5deltav", kind: "native" },
      { name: "geo::Point::origin()", mangled_name: "_ZN3geo5Point6originEv", kind: "native" },
      { name: "main", mangled_name: null, kind: "other" },
      { name: "sample::areas", mangled_name: "_RNvCseg5vz0rOR1E_6sample5areas", kind: "native" },
    ]);
  });

  it("fails a cut recording as a typed parse error with its offset, and publishes nothing", async () => {
    const { root, ctx } = setup();
    const file = path.join(root, "cut.jfr");
    writeFileSync(file, readFileSync(new URL("jfr/burn.jfr", FIXTURES)).subarray(0, 150_000));
    const error = await callService(importArtifact, ctx, { path: file }).then(
      () => null,
      (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
    );
    expect(error).toMatchObject({ code: "ARTIFACT_PARSE_FAILED" });
    expect(JSON.stringify(error?.details)).toContain("150000");
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      expect(pin(ws.db, "HEAD").generations).toEqual([]);
    } finally {
      ws.close();
    }
  });
});
