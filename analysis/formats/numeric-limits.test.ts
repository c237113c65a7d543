import { describe, expect, it } from "vitest";
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
