import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeHotspots, callService, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

/**
 * The sweep of issue 19's "Done when": every real file other tools wrote that the tests keep
 * (speedscope's corpus in fixtures/peer, the V8 logs and JFR recordings made here) is imported
 * through the import service, its format found by sniffing alone, and its totals agree with an
 * independent reader: the file read on its own terms by the few lines below (never the importer's
 * code), or the writing tool's own reading kept beside it (node --prof-process, jfr print).
 * A file added to those folders without a reader here fails the sweep.
 */

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures");
/** Folders of real files, and the files in them that are no profile (licences, notes, oracles, sources). */
const FOLDERS = ["peer", "v8-log", "jfr"];
const NOT_PROFILES = /(^README\.md|^LICENSE.*|\.expected\.json|\.prof-process\.txt|\.java|\.mjs|\.js)$/;

type Json = any;
const json = (bytes: Buffer): Json => JSON.parse(bytes.toString("utf8"));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const events = (trace: Json): Json[] => (Array.isArray(trace) ? trace : trace.traceEvents);

/** Each expected total: a metric and its grand total (exact, or within `close` decimal places as toBeCloseTo reads them). */
type Totals = Record<string, number | { about: number; digits: number }>;

/** Samples in the CPU profiles a Chrome timeline keeps whole in CpuProfile events (Chrome 65, 66). */
const cpuProfileEvents = (bytes: Buffer) => ({ samples: sum(events(json(bytes)).filter((e) => e.name === "CpuProfile").map((e) => e.args.data.cpuProfile.samples.length)) });
/** Samples of a V8 profile streamed as Profile + ProfileChunk events (Chrome 70 on). */
const profileChunks = (bytes: Buffer) => ({ samples: sum(events(json(bytes)).filter((e) => e.name === "ProfileChunk").map((e) => e.args.data.cpuProfile?.samples?.length ?? 0)) });
/** A heap profile's bytes: every node's selfSize. */
const heapBytes = (bytes: Buffer) => {
  const walk = (node: Json): number => node.selfSize + sum(node.children.map(walk));
  return { alloc_bytes: walk(json(bytes).head) };
};
/** A Gecko profile's samples: the rows of every thread's samples table, in every process. */
const geckoSamples = (bytes: Buffer) => {
  const file = json(bytes);
  const profile = file.profile ?? file;
  const count = (p: Json): number => sum(p.threads.map((t: Json) => t.samples.data.length)) + sum((p.processes ?? []).map(count));
  return { samples: count(profile) };
};
/** The tick processor's count in its header: "(N ticks, …)". */
const tickProcessor = (oracle: string) => () => ({ samples: Number(/\((\d+) ticks,/.exec(readFileSync(path.join(FIXTURES, "v8-log", oracle), "utf8"))![1]) });
/** jfr print's count of execution samples, kept beside the recording. */
const jfrPrint = (oracle: string) => () => ({ samples: JSON.parse(readFileSync(path.join(FIXTURES, "jfr", oracle), "utf8"))["jdk.ExecutionSample"].count });

/** Per file (relative to fixtures/): the format sniffing must find, and the totals the file itself gives. */
const READERS: Record<string, { format: string; totals: (bytes: Buffer) => Totals }> = {
  "peer/Chrome/116/Trace-20230603T221323.json": { format: "chrome-trace", totals: profileChunks },
  "peer/Chrome/65/simple-timeline.json": { format: "chrome-trace", totals: cpuProfileEvents },
  "peer/Chrome/66/worker.json": { format: "chrome-trace", totals: cpuProfileEvents },
  "peer/Chrome/65/sucrase.cpuprofile": { format: "cpuprofile", totals: (b) => ({ samples: json(b).samples.length }) },
  "peer/node/10.11.0/example.cpuprofile": { format: "cpuprofile", totals: (b) => ({ samples: json(b).samples.length }) },
  "peer/Chrome/69/Heap-20181005T144546.heapprofile": { format: "heapprofile", totals: heapBytes },
  "peer/node/10.11.0/Heap-20181003T105432.heapprofile": { format: "heapprofile", totals: heapBytes },
  "peer/Firefox/63/simple-firefox.json": { format: "gecko", totals: geckoSamples },
  "peer/Instruments/16.0/simple-time-profile-deep-copy.txt": {
    format: "instruments-deep-copy",
    // The root row's weight ("4.93 s"): the whole profile.
    totals: (b) => {
      const [, value, unit] = /^([\d.]+) (ms|s)\b/.exec(b.toString("utf8").split("\n")[1])!;
      return { cpu_ns: Math.round(Number(value) * (unit === "s" ? 1e9 : 1e6)) };
    },
  },
  "peer/Safari/13.1/simple.html-recording.json": {
    format: "safari-timeline",
    totals: (b) => {
      const { sampleStackTraces, sampleDurations } = json(b).recording;
      return { samples: sampleStackTraces.length, wall_ns: { about: sum(sampleDurations) * 1e9, digits: -1 } };
    },
  },
  "peer/stackprof/simple-stackprof.json": {
    format: "stackprof",
    totals: (b) => {
      const file = json(b);
      return { samples: file.samples, wall_ns: sum(file.raw_timestamp_deltas) * 1000 };
    },
  },
  "peer/stackcollapse/simple-with-invalids.txt": {
    format: "folded",
    // Lines of frames and a count; comments (# or //) and lines without a count are not samples.
    totals: (b) => ({
      samples: sum(
        b
          .toString("utf8")
          .split("\n")
          .filter((line) => !/^\s*(#|\/\/)/.test(line))
          .map((line) => /^\S.* (\d+)$/.exec(line.trim()))
          .filter((m) => m !== null)
          .map((m) => Number(m![1])),
      ),
    }),
  },
  "peer/trace-event/simple-with-samples.json": { format: "chrome-trace", totals: (b) => ({ samples: sum(json(b).samples.map((s: Json) => Number(s.weight ?? 1))) }) },
  "peer/trace-event/multi-thread-with-samples.json": { format: "chrome-trace", totals: (b) => ({ samples: sum(json(b).samples.map((s: Json) => Number(s.weight ?? 1))) }) },
  "peer/node/8.5.0/isolate-0x102802600-v8.log": { format: "v8-log", totals: tickProcessor("node-8.5.0-isolate-0x102802600-v8.prof-process.txt") },
  "v8-log/isolate-0x11b3ff90-27620-v8.log": { format: "v8-log", totals: tickProcessor("isolate-0x11b3ff90-27620-v8.prof-process.txt") },
  "peer/java-flight-recorder/heavy.jfr": { format: "jfr", totals: jfrPrint("heavy.jfr.expected.json") },
  "jfr/burn.jfr": { format: "jfr", totals: jfrPrint("burn.jfr.expected.json") },
};

/** Every real profile in the fixture folders, relative to fixtures/. */
function realFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (!NOT_PROFILES.test(entry)) out.push(path.relative(FIXTURES, full));
    }
  };
  for (const folder of FOLDERS) walk(path.join(FIXTURES, folder));
  return out.sort();
}

