import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { initWorkspace } from "../../server/store/workspace";
import { MB, measuredImport, prepareInput } from "./evidence.bench";
import { chromeTraceFile, cpuprofileFile, foldedFile, geckoProfileFile, instrumentsDeepCopyFile, processedProfileFile, safariRecordingFile, stackprofFile } from "./generators";
import { callgrindFile, claudeCodeSessionFile, codexRolloutFile, jaegerJsonFile, jfrFile, otlpJsonFile, perfScriptFile, pprofFile, speedscopeFile, v8LogFile } from "./generators";


/** ../shared/bench beside the main checkout (a worktree elsewhere finds it through the repository it shares). */
function sharedBenchDir(): string {
  const beside = path.resolve(import.meta.dirname, "..", "..", "..", "shared", "bench");
  if (existsSync(beside)) return beside;
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: import.meta.dirname, encoding: "utf8" }).stdout.trim();
  return path.resolve(common, "..", "..", "shared", "bench");
}
const SHARED = sharedBenchDir();

function sharedGenerator(script: string) {
  return (file: string, bytes: number) => {
    const made = spawnSync(process.execPath, [path.join(SHARED, script), file, String(bytes)], { stdio: "inherit" });
    if (made.status !== 0) throw new Error(`${script} failed (${made.status})`);
    return Promise.resolve();
  };
}

/** What a generator says it wrote, checked against the import's rows before its figures count. */
interface Written {
  samples?: number;
}

/** A format's generator, by bytes wanted (the cpuprofile generator counts samples: ~11.5 bytes each). */
const GENERATORS: Record<string, { ext: string; make: (file: string, bytes: number, written: Written) => Promise<unknown> }> = {
  "shared-gen-trace": { ext: "json", make: sharedGenerator("gen-trace.js") },
  "shared-gen-cpuprofile": { ext: "cpuprofile", make: sharedGenerator("gen-cpuprofile.js") },
  "shared-gen-folded": { ext: "folded", make: sharedGenerator("gen-folded.js") },
  "chrome-trace": { ext: "json", make: chromeTraceFile },
  cpuprofile: { ext: "cpuprofile", make: (file, bytes) => cpuprofileFile(file, Math.round(bytes / 11.5), 100_000) },
  folded: { ext: "folded", make: foldedFile },
  gecko: { ext: "json", make: geckoProfileFile },
  "firefox-processed": { ext: "json", make: processedProfileFile },
  stackprof: { ext: "json", make: stackprofFile },
  "instruments-deep-copy": { ext: "txt", make: instrumentsDeepCopyFile },
  "safari-timeline": { ext: "json", make: safariRecordingFile },
  "perf-script": { ext: "perf-script", make: perfScriptFile },
  callgrind: { ext: "callgrind", make: callgrindFile },
  "otlp-json": { ext: "otlp.jsonl", make: otlpJsonFile },
  "jaeger-json": { ext: "json", make: jaegerJsonFile },
  // Call paths from a pool sharing their tops, as real profiles' (about 30 k stack nodes); the
  // "-distinct-paths" ones make a new path nearly every sample (millions of stack nodes: the worst case).
  speedscope: { ext: "speedscope.json", make: (file, bytes) => speedscopeFile(file, bytes, "pool") },
  pprof: { ext: "pb", make: (file, bytes) => pprofFile(file, bytes, "pool") },
  "speedscope-distinct-paths": { ext: "speedscope.json", make: (file, bytes) => speedscopeFile(file, bytes, "random") },
  "pprof-distinct-paths": { ext: "pb", make: (file, bytes) => pprofFile(file, bytes, "random") },
  "v8-log": { ext: "log", make: (file, bytes, written) => v8LogFile(file, bytes, written) },
  jfr: { ext: "jfr", make: (file, bytes, written) => jfrFile(file, bytes, written) },
  "claude-code": { ext: "jsonl", make: claudeCodeSessionFile },
  "codex-rollout": { ext: "jsonl", make: codexRolloutFile },
};

const GOAL = { time_ratio_at_5x: 5, peak_rss_mb: 2048 };

