import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processedProfileFile } from "../../test/bench/generators";
import { peerFixture } from "../../test/helpers/evidence-rows";
import { delimited, int, message, packed } from "../../test/helpers/protobuf-writer";
import { EvidenceParseError } from "./errors";
import { importerFor } from "./index";
import { importToMemory } from "./run";
import type { FormatId } from "./types";

/**
 * Every importer's numeric fields at the int64 limit. A value becomes an int64 cell (a sample's
 * time_ns and value, a span's start_ns and dur_ns) after the importer converts it (µs and s to ns,
 * times made relative to the earliest); beyond ±2^63 (2^63 ns is about 292 years) no cell holds it,
 * and the import fails as for malformed input, naming the input's field, instead of at the write.
 * Just inside the limit the value is kept. (2^63 = 9223372036854775808; the largest double below
 * it is 2^63 − 1024.)
 */

const speedscope = (unit: string, weight: string) =>
  `{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","name":"p","unit":"${unit}","startValue":0,"endValue":1,"samples":[[0]],"weights":[${weight}]}]}`;
const speedscopeEvented = (close: string) =>
  `{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","name":"p","unit":"seconds","startValue":0,"endValue":${close},"events":[{"type":"O","frame":0,"at":0},{"type":"C","frame":0,"at":${close}}]}]}`;
const chrome = (...events: string[]) => `{"traceEvents":[${events.join(",")}]}`;
const x = (ts: string, dur = "1") => `{"ph":"X","name":"a","pid":1,"tid":1,"ts":${ts},"dur":${dur}}`;
const frame = (name: string) => `{"functionName":"${name}","scriptId":"0","url":"","lineNumber":1,"columnNumber":1}`;
const cpuprofile = (deltas: string, extra = "") =>
  `{"nodes":[{"id":1,"callFrame":${frame("(root)")},"children":[2]},{"id":2,"callFrame":${frame("f")}${extra}}],"startTime":0,"endTime":1,"samples":[2,2],"timeDeltas":[${deltas}]}`;
const cpuprofileHits = (hits: string) => `{"nodes":[{"id":1,"callFrame":${frame("(root)")},"children":[2]},{"id":2,"callFrame":${frame("f")},"hitCount":${hits}}],"startTime":0,"endTime":1}`;
const heapprofile = (size: string) =>
  `{"head":{"callFrame":${frame("(root)")},"selfSize":0,"id":1,"children":[{"callFrame":${frame("f")},"selfSize":${size},"id":2,"children":[]}]},"samples":[]}`;
const otlpSpan = (id: string, start: string, end: string) => `{"traceId":"0102","spanId":"${id}","name":"s","startTimeUnixNano":"${start}","endTimeUnixNano":"${end}"}`;
const otlp = (...spans: string[]) => `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[${spans.join(",")}]}]}]}`;
const perf = (...samples: [time: string, period: string][]) => samples.map(([time, period]) => `prog 123 ${time}: ${period} cycles:\n\tffff main (/bin/x)\n`).join("\n") + "\n";
const callgrind = (...costs: string[]) => ["events: Ir", "fn=main", ...costs.map((c, i) => `${i + 1} ${c}`), ""].join("\n");
/** A pprof profile (profile.proto) of one sample of one sample type on one function. */
const pprof = (value: bigint) =>
  Uint8Array.from([
    ...message(1, int(1, 1), int(2, 2)),
    ...message(2, packed(1, [1]), packed(2, [value])),
    ...message(4, int(1, 1), message(4, int(1, 1))),
    ...message(5, int(1, 1), int(2, 3)),
    ...[[], [...Buffer.from("samples")], [...Buffer.from("count")], [...Buffer.from("main")]].flatMap((s) => delimited(6, s)),
  ]);

type Expected = { field: string; line?: number } | { kept: { column: "value" | "time_ns" | "start_ns" | "dur_ns"; equals: number } } | { limitation: string } | { reason: RegExp };

