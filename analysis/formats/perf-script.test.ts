import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, sampleRows } from "../../test/helpers/evidence-rows";
import { perfScriptImporter } from "./perf-script";
import { importToMemory, type MemoryImport } from "./run";

const CALL_CHAINS = `# ========
# captured on    : Sun Nov 29 22:02:15 2026
# perf version : 6.1.187
# ========
#
app 100/101 [002] 10.000100:     250000 cpu-clock:ppp: 
\tffffffff8160ebe4 vma_merge_new_range+0x54 ([kernel.kallsyms])
\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])
\t            1139 compute+0x10 (/opt/app/bin/app)
\t            1190 main+0x20 (/opt/app/bin/app)

app 100/101 [002] 10.000350:     250000 cpu-clock:ppp: 
\t            1139 compute+0x18 (/opt/app/bin/app)
\t            1190 main+0x20 (/opt/app/bin/app)

Web Content 200/202 [000] 10.001000:       1000 cycles:u: 
\t    7f00deadbeef LazyCompile:~render /app/ui.js:10+0x5 (/tmp/perf-200.map)
\t    7f0000001234 std::vector<int, std::allocator<int> >::push_back(int const&)+0x12 (/usr/lib/libstdc++.so.6 (deleted))
\t               0 [unknown] ([unknown])

app 100/101 [002] 10.002000:     250000 cpu-clock:ppp: 
\t            1190 main+0x20 (/opt/app/bin/app)

`;

// perf script -G --ns: no call chains, the sampled ip on the header line; older perf right-aligns comm.
const NO_CALL_CHAINS = `            perf  1234 [001]  5.000000001: task-clock: ffffffff81234567 native_write_msr ([kernel.kallsyms])
            perf  1234 [001]  5.000000501: task-clock: 55d0c0ffee00 main (/usr/bin/perf)
     kworker/0:1    15 [000]  5.000001000: task-clock: 
`;

/** Sample rows with their track row, so a test can read its thread and process. */
function rows(result: MemoryImport) {
  const tracks = new Map(result.tables.tracks.map((t) => [t.track_id, t]));
  return sampleRows(result).map((row) => ({ ...row, track: tracks.get(row.track)! }));
}

const parseError = (input: string | Uint8Array) => parseErrorOf(perfScriptImporter, input);

