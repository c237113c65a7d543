// The Firefox Profiler (Gecko and processed), stackprof, Instruments deep copy and Safari timeline
// formats end to end: each real fixture (test/fixtures/peer) detected, imported by the import
// service into a real workspace (SQLite, Parquet, DuckDB) and answered by `analyze hotspots`, with
// totals read from the file by this test itself.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectFormat } from "../../analysis/formats/index";
import { headText } from "../../analysis/io/text";
import { analyzeHotspots, callService, importArtifact, listRuns, showHead, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { failure } from "../helpers/failure";

const PEER = path.resolve(import.meta.dirname, "../fixtures/peer");
const NEW_FORMATS = ["gecko", "firefox-processed", "stackprof", "instruments-deep-copy", "safari-timeline"];

function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
  const copy = (fixture: string) => {
    const target = path.join(root, path.basename(fixture));
    writeFileSync(target, readFileSync(path.join(PEER, fixture)));
    return target;
  };
  const file = (name: string, content: string) => {
    const target = path.join(root, name);
    writeFileSync(target, content);
    return target;
  };
  return { ctx, copy, file };
}

const read = (fixture: string) => readFileSync(path.join(PEER, fixture), "utf8");

describe("the new formats through the import service", () => {
  it("imports Firefox 63's recording as a Gecko profile: its samples and the wall time they cover", async () => {
    const { ctx, copy } = setup();
    const result = await callService(importArtifact, ctx, { path: copy("Firefox/63/simple-firefox.json") });
    expect(result).toMatchObject({ format: "gecko", rows: expect.objectContaining({ samples: 39 * 2, tracks: 1 }) });
    const thread = JSON.parse(read("Firefox/63/simple-firefox.json")).profile.threads[0];
    const times = thread.samples.data.map((row: number[]) => row[1]);
    const wall = await callService(analyzeHotspots, ctx, { run_id: result.run_id });
    expect(wall.metric).toBe("wall_ns");
    expect(wall.grand_total).toBeCloseTo((times[times.length - 1] - times[0] + 1) * 1e6, -1);
    const samples = await callService(analyzeHotspots, ctx, { run_id: result.run_id, metric: "samples" });
    expect(samples.grand_total).toBe(thread.samples.data.length);
    // gamma is the leaf of most samples: count them from the file's own tables.
    const leafIs = (row: number[], name: string) => (thread.stringTable[thread.frameTable.data[thread.stackTable.data[row[0]][1]][0]] as string).startsWith(`${name} (`);
    expect(samples.rows[0]).toMatchObject({ name: "gamma", self: thread.samples.data.filter((row: number[]) => leafIs(row, "gamma")).length });
  });

  it("imports a processed profile written as samply writes it, with its CPU time", async () => {
    const { ctx, file } = setup();
    // fxprof-processed-profile's layout (version 49): per-thread tables and strings, weights, CPU deltas in µs.
    const profile = {
      meta: { interval: 1, startTime: 1_700_000_000_000, processType: 0, product: "cargo", stackwalk: 0, version: 24, preprocessedProfileVersion: 49, categories: [{ name: "Other", color: "grey", subcategories: ["Other"] }], sampleUnits: { time: "ms", eventDelay: "ms", threadCPUDelta: "µs" }, markerSchema: [] },
      libs: [{ name: "cargo", path: "/usr/bin/cargo", debugName: "cargo", debugPath: "/usr/bin/cargo", breakpadId: "AA", codeId: null, arch: null }],
      threads: [
        {
          name: "cargo",
          isMainThread: true,
          pid: "4000",
          tid: "4000",
          processName: "cargo",
          processType: "default",
          samples: { length: 3, weightType: "samples", stack: [1, 2, 1], time: [0, 1, 2], weight: [1, 1, 2], threadCPUDelta: [0, 900, 1000] },
          stackTable: { length: 3, prefix: [null, 0, 1], frame: [0, 1, 2] },
          frameTable: { length: 3, address: [-1, 4096, 8192], inlineDepth: [0, 0, 0], category: [0, 0, 0], subcategory: [0, 0, 0], func: [0, 1, 2], nativeSymbol: [null, null, null], innerWindowID: [null, null, null], line: [null, null, null], column: [null, null, null] },
          funcTable: { length: 3, name: [0, 1, 2], isJS: [false, false, false], relevantForJS: [false, false, false], resource: [-1, 0, 0], fileName: [null, null, null], lineNumber: [null, null, null], columnNumber: [null, null, null] },
          resourceTable: { length: 1, lib: [0], name: [3], host: [null], type: [1] },
          nativeSymbols: { length: 0, libIndex: [], address: [], name: [], functionSize: [] },
          markers: { length: 0, category: [], data: [], endTime: [], name: [], phase: [], startTime: [] },
          stringArray: ["main", "cargo::ops::compile", "rustc_driver::run", "cargo"],
        },
      ],
    };
    const result = await callService(importArtifact, ctx, { path: file("profile.json", JSON.stringify(profile)) });
    expect(result.format).toBe("firefox-processed");
    const cpu = await callService(analyzeHotspots, ctx, { run_id: result.run_id });
    // Each sample gets the next one's CPU delta: 900 µs on compile, 1000 µs on run, none on the last.
    expect(cpu).toMatchObject({ metric: "cpu_ns", grand_total: 1_900_000 });
    expect(cpu.rows.map((r) => [r.name, r.self, r.total, r.module])).toEqual([
      ["rustc_driver::run", 1_000_000, 1_000_000, "cargo"],
      ["cargo::ops::compile", 900_000, 1_900_000, "cargo"],
      ["main", 0, 1_900_000, null],
    ]);
    expect((await callService(analyzeHotspots, ctx, { run_id: result.run_id, metric: "samples" })).grand_total).toBe(4);
  });

  it("imports stackprof's wall profile: samples and wall time as the file counts them", async () => {
    const { ctx, copy } = setup();
    const result = await callService(importArtifact, ctx, { path: copy("stackprof/simple-stackprof.json") });
    expect(result.format).toBe("stackprof");
    const file = JSON.parse(read("stackprof/simple-stackprof.json"));
    const wall = await callService(analyzeHotspots, ctx, { run_id: result.run_id });
    expect(wall).toMatchObject({ metric: "wall_ns", grand_total: (file.raw_timestamp_deltas as number[]).reduce((a, b) => a + b, 0) * 1000 });
    const samples = await callService(analyzeHotspots, ctx, { run_id: result.run_id, metric: "samples", limit: 50 });
    expect(samples.grand_total).toBe(file.samples);
    // stackprof's own per-frame self and total counts.
    for (const frame of Object.values(file.frames) as { name: string; file: string; samples: number; total_samples: number }[]) {
      const row = samples.rows.find((r) => r.name === frame.name && (r.file ?? "") === frame.file);
      if (frame.total_samples === 0) continue;
      expect(row, frame.name).toMatchObject({ self: frame.samples, total: frame.total_samples });
    }
  });

  it("imports Instruments 16's deep copy: self weights adding up to the root's 4.93 s", async () => {
    const { ctx, copy } = setup();
    const result = await callService(importArtifact, ctx, { path: copy("Instruments/16.0/simple-time-profile-deep-copy.txt") });
    expect(result.format).toBe("instruments-deep-copy");
    const selfBySymbol = new Map<string, number>();
    for (const line of read("Instruments/16.0/simple-time-profile-deep-copy.txt").split("\n").slice(1)) {
      const [, self, symbol] = line.split("\t");
      if (!symbol) continue;
      const [, value, unit] = /^([\d.]+) (ms|s)$/.exec(self)!;
      selfBySymbol.set(symbol.trim(), (selfBySymbol.get(symbol.trim()) ?? 0) + Math.round(Number(value) * (unit === "s" ? 1e9 : 1e6)));
    }
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id, limit: 5 });
    expect(hotspots).toMatchObject({ metric: "cpu_ns", grand_total: 4_930_000_000 });
    // The five heaviest selves, and each row's the file's own (two symbols tie at 20 ms).
    expect(hotspots.rows.map((r) => r.self)).toEqual([...selfBySymbol.values()].sort((a, b) => b - a).slice(0, 5));
    for (const row of hotspots.rows) expect(row.self).toBe(selfBySymbol.get(row.name));
  });

  it("imports Safari 13.1's recording: samples weighted by their durations, and its timeline as spans", async () => {
    const { ctx, copy } = setup();
    const result = await callService(importArtifact, ctx, { path: copy("Safari/13.1/simple.html-recording.json") });
    expect(result.format).toBe("safari-timeline");
    const recording = JSON.parse(read("Safari/13.1/simple.html-recording.json")).recording;
    const spanRecords = recording.records.filter((r: { type: string }) => /script|layout|rendering-frame/.test(r.type)).length;
    expect(result.rows.spans).toBe(spanRecords + recording.markers.length);
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id });
    expect(hotspots.metric).toBe("wall_ns");
    expect(hotspots.grand_total).toBeCloseTo((recording.sampleDurations as number[]).reduce((a, b) => a + b, 0) * 1e9, -1);
    expect(hotspots.rows[0].name).toBe("gamma");
  });

  it("refuses a profile of a version its importer does not read with UNSUPPORTED_FORMAT_VERSION, publishing nothing", async () => {
    const { ctx, file } = setup();
    const head = await callService(showHead, ctx, {});
    const profile = { meta: { interval: 1, startTime: 0, processType: 0, stackwalk: 0, version: 24, preprocessedProfileVersion: 99 }, threads: [] };
    const error = await failure(callService(importArtifact, ctx, { path: file("future.json", JSON.stringify(profile)) }));
    expect(error.toDocument()).toMatchObject({ code: "UNSUPPORTED_FORMAT_VERSION", details: { format: "firefox-processed", version: "99", supported: "4 to 63" } });
    expect((await callService(showHead, ctx, {})).commit_id).toBe(head.commit_id);
    expect((await callService(listRuns, ctx, {})).items[0]).toMatchObject({ status: "failed", details: { error: { code: "UNSUPPORTED_FORMAT_VERSION" } } });
  });

  it("reports a malformed file of each new format as ARTIFACT_PARSE_FAILED with where it is", async () => {
    const { ctx, file } = setup();
    const cases = [
      ["gecko.json", read("Firefox/63/simple-firefox.json").slice(0, 70_000), "gecko", "offset"],
      ["stackprof.json", '{"version":1.2,"mode":"wall","frames":{"1":{"name":"a"}},"raw":[1,2,1]}', "stackprof", "offset"],
      ["copy.txt", "Weight\tSelf Weight\t\tSymbol Name\n1.00 s  100.0%\t0 s\t \tmain\nnonsense\n", "instruments-deep-copy", "line"],
      ["recording.json", '{"version":1,"recording":{"startTime":0,"sampleStackTraces":[{"timestamp":1}],"sampleDurations":[0.1]}}', "safari-timeline", "offset"],
    ] as const;
    for (const [name, text, format, where] of cases) {
      const error = await failure(callService(importArtifact, ctx, { path: file(name, text) }));
      expect(error.code, name).toBe("ARTIFACT_PARSE_FAILED");
      expect(error.details.format).toBe(format);
      expect(error.details[where]).toEqual(expect.any(Number));
    }
  });

  it("detects each real file of the new formats as its format, and no other real file as one of them", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const full = path.join(dir, entry);
        if (statSync(full).isDirectory()) walk(full);
        else if (!/LICENSE|README/.test(entry)) files.push(full);
      }
    };
    walk(PEER);
    const expected: Record<string, string> = {
      "Firefox/63/simple-firefox.json": "gecko",
      "stackprof/simple-stackprof.json": "stackprof",
      "Instruments/16.0/simple-time-profile-deep-copy.txt": "instruments-deep-copy",
      "Safari/13.1/simple.html-recording.json": "safari-timeline",
    };
    for (const full of files) {
      const head = readFileSync(full).subarray(0, 64 * 1024);
      const found = detectFormat(head, headText(head), path.basename(full))?.id ?? null;
      const relative = path.relative(PEER, full);
      if (expected[relative]) expect(found, relative).toBe(expected[relative]);
      else expect(NEW_FORMATS, relative).not.toContain(found);
    }
  });
});
