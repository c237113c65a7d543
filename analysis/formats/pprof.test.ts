import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseErrorOf, totalsByStack } from "../../test/helpers/evidence-rows";
import { delimited, int, message, packed, unpacked, type Bytes } from "../../test/helpers/protobuf-writer";
import { gunzip } from "../io/bytes";
import { pprofImporter } from "./pprof";
import { importToMemory } from "./run";

/** The profile the test describes, in the shape of profile.proto, with strings inline. */
interface Fixture {
  sampleTypes: [string, string][];
  mappings: { id: number; file: string }[];
  functions: { id: number; name: string; file: string; startLine: number; systemName?: string }[];
  locations: { id: number; mapping: number; address: bigint; lines: [fn: number, line: number][] }[];
  samples: { locations: number[]; values: number[]; labels?: { key: string; str?: string; num?: number; unit?: string }[]; packed?: boolean }[];
  periodType: [string, string];
  period: number;
  durationNanos: number;
  timeNanos: bigint;
}

function encodeProfile(f: Fixture): Uint8Array {
  const strings = [""];
  const s = (text: string) => {
    let i = strings.indexOf(text);
    if (i < 0) i = strings.push(text) - 1;
    return i;
  };
  const parts: Bytes[] = [];
  for (const [type, unit] of f.sampleTypes) parts.push(message(1, int(1, s(type)), int(2, s(unit))));
  for (const sample of f.samples) {
    const labels = (sample.labels ?? []).map((l) => message(3, int(1, s(l.key)), l.str !== undefined ? int(2, s(l.str)) : [], l.num !== undefined ? int(3, l.num) : [], l.unit ? int(4, s(l.unit)) : []));
    const ids = sample.packed === false ? unpacked(1, sample.locations) : sample.locations.length ? packed(1, sample.locations) : [];
    parts.push(message(2, ids, packed(2, sample.values), ...labels));
  }
  for (const m of f.mappings) parts.push(message(3, int(1, m.id), int(2, 0x400000), int(3, 0x800000), int(5, s(m.file))));
  for (const l of f.locations) parts.push(message(4, int(1, l.id), int(2, l.mapping), int(3, l.address), ...l.lines.map(([fn, line]) => message(4, int(1, fn), int(2, line)))));
  for (const fn of f.functions) parts.push(message(5, int(1, fn.id), int(2, s(fn.name)), int(3, s(fn.systemName ?? fn.name)), int(4, s(fn.file)), int(5, fn.startLine)));
  const tail = [int(9, f.timeNanos), int(10, f.durationNanos), message(11, int(1, s(f.periodType[0])), int(2, s(f.periodType[1]))), int(12, f.period)];
  // Like Go's encoder: the string table comes after everything that refers to it.
  const table = strings.map((text) => delimited(6, [...new TextEncoder().encode(text)]));
  return new Uint8Array([...parts.flat(), ...table.flat(), ...tail.flat()]);
}

const FIXTURE: Fixture = {
  sampleTypes: [
    ["samples", "count"],
    ["cpu", "nanoseconds"],
  ],
  mappings: [{ id: 1, file: "/srv/bin/app" }],
  functions: [
    { id: 1, name: "main.main", file: "/src/main.go", startLine: 10 },
    { id: 2, name: "main.work", file: "/src/main.go", startLine: 20 },
    { id: 3, name: "main.helper", file: "/src/main.go", startLine: 30 },
    { id: 4, name: "runtime.gcBgMarkWorker", file: "/go/src/runtime/mgc.go", startLine: 1200 },
    { id: 5, name: "compute", file: "/app/handler.py", startLine: 7 },
  ],
  locations: [
    { id: 1, mapping: 1, address: 0x401000n, lines: [[1, 12]] },
    // helper() inlined into work(): line[0] is the inlined callee, the last line its caller.
    { id: 2, mapping: 1, address: 0x402000n, lines: [[3, 31], [2, 22]] },
    { id: 3, mapping: 1, address: 0x403000n, lines: [[4, 1210]] },
    // Not symbolized, above 2^53: named by its exact address.
    { id: 4, mapping: 0, address: 0xffffffff81000000n, lines: [] },
    { id: 5, mapping: 1, address: 0x405000n, lines: [[5, 8]] },
  ],
  samples: [
    { locations: [2, 1], values: [3, 30_000_000], labels: [{ key: "thread", str: "worker-1" }] },
    { locations: [1], values: [1, 10_000_000], labels: [{ key: "bytes", num: 4096, unit: "bytes" }], packed: false },
    { locations: [3], values: [2, 20_000_000], labels: [{ key: "thread", str: "worker-1" }] },
    { locations: [4, 1], values: [1, 10_000_000] },
    { locations: [5, 2, 1], values: [0, 5] },
    { locations: [], values: [1, 1] },
  ],
  periodType: ["cpu", "nanoseconds"],
  period: 10_000_000,
  durationNanos: 1_000_000_000,
  timeNanos: 1_700_000_000_123_456_789n,
};