describe("perf script importer", () => {
  it("turns each sample into timed samples on its thread, weighted by period and counted, on root-first stacks", async () => {
    const result = await importToMemory(perfScriptImporter, CALL_CHAINS, { chunkSize: 64 });
    const events = rows(result).filter((r) => r.metric !== "samples");
    expect(events.map((r) => [r.stack, r.metric, r.value, r.time])).toEqual([
      ["main;compute;entry_SYSCALL_64_after_hwframe;vma_merge_new_range", "cpu_clock", 250000, 0],
      ["main;compute", "cpu_clock", 250000, 250000],
      ["[unknown];std::vector<int, std::allocator<int> >::push_back(int const&);LazyCompile:~render /app/ui.js:10", "cycles", 1000, 900000],
      ["main", "cpu_clock", 250000, 1900000],
    ]);
    const counted = rows(result).filter((r) => r.metric === "samples");
    expect(counted.map((r) => r.value)).toEqual([1, 1, 1, 1]);
    expect(result.tables.metrics.map((m) => [m.name, m.unit, m.kind])).toEqual([
      ["samples", "count", "sampled"],
      ["cpu_clock", "ns", "sampled"],
      ["cycles", "events", "sampled"],
    ]);
    expect(result.tables.tracks.map((t) => [t.process_id, t.thread_id, t.process_name, t.kind])).toEqual([
      ["100", "101", "app", "thread"],
      ["200", "202", "Web Content", "thread"],
    ]);
    expect(result.summary.metadata).toMatchObject({ time_origin_ns: "10000100000", "perf.perf_version": "6.1.187" });
  });

  it("classifies kernel, JIT and native frames and keeps the dso as module", async () => {
    const result = await importToMemory(perfScriptImporter, CALL_CHAINS);
    const byName = new Map(result.tables.frames.map((f) => [f.name, f]));
    expect(byName.get("vma_merge_new_range")).toMatchObject({ kind: "kernel", module: "[kernel.kallsyms]" });
    expect(byName.get("compute")).toMatchObject({ kind: "native", module: "/opt/app/bin/app" });
    expect(byName.get("LazyCompile:~render /app/ui.js:10")).toMatchObject({ kind: "js", module: "/tmp/perf-200.map" });
    expect(byName.get("std::vector<int, std::allocator<int> >::push_back(int const&)")).toMatchObject({ module: "/usr/lib/libstdc++.so.6 (deleted)" });
    expect(byName.get("[unknown]")).toMatchObject({ kind: "native", module: null });
    expect(result.tables.frames).toHaveLength(7);
  });

  it("reads output without call chains, without period, with right-aligned comm and nanosecond times", async () => {
    const result = await importToMemory(perfScriptImporter, NO_CALL_CHAINS);
    const events = rows(result).filter((r) => r.metric !== "samples");
    expect(events.map((r) => [r.stack, r.metric, r.value, r.time, r.track.thread_id, r.track.process_id, r.track.process_name])).toEqual([
      ["native_write_msr", "task_clock", 1, 0, "1234", null, "perf"],
      ["main", "task_clock", 1, 500, "1234", null, "perf"],
      ["(no stack)", "task_clock", 1, 999, "15", null, "kworker/0:1"],
    ]);
    expect(result.tables.metrics.find((m) => m.name === "task_clock")).toMatchObject({ unit: "events" });
    expect(result.tables.frames.find((f) => f.name === "native_write_msr")).toMatchObject({ kind: "kernel" });
    expect(result.summary.limitations.map((l) => l.code)).toContain("PERF_SCRIPT_SAMPLE_WITHOUT_STACK");
  });

  it("keeps the source file perf prints under a frame (-F +srcline) and skips unknown lines as a limitation", async () => {
    const text = `app 7 1.000000: 10 cycles: \n\t 1139 compute+0x10 (/opt/app)\n  app.c:42\n\t 1190 main (/opt/app)\n\n<garbage>\n\napp 7 1.000001: 5 cycles: \n\t 1190 main (/opt/app)\n\n`;
    const result = await importToMemory(perfScriptImporter, text);
    expect(result.tables.frames.find((f) => f.name === "compute")).toMatchObject({ file: "app.c", line: null });
    expect(rows(result).filter((r) => r.metric === "cycles").map((r) => [r.stack, r.value])).toEqual([
      ["main;compute", 10],
      ["main", 5],
    ]);
    expect(result.summary.limitations.find((l) => l.code === "PERF_SCRIPT_INVALID_LINES")).toMatchObject({ count: 1 });
  });

  it("shows symbols perf printed mangled (perf script --no-demangle, or a perf without a demangler) demangled, keeping them", async () => {
    const text = "app 100/101 [002] 10.000100:     250000 cpu-clock:ppp: \n\t            1139 _Z5deltav+0x10 (/opt/app/bin/app)\n\t            1150 _RNvCseg5vz0rOR1E_6sample4main+0x8 (/opt/app/bin/app)\n\t            1190 main+0x20 (/opt/app/bin/app)\n\n";
    const result = await importToMemory(perfScriptImporter, text);
    expect(sampleRows(result).map((r) => r.stack)).toEqual(["main;sample::main;delta()", "main;sample::main;delta()"]);
    expect(result.tables.frames.map((f) => [f.name, f.mangled_name, f.module])).toEqual([
      ["main", null, "/opt/app/bin/app"],
      ["sample::main", "_RNvCseg5vz0rOR1E_6sample4main", "/opt/app/bin/app"],
      ["delta()", "_Z5deltav", "/opt/app/bin/app"],
    ]);
  });

  it("sniffs perf script text and refuses other text", () => {
    expect(perfScriptImporter.sniff(new TextEncoder().encode(CALL_CHAINS), CALL_CHAINS, null)).toBeGreaterThanOrEqual(0.9);
    expect(perfScriptImporter.sniff(new TextEncoder().encode(NO_CALL_CHAINS), NO_CALL_CHAINS, "x.perf")).toBeGreaterThanOrEqual(0.8);
    expect(perfScriptImporter.sniff(new Uint8Array(), "main;work 3\nmain 1\n", null)).toBe(0);
    expect(perfScriptImporter.sniff(new Uint8Array(), '{"traceEvents": []}', null)).toBe(0);
  });

  it("imports a real `perf record -g` capture with the sample count and period sum of its own text and report", async (ctx) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "emberscope-perf-"));
    const src = path.join(dir, "spin.c");
    writeFileSync(src, "static volatile long sink;\nstatic void leaf(int n){for(int i=0;i<n;i++)sink+=i;}\nstatic void mid(int n){leaf(n);leaf(n/2);}\nint main(void){for(int i=0;i<3000;i++)mid(20000);return 0;}\n");
    const program = path.join(dir, "spin");
    const data = path.join(dir, "perf.data");
    try {
      execFileSync("cc", ["-O0", "-g", "-fno-omit-frame-pointer", "-o", program, src], { stdio: "ignore" });
      execFileSync("perf", ["record", "-g", "-o", data, "--", program], { stdio: "ignore", timeout: 60_000 });
    } catch (error) {
      ctx.skip(true, `cc or perf record is not usable here: ${(error as Error).message.split("\n")[0]}`);
      return;
    }
    const text = execFileSync("perf", ["script", "-i", data], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: ["ignore", "pipe", "ignore"] });
    // Independently of the importer: a sample is a blank-line-separated block; its first line ends `period event:`.
    const blocks = text.split(/\n\s*\n/).filter((b) => b.trim() !== "" && !b.trimStart().startsWith("#"));
    const periods = blocks.map((b) => Number(/(\d+)\s+\S+:\s*$/.exec(b.split("\n")[0])![1]));
    // `# Samples:` rounds to 1K from a thousand on; the per-command rows of `-n` count exactly.
    const report = execFileSync("perf", ["report", "--stdio", "-n", "-g", "none", "-i", data, "--sort", "comm"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const perCommand = [...report.matchAll(/^\s+[\d.]+%\s+(?:[\d.]+%\s+)?(\d+)\s+\S/gm)].map((m) => Number(m[1]));
    expect(perCommand.length).toBeGreaterThan(0);
    expect(perCommand.reduce((a, b) => a + b, 0)).toBe(blocks.length);

    const result = await importToMemory(perfScriptImporter, text, { fileName: "perf.script" });
    const all = rows(result);
    expect(all.filter((r) => r.metric === "samples").reduce((n, r) => n + r.value, 0)).toBe(blocks.length);
    expect(all.filter((r) => r.metric !== "samples").reduce((n, r) => n + r.value, 0)).toBe(periods.reduce((a, b) => a + b, 0));
    const eventCount = /Event count \(approx\.\): (\d+)/.exec(report);
    if (eventCount) expect(all.filter((r) => r.metric !== "samples").reduce((n, r) => n + r.value, 0)).toBe(Number(eventCount[1]));
    // The program's own functions are on the stacks, main below leaf.
    expect(all.some((r) => /(^|;)main;mid;leaf$/.test(r.stack))).toBe(true);
    if (text.includes("[kernel.kallsyms]")) expect(result.tables.frames.some((f) => f.kind === "kernel")).toBe(true);
    expect(result.summary.limitations.filter((l) => l.code === "PERF_SCRIPT_INVALID_LINES")).toEqual([]);
  });

  describe("malformed input", () => {
    it("rejects a file cut in the middle of a call chain", async () => {
      const cut = CALL_CHAINS.slice(0, CALL_CHAINS.indexOf("std::vector") + 10);
      const error = await parseError(cut);
      expect(error.at.line).toBe(18);
    });

    it("rejects corrupted bytes", async () => {
      const bytes = new TextEncoder().encode(CALL_CHAINS);
      bytes.fill(0, 400, 420);
      const error = await parseError(bytes);
      expect(error.at.line).toBeGreaterThan(5);
    });

    it("rejects text that is not perf script output", async () => {
      const error = await parseError("hello world\nthis is not perf\n");
      expect(error.at.line).toBe(1);
    });

    it("rejects an empty file", async () => {
      const error = await parseError("");
      expect(error.at.line).toBe(1);
      expect((await parseError("# ========\n#\n\n")).at.line).toBeDefined();
    });
  });
});