/**
 * Issue 19, item 13: import cost must grow linearly with the input. Each format is imported at a
 * base size (200 MB) and at five times it (1 GB), each into a fresh workspace as a child process
 * with its peak RSS sampled; the goal is the large import in at most 5× the base one's time, within
 * 2 GB of RSS. The shared generators (../shared/bench/) give shapes this project's own generators
 * were not written for. Hours on this machine for every format: EMBERSCOPE_BENCH_SCALING_FORMATS
 * picks some (comma-separated), EMBERSCOPE_BENCH_SCALING_MB changes the base size. The ratio is
 * of CPU seconds (user + system, all the import's threads), which other work on a shared machine
 * moves far less than wall time; both are reported, with the load average before each import.
 * pprof reads its input twice (its string table comes after the samples) and speedscope streams
 * it, neither holding the document; both keep the builder's stack tree. pprof, speedscope, V8
 * logs and JFR draw their call paths from a pool of 5,000 sharing their tops, as real profiles
 * repeat theirs (about 20 k stack nodes whatever the size); pprof-distinct-paths and
 * speedscope-distinct-paths make a new path nearly every sample (about five stack nodes a pprof
 * sample, growing with the input: the stack tree's worst case, past 2 GB well before 1 GB of
 * input). Each generator that counts its samples has them checked against the import's.
 */
export async function importScalingBenchmark(): Promise<Record<string, unknown>> {
  const baseMb = Number(process.env.EMBERSCOPE_BENCH_SCALING_MB ?? 200);
  const picked = process.env.EMBERSCOPE_BENCH_SCALING_FORMATS?.split(",").map((f) => f.trim()) ?? Object.keys(GENERATORS);
  for (const name of picked) if (!GENERATORS[name]) throw new Error(`unknown format ${name}; known: ${Object.keys(GENERATORS).join(", ")}`);
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-scaling-"));
  const formats: Record<string, unknown> = {};
  try {
    for (const name of picked) {
      const { ext, make } = GENERATORS[name];
      const sizes = [];
      for (const factor of [1, 5]) {
        const file = path.join(dir, `${name}-${factor}.${ext}`);
        const written: Written = {};
        const bytes = await prepareInput({ format: name, file, make: (f) => make(f, baseMb * factor * MB, written) });
        const workspace = path.join(dir, `ws-${name}-${factor}`);
        mkdirSync(workspace);
        initWorkspace(workspace).close();
        const load = loadavg()[0];
        const outcome = await measuredImport(workspace, file);
        if (written.samples !== undefined && outcome.result.rows.samples !== written.samples) throw new Error(`${name} ×${factor}: ${outcome.result.rows.samples} samples imported of ${written.samples} written`);
        sizes.push({ input_mb: Math.round(bytes / MB), seconds: Math.round(outcome.seconds * 100) / 100, cpu_seconds: Math.round(outcome.cpu_seconds * 100) / 100, peak_rss_mb: outcome.peak_rss_mb, load_average_1m: Math.round(load * 10) / 10, machine_check_ms: outcome.check_ms, rows: outcome.result.rows });
        rmSync(file);
        rmSync(workspace, { recursive: true, force: true });
        console.error(`${name} ×${factor}: ${sizes.at(-1)!.input_mb} MB in ${sizes.at(-1)!.seconds} s (${sizes.at(-1)!.cpu_seconds} s CPU), peak RSS ${outcome.peak_rss_mb} MB, load ${sizes.at(-1)!.load_average_1m}`);
      }
      const [base, large] = sizes;
      const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
      const cpuRatio = ratio(large.cpu_seconds, base.cpu_seconds);
      const sizeRatio = ratio(large.input_mb, base.input_mb);
      formats[name] = { base, large, size_ratio: sizeRatio, cpu_time_ratio: cpuRatio, wall_time_ratio: ratio(large.seconds, base.seconds), meets_goal: cpuRatio <= GOAL.time_ratio_at_5x * (sizeRatio / 5) && large.peak_rss_mb <= GOAL.peak_rss_mb };
    }
    return { base_mb: baseMb, formats, goal: GOAL };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