/** What the fixture says, computed from the fixture alone: stack → [samples, cpu]. */
function expectedFromFixture(f: Fixture): Map<string, number[]> {
  const fnName = new Map(f.functions.map((fn) => [fn.id, fn.name]));
  const expected = new Map<string, number[]>();
  for (const sample of f.samples) {
    const names: string[] = [];
    for (const id of [...sample.locations].reverse()) {
      const location = f.locations.find((l) => l.id === id)!;
      if (location.lines.length === 0) names.push(`0x${location.address.toString(16)}`);
      for (const [fn] of [...location.lines].reverse()) names.push(fnName.get(fn)!);
    }
    const key = names.length ? names.join(";") : "(no stack)";
    const sum = expected.get(key) ?? f.sampleTypes.map(() => 0);
    sample.values.forEach((v, i) => (sum[i] += v));
    expected.set(key, sum);
  }
  return expected;
}

async function gunzipFile(file: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  async function* one() {
    yield new Uint8Array(readFileSync(file));
  }
  for await (const part of gunzip(one(), 1000)) parts.push(part);
  return new Uint8Array(Buffer.concat(parts));
}

const parseError = (input: Uint8Array) => parseErrorOf(pprofImporter, input);

/** The go toolchain's path, or null where it is not installed (the real-profile tests then skip). */
function goOnPath(): string | null {
  try {
    return execFileSync("sh", ["-c", "command -v go"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

describe("pprof importer", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "emberscope-pprof-"));

  it("turns every sample type into a metric and every sample into aggregate samples on root-first stacks", async () => {
    const file = path.join(dir, "cpu.pb.gz");
    writeFileSync(file, gzipSync(encodeProfile(FIXTURE)));
    const bytes = await gunzipFile(file);
    const result = await importToMemory(pprofImporter, bytes, { fileName: "cpu.pb.gz", chunkSize: 97 });

    expect(result.tables.metrics.map((m) => [m.name, m.unit, m.kind])).toEqual([
      ["samples", "count", "sampled"],
      ["cpu_ns", "ns", "sampled"],
    ]);
    const expected = expectedFromFixture(FIXTURE);
    const actual = totalsByStack(result);
    for (const [stack, [samples, cpu]] of expected) {
      expect(actual.samples?.[stack] ?? 0, stack).toBe(samples);
      expect(actual.cpu_ns?.[stack], stack).toBe(cpu);
    }
    // Exact totals, and no sample rows for zero values.
    expect(Object.values(actual.samples).reduce((a, b) => a + b)).toBe(8);
    expect(Object.values(actual.cpu_ns).reduce((a, b) => a + b)).toBe(70_000_006);
    expect(result.tables.samples).toHaveLength(11);
    expect(result.tables.samples.every((s) => s.time_ns === null)).toBe(true);
    // The two samples labelled thread=worker-1 (four rows: two values each) are on its track; the rest on none.
    expect(result.tables.tracks.map((t) => [t.thread_id, t.thread_name, t.kind])).toEqual([["worker-1", "worker-1", "thread"]]);
    expect(result.tables.samples.filter((s) => s.track_id === 0)).toHaveLength(4);
    expect(result.tables.samples.filter((s) => s.track_id === null)).toHaveLength(7);
    expect(actual.cpu_ns["main.main;main.work;main.helper;compute"]).toBe(5);
    expect(actual.cpu_ns["main.main;0xffffffff81000000"]).toBe(10_000_000);
  });

  it("streams a profile in two passes: cut into chunks anywhere, each overwritten once read, it gives the rows of one piece", async () => {
    // Many samples before the string table, a name longer than most chunks, labels and unpacked ids.
    const longName = `main.${"veryLongFunctionName".repeat(20)}`;
    const profile: Fixture = {
      ...FIXTURE,
      functions: [...FIXTURE.functions, { id: 6, name: longName, file: "/src/long.go", startLine: 3 }],
      locations: [...FIXTURE.locations, { id: 6, mapping: 1, address: 0x406000n, lines: [[6, 4]] }],
      samples: Array.from({ length: 300 }, (_, i) => ({
        locations: [1 + (i % 6), 1 + ((i * 7) % 6), 1].slice(0, 1 + (i % 3)),
        values: [1 + (i % 4), (i + 1) * 1000],
        labels: i % 5 === 0 ? [{ key: "thread", str: `worker-${i % 3}` }] : undefined,
        packed: i % 7 !== 0,
      })),
    };
    const bytes = encodeProfile(profile);
    const whole = await importToMemory(pprofImporter, bytes, { chunkSize: bytes.length });
    expect(whole.tables.samples.length).toBeGreaterThan(300);
    expect(whole.tables.frames.some((f) => f.name === longName)).toBe(true);
    for (const chunkSize of [1, 2, 5, 13, 64, 700]) {
      const cut = await importToMemory(pprofImporter, bytes, { chunkSize });
      expect(cut.tables, `chunks of ${chunkSize} bytes`).toEqual(whole.tables);
      expect(cut.summary).toEqual(whole.summary);
    }
  });

  it("names frames per function, with file, start line, mapping and a kind from simple rules", async () => {
    const result = await importToMemory(pprofImporter, encodeProfile(FIXTURE));
    const byName = new Map(result.tables.frames.map((f) => [f.name, f]));
    expect(byName.get("main.work")).toMatchObject({ file: "/src/main.go", line: 20, module: "/srv/bin/app", kind: "native" });
    expect(byName.get("main.helper")).toMatchObject({ file: "/src/main.go", line: 30, module: "/srv/bin/app", kind: "native" });
    expect(byName.get("runtime.gcBgMarkWorker")).toMatchObject({ kind: "gc" });
    expect(byName.get("compute")).toMatchObject({ file: "/app/handler.py", kind: "python" });
    expect(byName.get("0xffffffff81000000")).toMatchObject({ module: null, kind: "native" });
    expect(byName.get("(no stack)")).toMatchObject({ kind: "other" });
    expect(result.summary.limitations.map((l) => l.code)).toContain("PPROF_SAMPLE_WITHOUT_STACK");
  });

  it("shows a mangled function name demangled, and keeps a mangled system_name beside a readable name", async () => {
    const profile = encodeProfile({
      ...FIXTURE,
      functions: [
        { id: 1, name: "_Z5deltav", file: "/src/delta.cc", startLine: 3 },
        { id: 2, name: "geo::Point::origin()", systemName: "_ZN3geo5Point6originEv", file: "/src/geo.cc", startLine: 9 },
      ],
      locations: [
        { id: 1, mapping: 1, address: 0x1000n, lines: [[1, 4]] },
        { id: 2, mapping: 1, address: 0x2000n, lines: [[2, 10]] },
      ],
      samples: [{ locations: [1, 2], values: [1, 100] }],
    });
    const result = await importToMemory(pprofImporter, profile);
    expect(totalsByStack(result).samples).toEqual({ "geo::Point::origin();delta()": 1 });
    expect(result.tables.frames.map((f) => [f.name, f.mangled_name])).toEqual([
      ["geo::Point::origin()", "_ZN3geo5Point6originEv"],
      ["delta()", "_Z5deltav"],
    ]);
  });

  it("sums labels per key and value into measurements weighted by the default sample type, and keeps profile facts as metadata", async () => {
    const result = await importToMemory(pprofImporter, encodeProfile(FIXTURE));
    const measurements = result.tables.measurements.map((m) => ({ name: m.name, value: m.value, unit: m.unit, aggregation: m.aggregation, dimensions: JSON.parse(String(m.dimensions)) }));
    expect(measurements).toHaveLength(2);
    const thread = measurements.find((m) => m.name === "label:thread")!;
    expect(thread).toMatchObject({ value: 50_000_000, unit: "nanoseconds", aggregation: "sum" });
    expect(thread.dimensions).toMatchObject({ label: "thread", value: "worker-1", metric: "cpu_ns", samples: 2 });
    const bytes = measurements.find((m) => m.name === "label:bytes")!;
    expect(bytes).toMatchObject({ value: 10_000_000 });
    expect(bytes.dimensions).toMatchObject({ value: 4096, value_unit: "bytes" });

    expect(result.summary.metadata).toMatchObject({
      "pprof.period_type": "cpu/nanoseconds",
      "pprof.period": "10000000",
      duration_ns: "1000000000",
      start_time_unix_ns: "1700000000123456789",
      "pprof.default_sample_type": "cpu_ns",
    });
  });

  it("maps well-known Go heap sample types to the schema's metric names", async () => {
    const heap: Fixture = {
      ...FIXTURE,
      sampleTypes: [
        ["alloc_objects", "count"],
        ["alloc_space", "bytes"],
        ["inuse_objects", "count"],
        ["inuse_space", "bytes"],
      ],
      samples: [{ locations: [2, 1], values: [4, 4096, 1, 1024] }],
    };
    const result = await importToMemory(pprofImporter, encodeProfile(heap));
    expect(result.tables.metrics.map((m) => `${m.name}/${m.unit}`)).toEqual(["alloc_count/count", "alloc_bytes/bytes", "inuse_count/count", "inuse_bytes/bytes"]);
    expect(result.tables.samples.map((s) => s.value)).toEqual([4, 4096, 1, 1024]);
  });

  it("sniffs a profile from its first bytes and refuses text", () => {
    const bytes = encodeProfile(FIXTURE);
    expect(pprofImporter.sniff(bytes, "", "cpu.pprof")).toBeGreaterThanOrEqual(0.9);
    expect(pprofImporter.sniff(bytes, "", null)).toBeGreaterThanOrEqual(0.5);
    expect(pprofImporter.sniff(bytes.subarray(0, 20), "", null)).toBeGreaterThan(0);
    const text = new TextEncoder().encode('{"nodes": []}');
    expect(pprofImporter.sniff(text, '{"nodes": []}', "x.json")).toBe(0);
    expect(pprofImporter.sniff(new Uint8Array([0xff, 0xff, 0xff]), "", null)).toBe(0);
  });

  it("imports a profile written by Go's runtime/pprof", async (ctx) => {
    const go = goOnPath();
    if (!go) {
      ctx.skip(true, "the go toolchain is not installed on this machine, so no real pprof profile can be produced");
      return;
    }
    const src = path.join(dir, "main.go");
    writeFileSync(
      src,
      `package main
import ("os"; "runtime/pprof"; "time")
func spin(d time.Duration) int { x := 0; for t := time.Now(); time.Since(t) < d; { x++ }; return x }
func main() { f, _ := os.Create(os.Args[1]); pprof.StartCPUProfile(f); spin(300 * time.Millisecond); pprof.StopCPUProfile(); f.Close() }
`,
    );
    const out = path.join(dir, "real.pb.gz");
    execFileSync(go, ["run", src, out], { cwd: dir, stdio: "ignore", env: { ...process.env, GOFLAGS: "-mod=mod", GO111MODULE: "off" } });
    const result = await importToMemory(pprofImporter, await gunzipFile(out), { fileName: "real.pb.gz" });
    const top = execFileSync(go, ["tool", "pprof", "-raw", out], { encoding: "utf8" });
    const expectedSamples = [...top.matchAll(/^\s+(\d+)\s+\d+: /gm)].reduce((n, m) => n + Number(m[1]), 0);
    const samplesMetric = result.tables.metrics.find((m) => m.name === "samples")!;
    const total = result.tables.samples.filter((s) => s.metric_id === samplesMetric.metric_id).reduce((n, s) => n + Number(s.value), 0);
    expect(total).toBe(expectedSamples);
  });

  it("puts samples on the thread and process their labels name (thread_id, thread name, pid), one track per thread", async () => {
    // Datadog's and pyroscope's profilers: a numeric thread id, its name and the process id.
    const labelled = (tid: number, name: string, pid: number) => [
      { key: "thread id", num: tid },
      { key: "thread name", str: name },
      { key: "pid", str: String(pid) },
    ];
    const profile: Fixture = {
      ...FIXTURE,
      samples: [
        { locations: [2, 1], values: [3, 30], labels: labelled(11, "main", 7) },
        { locations: [1], values: [1, 10], labels: labelled(12, "io", 7) },
        { locations: [3], values: [2, 20], labels: labelled(11, "main", 7) },
        { locations: [5, 2, 1], values: [4, 40], labels: [{ key: "thread_id", num: 13 }] },
        { locations: [1], values: [5, 50] },
      ],
    };
    const result = await importToMemory(pprofImporter, encodeProfile(profile));
    const tracks = result.tables.tracks.map((t) => [t.process_id, t.thread_id, t.thread_name, t.kind]);
    expect(tracks).toEqual([
      ["7", "11", "main", "thread"],
      ["7", "12", "io", "thread"],
      [null, "13", null, "thread"],
    ]);
    const samplesMetric = result.tables.metrics.find((m) => m.name === "samples")!.metric_id;
    const perTrack = new Map<unknown, number>();
    for (const s of result.tables.samples) if (s.metric_id === samplesMetric) perTrack.set(s.track_id, (perTrack.get(s.track_id) ?? 0) + Number(s.value));
    expect(Object.fromEntries(perTrack)).toEqual({ 0: 5, 1: 1, 2: 4, null: 5 });
    // The labels stay measurements too.
    expect(result.tables.measurements.some((m) => m.name === "label:thread name")).toBe(true);
  });

  it("maps the thread labels of a profile written by Go's runtime/pprof (pprof.Do) to tracks whose totals go tool pprof agrees with", async (ctx) => {
    const go = goOnPath();
    if (!go) {
      ctx.skip(true, "the go toolchain is not installed on this machine, so no real pprof profile can be produced");
      return;
    }
    const src = path.join(dir, "labels.go");
    writeFileSync(
      src,
      `package main
import ("context"; "os"; "runtime/pprof"; "sync"; "time")
func spin(d time.Duration) int { x := 0; for t := time.Now(); time.Since(t) < d; { x++ }; return x }
func main() {
  f, _ := os.Create(os.Args[1]); pprof.StartCPUProfile(f)
  var wg sync.WaitGroup
  for _, w := range []struct{ name string; d time.Duration }{{"worker-a", 400 * time.Millisecond}, {"worker-b", 200 * time.Millisecond}} {
    wg.Add(1)
    go func(name string, d time.Duration) { defer wg.Done(); pprof.Do(context.Background(), pprof.Labels("thread", name), func(context.Context) { spin(d) }) }(w.name, w.d)
  }
  wg.Wait(); spin(100 * time.Millisecond)
  pprof.StopCPUProfile(); f.Close()
}
`,
    );
    const out = path.join(dir, "labels.pb.gz");
    execFileSync(go, ["run", src, out], { cwd: dir, stdio: "ignore", env: { ...process.env, GOFLAGS: "-mod=mod", GO111MODULE: "off" } });
    // go tool pprof -raw: each sample's counts, then its labels on the next line ("thread:[worker-a]").
    const raw = execFileSync(go, ["tool", "pprof", "-raw", out], { encoding: "utf8" });
    const expected: Record<string, number> = {};
    let last = 0;
    for (const line of raw.split("\n")) {
      const sample = /^\s+(\d+)\s+\d+: /.exec(line);
      if (sample) {
        last = Number(sample[1]);
        expected["(none)"] = (expected["(none)"] ?? 0) + last;
        continue;
      }
      const label = /^\s+thread:\[([^\]]+)\]/.exec(line);
      if (label) {
        expected["(none)"] -= last;
        expected[label[1]] = (expected[label[1]] ?? 0) + last;
      }
    }
    expect(Object.keys(expected).filter((k) => k.startsWith("worker-")).length, raw).toBeGreaterThan(0);
    const result = await importToMemory(pprofImporter, await gunzipFile(out), { fileName: "labels.pb.gz" });
    const nameOf = new Map(result.tables.tracks.map((t) => [t.track_id, t.thread_name as string]));
    const samplesMetric = result.tables.metrics.find((m) => m.name === "samples")!.metric_id;
    const actual: Record<string, number> = {};
    for (const s of result.tables.samples) {
      if (s.metric_id !== samplesMetric) continue;
      const name = s.track_id === null ? "(none)" : nameOf.get(s.track_id)!;
      actual[name] = (actual[name] ?? 0) + Number(s.value);
    }
    for (const k of Object.keys(expected)) if (expected[k] === 0) delete expected[k];
    expect(actual).toEqual(expected);
    expect(result.tables.tracks.every((t) => t.kind === "thread" && t.thread_id === t.thread_name)).toBe(true);
  });

  describe("malformed input", () => {
    const bytes = encodeProfile(FIXTURE);

    it("rejects a truncated profile with the byte offset of the cut field", async () => {
      const error = await parseError(bytes.subarray(0, Math.floor(bytes.length / 2)));
      expect(error.at.offset).toBeGreaterThanOrEqual(0);
      expect(error.reason).toMatch(/past the end/);
    });

    it("rejects a corrupted profile", async () => {
      const corrupted = bytes.slice();
      corrupted.fill(0xff, 40, 52);
      const error = await parseError(corrupted);
      expect(error.at.offset).toBeGreaterThanOrEqual(40);
    });

    it("rejects a profile whose samples name a missing location", async () => {
      const dangling = encodeProfile({ ...FIXTURE, samples: [{ locations: [99], values: [1, 1] }] });
      const error = await parseError(dangling);
      expect(error.reason).toBe("a sample names a location that does not exist");
      expect(error.at.offset).toBeDefined();
    });

    it("rejects an empty file", async () => {
      const error = await parseError(new Uint8Array(0));
      expect(error.at.offset).toBe(0);
    });
  });
});