describe("a sweep of the real files of every claimed format", () => {
  it("has an independent reader for every real file kept, and every file it reads is there", () => {
    const files = realFiles();
    expect(files.filter((f) => !(f in READERS))).toEqual([]);
    expect(Object.keys(READERS).filter((f) => !files.includes(f))).toEqual([]);
  });

  it.each(Object.entries(READERS))("%s imports, sniffed, with the totals the file gives", async (relative, { format, totals }) => {
    const root = tempProject();
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    const bytes = readFileSync(path.join(FIXTURES, relative));
    // Copied into the project root (imports are confined to it), its folders in its name.
    const target = path.join(root, relative.replaceAll("/", "__"));
    writeFileSync(target, bytes);
    const result = await callService(importArtifact, ctx, { path: target });
    expect(result.format).toBe(format);
    for (const [metric, expected] of Object.entries(totals(bytes))) {
      const page = await callService(analyzeHotspots, ctx, { run_id: result.run_id, metric, limit: 1 });
      expect(page.metric, `${relative}: ${metric}`).toBe(metric);
      if (typeof expected === "number") expect(page.grand_total, `${relative}: ${metric}`).toBe(expected);
      else expect(page.grand_total, `${relative}: ${metric}`).toBeCloseTo(expected.about, expected.digits);
    }
  }, 120_000);
});
