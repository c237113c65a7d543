import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sampleRows } from "../../test/helpers/evidence-rows";
import { chromeTraceImporter } from "./chrome-trace";
import { cpuprofileImporter } from "./cpuprofile";
import { importToMemory } from "./run";

// V8's sample weighting (cpuprofile.ts writeV8Samples), shared by .cpuprofile files and the
// Profile/ProfileChunk events of Chrome traces: a sample weighs the time until the next one in
// time order, so a thread's wall_ns covers exactly the time from its first sample to its last,
// plus the last one's share, even when timestamps step back.

/** A hand-made profile whose third timestamp steps back 30 µs: 1010, 1110, 1080, 1130 µs; ends at 1200. */
const STEPPING_BACK = {
  nodes: [
    { id: 1, callFrame: { functionName: "(root)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 }, children: [2, 3, 4, 5] },
    { id: 2, callFrame: { functionName: "a", scriptId: "1", url: "file:///w.js", lineNumber: 0, columnNumber: 0 } },
    { id: 3, callFrame: { functionName: "b", scriptId: "1", url: "file:///w.js", lineNumber: 1, columnNumber: 0 } },
    { id: 4, callFrame: { functionName: "(program)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 } },
    { id: 5, callFrame: { functionName: "d", scriptId: "1", url: "file:///w.js", lineNumber: 3, columnNumber: 0 } },
  ],
  samples: [2, 3, 4, 5],
  timeDeltas: [10, 100, -30, 50],
  startTime: 1000,
  endTime: 1200,
};

describe("V8 sample weights when timestamps step back", () => {
  it("a hand-made cpuprofile: samples in time order, each weighing the time until the next, adding up to the time covered", async () => {
    const result = await importToMemory(cpuprofileImporter, JSON.stringify(STEPPING_BACK));
    const wall = sampleRows(result).filter((r) => r.metric === "wall_ns");
    // In time order: a 1010, (program) 1080, b 1110, d 1130; each lasts until the next, d until endTime.
    expect(wall.map((r) => [r.stack, r.time, r.value])).toEqual([
      ["a", 10_000, 70_000],
      ["(program)", 80_000, 30_000],
      ["b", 110_000, 20_000],
      ["d", 130_000, 70_000],
    ]);
    // endTime − first sample: 190 µs (weighting in file order gave 220: the 30 µs step twice).
    expect(wall.reduce((s, r) => s + r.value, 0)).toBe(190_000);
    const [limitation] = result.summary.limitations;
    expect(limitation).toMatchObject({ code: "SAMPLES_OUT_OF_ORDER", count: 1 });
    expect(limitation.message).toContain("1 sample timestamps step back in time, by 0.03 ms in total");
  });

  it("the real Chrome 116 trace: its thread's wall_ns is the time its samples cover, not more", async () => {
    const file = path.resolve(import.meta.dirname, "../../test/fixtures/peer/Chrome/116/Trace-20230603T221323.json");
    const bytes = readFileSync(file);
    // The file read on its own terms: one Profile (startTime) and its ProfileChunks' timeDeltas.
    const events = (JSON.parse(bytes.toString("utf8")) as { traceEvents?: unknown[] }).traceEvents as { name: string; args: { data: Record<string, any> } }[];
    const profile = events.find((e) => e.name === "Profile")!.args.data;
    const deltas = events.filter((e) => e.name === "ProfileChunk").flatMap((e) => (e.args.data.timeDeltas as number[] | undefined) ?? []);
    let t = profile.startTime as number;
    const times = deltas.map((d) => (t += d));
    const backSteps = deltas.slice(1).filter((d) => d < 0);
    const first = Math.min(...times);
    const last = Math.max(...times);
    // No endTime in the file: the last sample weighs the mean interval.
    const covered = last - first + (last - first) / (times.length - 1);
    expect(backSteps.length).toBeGreaterThan(0);

    const result = await importToMemory(chromeTraceImporter, bytes);
    const wall = sampleRows(result).filter((r) => r.metric === "wall_ns");
    expect(wall).toHaveLength(times.length);
    const totalUs = wall.reduce((s, r) => s + r.value, 0) / 1000;
    // Values are whole ns: the last sample's mean interval is rounded (by at most 0.5 ns).
    expect(totalUs).toBeLessThanOrEqual(covered + 0.0005);
    expect(totalUs).toBeCloseTo(covered, 3);
    // Rows in time order.
    for (let i = 1; i < wall.length; i++) expect(wall[i].time!).toBeGreaterThanOrEqual(wall[i - 1].time!);
    const limitation = result.summary.limitations.find((l) => l.code === "SAMPLES_OUT_OF_ORDER")!;
    expect(limitation.count).toBe(backSteps.length);
    const backMs = -backSteps.reduce((a, b) => a + b, 0) / 1000;
    expect(limitation.message).toContain(`${backSteps.length} sample timestamps step back in time, by ${backMs.toLocaleString("en-US", { maximumFractionDigits: 3 })} ms in total`);
  });
});