const CASES: [FormatId, string, string | Uint8Array, Expected][] = [
  ["speedscope", "weights 1e10 s (1e19 ns)", speedscope("seconds", "1e10"), { field: "weights" }],
  ["speedscope", "weights 9e9 s (9e18 ns)", speedscope("seconds", "9e9"), { kept: { column: "value", equals: 9e18 } }],
  ["speedscope", "weights 1e300 (unit none)", speedscope("none", "1e300"), { field: "weights" }],
  ["speedscope", "evented at 1e10 s", speedscopeEvented("1e10"), { field: "events[].at" }],
  ["chrome-trace", "ts 0 and 1e17 µs", chrome(x("0"), x("1e17")), { field: "ts" }],
  ["chrome-trace", "ts 0 and 9e15 µs (9e18 ns)", chrome(x("0"), x("9e15")), { kept: { column: "start_ns", equals: 9e18 } }],
  ["chrome-trace", "ts -1e17 and 1e17 µs", chrome(x("-1e17"), x("1e17")), { field: "ts" }],
  ["chrome-trace", "dur 1e17 µs", chrome(x("0", "1e17")), { field: "dur" }],
  ["cpuprofile", "timeDeltas 9.3e18 µs", cpuprofile("0,9.3e18"), { field: "timeDeltas" }],
  ["cpuprofile", "timeDeltas summing past the limit", cpuprofile("5e15,5e15"), { field: "timeDeltas" }],
  ["cpuprofile", "timeDeltas 9e15 µs (9e18 ns)", cpuprofile("0,9e15"), { kept: { column: "time_ns", equals: 9e18 } }],
  ["cpuprofile", "hitCount 1e19", cpuprofileHits("1e19"), { field: "hitCount" }],
  ["heapprofile", "selfSize 9.3e18", heapprofile("9.3e18"), { field: "selfSize" }],
  ["heapprofile", "selfSize 2^62", heapprofile("4611686018427387904"), { kept: { column: "value", equals: 2 ** 62 } }],
  ["otlp-json", "startTimeUnixNano of 26 digits (no fixed64)", otlp(otlpSpan("01", "1", "2"), otlpSpan("02", "12345678901234567890123456", "12345678901234567890123457")), { limitation: "OTLP_SPAN_INVALID" }],
  ["otlp-json", "endTimeUnixNano of 26 digits", otlp(otlpSpan("01", "1", "12345678901234567890123456")), { limitation: "OTLP_END_INVALID" }],
  ["otlp-json", "startTimeUnixNano 1 and 2^64 − 1", otlp(otlpSpan("01", "1", "2"), otlpSpan("02", "18446744073709551615", "18446744073709551615")), { field: "startTimeUnixNano" }],
  ["otlp-json", "a span from 1 to 2^64 − 1", otlp(otlpSpan("01", "1", "18446744073709551615")), { field: "endTimeUnixNano" }],
  ["otlp-json", "a span of 2^62 ns", otlp(otlpSpan("01", "1", String(2n ** 62n + 1n))), { kept: { column: "dur_ns", equals: 2 ** 62 } }],
  ["pprof", "value 2^63 − 1", pprof(2n ** 63n - 1n), { field: "sample.value" }],
  ["pprof", "value 2^62", pprof(2n ** 62n), { kept: { column: "value", equals: 2 ** 62 } }],
  ["perf-script", "period 1e20", perf(["1.000000", "99999999999999999999"]), { field: "period", line: 1 }],
  ["perf-script", "times 1e11 s apart", perf(["0.000000", "1"], ["99999999999.000000", "1"]), { field: "time", line: 4 }],
  ["callgrind", "a cost of 1e20", callgrind("99999999999999999999"), { field: "costs", line: 3 }],
  ["callgrind", "costs summing past the limit", callgrind("5000000000000000000", "5000000000000000000"), { field: "costs" }],
  ["folded", "a count of 16 digits", "main;a 1000000000000000\n", { reason: /count too large/ }],
];

describe("numeric fields at the int64 limit", () => {
  it.each(CASES)("%s: %s", async (format, _what, input, expected) => {
    const run = importToMemory(importerFor(format), input);
    if ("field" in expected || "reason" in expected) {
      const error = await run.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(EvidenceParseError);
      const parse = error as EvidenceParseError;
      expect(parse.format).toBe(format);
      if ("reason" in expected) expect(parse.reason).toMatch(expected.reason);
      else {
        expect(parse.at.field).toBe(expected.field);
        expect(parse.reason).toContain(expected.field);
        if (expected.line !== undefined) expect(parse.at.line).toBe(expected.line);
      }
      return;
    }
    const { tables, summary } = await run;
    if ("limitation" in expected) {
      expect(summary.limitations.map((l) => l.code)).toContain(expected.limitation);
      return;
    }
    const { column, equals } = expected.kept;
    const rows = column === "start_ns" || column === "dur_ns" ? tables.spans : tables.samples;
    expect(rows.map((r) => r[column])).toContain(equals);
  });
});

/**
 * The importers added since (issue 19: Firefox Profiler, stackprof, Instruments, Safari, V8 --prof
 * logs, JFR, and Chrome traces' Hermes samples and CpuProfile events), on real files with one value
 * pushed past the limit. They convert without naming their fields, so the builder's check names
 * the column instead (samples.time_ns, samples.value, spans.start_ns): still ARTIFACT_PARSE_FAILED,
 * never INTERNAL_ERROR at the write.
 */
const text = (relative: string) => new TextDecoder().decode(peerFixture(relative));
const json = (relative: string) => JSON.parse(text(relative));
const edited = (relative: string, edit: (file: any) => void) => {
  const file = json(relative);
  edit(file);
  return JSON.stringify(file);
};
const STACKPROF = "stackprof/simple-stackprof.json";
const SAFARI = "Safari/13.1/simple.html-recording.json";

