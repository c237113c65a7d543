import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cpuprofileImporter } from "./cpuprofile";
import { parseErrorOf, peerFixture, sampleRows } from "../../test/helpers/evidence-rows";
import { importToMemory } from "./run";

const HAND_WRITTEN = {
  // samples before nodes, nodes out of order: the importer must not care.
  samples: [2, 5, 5, 3, 4],
  timeDeltas: [10, 100, 100, 200, 50],
  startTime: 1000,
  endTime: 1600,
  nodes: [
    { id: 5, callFrame: { functionName: "", scriptId: "1", url: "file:///app.js", lineNumber: 19, columnNumber: 0 }, hitCount: 2, positionTicks: [{ line: 21, ticks: 2 }] },
    { id: 1, callFrame: { functionName: "(root)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 }, hitCount: 0, children: [2, 3, 4] },
    { id: 2, callFrame: { functionName: "main", scriptId: "1", url: "file:///app.js", lineNumber: 9, columnNumber: 4 }, hitCount: 1, children: [5] },
    { id: 3, callFrame: { functionName: "(garbage collector)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 }, hitCount: 1 },
    { id: 4, callFrame: { functionName: "(idle)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 }, hitCount: 1 },
  ],
};

const parseError = (input: string | Uint8Array) => parseErrorOf(cpuprofileImporter, input);

describe("cpuprofile importer", () => {
  it("turns a hand-written profile into frames, root-less stacks and time-weighted samples", async () => {
    for (const chunkSize of [7, 64 * 1024]) {
      const result = await importToMemory(cpuprofileImporter, JSON.stringify(HAND_WRITTEN), { chunkSize });
      const frames = result.tables.frames.map(({ name, file, line, col, module, kind }) => ({ name, file, line, col, module, kind }));
      expect(frames).toEqual(
        expect.arrayContaining([
          { name: "(anonymous)", file: "file:///app.js", line: 20, col: 1, module: "file:///app.js", kind: "js" },
          { name: "main", file: "file:///app.js", line: 10, col: 5, module: "file:///app.js", kind: "js" },
          { name: "(garbage collector)", file: null, line: null, col: null, module: null, kind: "gc" },
          { name: "(idle)", file: null, line: null, col: null, module: null, kind: "idle" },
        ]),
      );
      expect(frames.map((f) => f.name)).not.toContain("(root)");
      // Sample k lands at the sum of deltas 0..k and weighs the delta to the next sample;
      // the last weighs endTime minus its time (1600 - 1460 µs).
      expect(sampleRows(result)).toEqual([
        { stack: "main", metric: "samples", time: 10_000, value: 1, track: 0 },
        { stack: "main", metric: "wall_ns", time: 10_000, value: 100_000, track: 0 },
        { stack: "main;(anonymous)", metric: "samples", time: 110_000, value: 1, track: 0 },
        { stack: "main;(anonymous)", metric: "wall_ns", time: 110_000, value: 100_000, track: 0 },
        { stack: "main;(anonymous)", metric: "samples", time: 210_000, value: 1, track: 0 },
        { stack: "main;(anonymous)", metric: "wall_ns", time: 210_000, value: 200_000, track: 0 },
        { stack: "(garbage collector)", metric: "samples", time: 410_000, value: 1, track: 0 },
        { stack: "(garbage collector)", metric: "wall_ns", time: 410_000, value: 50_000, track: 0 },
        { stack: "(idle)", metric: "samples", time: 460_000, value: 1, track: 0 },
        { stack: "(idle)", metric: "wall_ns", time: 460_000, value: 140_000, track: 0 },
      ]);
      expect(result.tables.tracks).toEqual([{ track_id: 0, process_id: null, process_name: null, thread_id: null, thread_name: null, kind: "thread" }]);
      expect(result.tables.metrics.map((m) => [m.name, m.unit, m.kind])).toEqual([
        ["samples", "count", "sampled"],
        ["wall_ns", "ns", "temporal"],
      ]);
      const anonymous = result.tables.frames.find((f) => f.name === "(anonymous)")?.frame_id;
      expect(result.tables.measurements.map((m) => [m.name, m.value, JSON.parse(m.dimensions as string)])).toEqual([["line_ticks", 2, { frame_id: anonymous, line: 21 }]]);
      expect(result.summary.metadata.time_origin_us).toBe("1000");
      expect(result.summary.limitations).toEqual([]);
    }
  });

  it("falls back to per-node hit counts, without times, when a profile has no samples", async () => {
    const { samples: _samples, timeDeltas: _deltas, ...withoutSamples } = HAND_WRITTEN;
    const result = await importToMemory(cpuprofileImporter, JSON.stringify(withoutSamples));
    const rows = sampleRows(result);
    expect(rows.map((r) => [r.stack, r.value, r.time]).sort()).toEqual([
      ["(garbage collector)", 1, null],
      ["(idle)", 1, null],
      ["main", 1, null],
      ["main;(anonymous)", 2, null],
    ]);
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["NO_SAMPLES"]);
  });

  it("records samples naming unknown nodes as a limitation instead of failing", async () => {
    const result = await importToMemory(cpuprofileImporter, JSON.stringify({ ...HAND_WRITTEN, samples: [2, 99, 5, 3, 4] }));
    expect(sampleRows(result).filter((r) => r.metric === "samples")).toHaveLength(4);
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["UNKNOWN_NODE"]);
  });

  it("imports a real node --cpu-prof profile: hotLoop dominates, and totals match the raw file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-cpuprofile-"));
    const program = path.join(dir, "hot.js");
    writeFileSync(
      program,
      `function hotLoop(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i) * (i % 7); return x; }
       let total = 0; const end = Date.now() + 400; while (Date.now() < end) total += hotLoop(200000);
       console.log(total > 0);`,
    );
    execFileSync(process.execPath, ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "250", program]);
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    expect(file).toBeDefined();
    const bytes = readFileSync(path.join(dir, file as string));
    const raw = JSON.parse(bytes.toString("utf8")) as { samples: number[]; timeDeltas: number[]; startTime: number };
    expect(cpuprofileImporter.sniff(bytes.subarray(0, 65536), bytes.subarray(0, 65536).toString("utf8"), file as string)).toBeGreaterThan(0.8);

    const result = await importToMemory(cpuprofileImporter, bytes, { fileName: file as string, chunkSize: 4096 });
    const rows = sampleRows(result);
    const samples = rows.filter((r) => r.metric === "samples");
    expect(samples).toHaveLength(raw.samples.length);
    const hot = samples.filter((r) => r.stack.split(";").includes("hotLoop")).length;
    expect(hot / samples.length).toBeGreaterThan(0.5);
    // The last sample sits at the sum of all deltas; weights sum to the span up to the last sample plus its own.
    const deltaSum = raw.timeDeltas.reduce((a, b) => a + b, 0);
    expect(samples.at(-1)?.time).toBe(Math.round(deltaSum * 1000));
    const wall = rows.filter((r) => r.metric === "wall_ns");
    const lastWeight = wall.at(-1)?.value ?? 0;
    expect(wall.reduce((a, r) => a + r.value, 0)).toBe(Math.round((deltaSum - raw.timeDeltas[0]) * 1000) + lastWeight);
    expect(result.summary.metadata.time_origin_us).toBe(String(raw.startTime));
  });

  it("imports the legacy layout (head tree, samples, timestamps): each sample on its node's path, at its timestamp", async () => {
    const bytes = peerFixture("node/10.11.0/example.cpuprofile");
    // The file's own account: node paths from the nested head tree ("(root)" left out), and per
    // sample its timestamp (absolute µs); startTime is in seconds.
    type Node = { id: number; functionName: string; children: Node[] };
    const file = JSON.parse(new TextDecoder().decode(bytes)) as { head: Node; samples: number[]; timestamps: number[]; startTime: number };
    const paths = new Map<number, string>();
    const walk = (node: Node, path: string[]) => {
      const here = node === file.head ? path : [...path, node.functionName || "(anonymous)"];
      paths.set(node.id, here.join(";"));
      for (const child of node.children) walk(child, here);
    };
    walk(file.head, []);
    const origin = Math.min(file.startTime * 1e6, file.timestamps[0]);
    const expected = file.samples.map((id, k) => ({ stack: paths.get(id), time: (file.timestamps[k] - origin) * 1000 }));
    expect(expected).toHaveLength(29);

    expect(cpuprofileImporter.sniff(bytes, new TextDecoder().decode(bytes), "example.cpuprofile")).toBe(1);
    expect(cpuprofileImporter.sniff(bytes, new TextDecoder().decode(bytes), null)).toBeGreaterThan(0.5);
    const result = await importToMemory(cpuprofileImporter, bytes, { fileName: "example.cpuprofile" });
    const rows = sampleRows(result);
    expect(rows.filter((r) => r.metric === "samples").map((r) => ({ stack: r.stack, time: r.time }))).toEqual(expected);
    // Each sample weighs the time to the next one; the last, the mean interval (endTime, in whole seconds, is before it).
    const walls = rows.filter((r) => r.metric === "wall_ns").map((r) => r.value);
    const times = file.timestamps.slice(0, file.samples.length);
    const mean = (times[times.length - 1] - times[0]) / (times.length - 1);
    expect(walls).toEqual(times.map((t, k) => Math.round(((k + 1 < times.length ? times[k + 1] : t + mean) - t) * 1000)));
    expect(result.tables.frames.find((f) => f.name === "b")).toMatchObject({ line: 6, kind: "native" });
    // 30 timestamps for 29 samples: said, not guessed at.
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["TIMESTAMPS_MISMATCH"]);
  });

  it("rejects a truncated, a corrupted and an empty file with EvidenceParseError and an offset", async () => {
    const text = JSON.stringify(HAND_WRITTEN);
    const truncated = await parseError(text.slice(0, 120));
    expect(truncated.at.offset).toBe(120);
    const corrupted = await parseError(text.replace('"timeDeltas":[10,', '"timeDeltas":[10,,'));
    expect(corrupted.at.offset).toBe(text.indexOf('"timeDeltas":[10,') + '"timeDeltas":[10,'.length);
    const empty = await parseError("");
    expect(empty.at.offset).toBe(0);
    // Well-formed JSON that is not a profile is malformed too.
    expect((await parseError("[1,2]")).at.offset).toBe(0);
    expect((await parseError('{"nodes":[{"id":"x"}]}')).at.offset).toBe(10);
  });

  it("sniffs cpuprofile heads and declines traces and heap profiles", () => {
    const head = JSON.stringify(HAND_WRITTEN).slice(0, 200);
    const bytes = new TextEncoder().encode(head);
    expect(cpuprofileImporter.sniff(bytes, head, "x.cpuprofile")).toBe(1);
    expect(cpuprofileImporter.sniff(bytes, head, null)).toBeGreaterThan(0.5);
    expect(cpuprofileImporter.sniff(bytes, '{"traceEvents":[{"ph":"X"', null)).toBe(0);
    expect(cpuprofileImporter.sniff(bytes, '{"head":{"callFrame":{},"selfSize":0', null)).toBe(0);
    expect(cpuprofileImporter.sniff(new Uint8Array([0xff, 0x00]), "\uffff\u0000", null)).toBe(0);
  });
});