const LATER_CASES: [FormatId, string, () => Promise<string | Uint8Array>, string][] = [
  ["stackprof", "raw_timestamp_deltas 1e20 µs", async () => edited(STACKPROF, (f) => (f.raw_timestamp_deltas[5] = 1e20)), "samples.time_ns"],
  ["stackprof", "cpu interval 1e20 µs", async () => edited(STACKPROF, (f) => Object.assign(f, { mode: "cpu", interval: 1e20 })), "samples.value"],
  [
    "stackprof",
    "a frame's samples 1e20 (no raw)",
    async () =>
      edited(STACKPROF, (f) => {
        delete f.raw;
        delete f.raw_timestamp_deltas;
        f.frames[Object.keys(f.frames)[0]].samples = 1e20;
      }),
    "samples.value",
  ],
  ["gecko", "its first sample's time 1e17 ms", async () => JSON.stringify(json("Firefox/63/simple-firefox.json").profile).replace(/"data":\[\[(\d+),([\d.]+)/, '"data":[[$1,1e17'), "samples.time_ns"],
  ["firefox-processed", "a thread's last time 1e17 ms", async () => (await processedText()).replace(/,([\d.]+)\],"threadCPUDelta"/, ',1e17],"threadCPUDelta"'), "samples.value"],
  ["firefox-processed", "threadCPUDelta 1e20 µs", async () => (await processedText()).replace(/"threadCPUDelta":\[(\d+),\d+,/, '"threadCPUDelta":[$1,100000000000000000000,'), "samples.value"],
  ["safari-timeline", "a sample's timestamp 1e12 s", async () => edited(SAFARI, (f) => (f.recording.sampleStackTraces[3].timestamp = 1e12)), "samples.time_ns"],
  ["safari-timeline", "sampleDurations 1e12 s", async () => edited(SAFARI, (f) => (f.recording.sampleDurations[3] = 1e12)), "samples.value"],
  [
    "safari-timeline",
    "a script record from 1e12 s",
    async () =>
      edited(SAFARI, (f) => {
        const record = f.recording.records.find((r: { type: string }) => r.type === "timeline-record-type-script");
        Object.assign(record, { startTime: 1e12, endTime: 2e12 });
      }),
    "spans.start_ns",
  ],
  ["instruments-deep-copy", "weights of 1e13 s", async () => text("Instruments/16.0/simple-time-profile-deep-copy.txt").replace("797.00 ms", "10000000000000 s").replace("786.00 ms", "10000000000000 s"), "samples.value"],
  ["v8-log", "a tick at 1e20 µs", async () => text("node/8.5.0/isolate-0x102802600-v8.log").replace(/^tick,(0x[0-9a-f]+),\d+,/m, "tick,$1,100000000000000000000,"), "samples.time_ns"],
  ["chrome-trace", "a Hermes sample's ts 1e17 µs", async () => edited("trace-event/simple-with-samples.json", (f) => (f.samples[2].ts = 1e17)), "ts"],
  ["chrome-trace", "a CpuProfile event's timeDeltas 1e17 µs", async () => edited("Chrome/66/worker.json", (f) => ((Array.isArray(f) ? f : f.traceEvents).find((e: { name: string }) => e.name === "CpuProfile").args.data.cpuProfile.timeDeltas[3] = 1e17)), "timeDeltas"],
];

let processed: string | undefined;
/** A small processed profile as samply writes it (the benchmark's generator, about 40 kB). */
async function processedText(): Promise<string> {
  if (processed === undefined) {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "emberscope-limits-")), "processed.json");
    await processedProfileFile(file, 40_000);
    processed = readFileSync(file, "utf8");
    rmSync(path.dirname(file), { recursive: true, force: true });
  }
  return processed;
}

describe("numeric fields at the int64 limit in the importers added for issue 19", () => {
  it.each(LATER_CASES)("%s: %s", async (format, _what, make, field) => {
    const input = await make();
    const error = await importToMemory(importerFor(format), input).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EvidenceParseError);
    const parse = error as EvidenceParseError;
    expect(parse.format).toBe(format);
    expect(parse.at.field).toBe(field);
    expect(parse.reason).toContain(field);
  });

  it("jfr: a chunk of one tick a second keeps its times, relative to the first, in range", async () => {
    // ticksPerSecond is the chunk header's 8 bytes at offset 56 (after magic, version, size, offsets, start and duration, start ticks).
    const bytes = new Uint8Array(readFileSync(path.join(import.meta.dirname, "../../test/fixtures/jfr/burn.jfr")));
    new DataView(bytes.buffer, bytes.byteOffset).setBigInt64(56, 1n);
    const { tables } = await importToMemory(importerFor("jfr"), bytes);
    const times = tables.samples.map((s) => s.time_ns).filter((t): t is number => t !== null);
    expect(times.length).toBeGreaterThan(0);
    for (const t of times) expect(Number.isInteger(t) && t >= 0 && t < 2 ** 63).toBe(true);
    expect(Math.max(...times)).toBeGreaterThan(1e18); // seconds' worth of ticks, each now a second
  });
});
