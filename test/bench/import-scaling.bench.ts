import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { initWorkspace } from "../../server/store/workspace";
import { MB, measuredImport, prepareInput } from "./evidence.bench";
import { cpuTicks, stealPercent, summarize } from "./stats";
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

interface ImportRound {
  seconds: number;
  cpu_seconds: number;
  peak_rss_mb: number;
  load_average_1m: number;
  cpu_steal_percent: number | null;
  machine_check_ms: number;
  rows: Record<string, number>;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/** One size's figures over its rounds: the median CPU and wall seconds (each round's too), the largest peak RSS. */
function sizeFigures(bytes: number, rounds: ImportRound[]) {
  return {
    input_mb: Math.round(bytes / MB),
    seconds: round2(summarize(rounds.map((r) => r.seconds)).p50),
    cpu_seconds: round2(summarize(rounds.map((r) => r.cpu_seconds)).p50),
    peak_rss_mb: Math.max(...rounds.map((r) => r.peak_rss_mb)),
    cpu_seconds_each: rounds.map((r) => r.cpu_seconds),
    seconds_each: rounds.map((r) => r.seconds),
    load_average_1m_each: rounds.map((r) => r.load_average_1m),
    cpu_steal_percent_each: rounds.map((r) => r.cpu_steal_percent),
    machine_check_ms_each: rounds.map((r) => r.machine_check_ms),
    rows: rounds[0].rows,
  };
}

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
 * EMBERSCOPE_BENCH_SCALING_ROUNDS=3 imports each size three times, base and large alternating, and
 * takes the ratio of the medians (on a VM whose neighbours take its CPU, one round can be 20 % off).
 */
export async function importScalingBenchmark(): Promise<Record<string, unknown>> {
  const baseMb = Number(process.env.EMBERSCOPE_BENCH_SCALING_MB ?? 200);
  const rounds = Math.max(1, Number(process.env.EMBERSCOPE_BENCH_SCALING_ROUNDS ?? 1));
  const picked = process.env.EMBERSCOPE_BENCH_SCALING_FORMATS?.split(",").map((f) => f.trim()) ?? Object.keys(GENERATORS);
  for (const name of picked) if (!GENERATORS[name]) throw new Error(`unknown format ${name}; known: ${Object.keys(GENERATORS).join(", ")}`);
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-scaling-"));
  const formats: Record<string, unknown> = {};
  try {
    for (const name of picked) {
      const { ext, make } = GENERATORS[name];
      const inputs = [];
      for (const factor of [1, 5]) {
        const file = path.join(dir, `${name}-${factor}.${ext}`);
        const written: Written = {};
        const bytes = await prepareInput({ format: name, file, make: (f) => make(f, baseMb * factor * MB, written) });
        inputs.push({ factor, file, bytes, written, rounds: [] as ImportRound[] });
      }
      // Base and large alternate, so that a change in the machine's load falls on both.
      for (let round = 0; round < rounds; round++) {
        for (const input of inputs) {
          const workspace = path.join(dir, `ws-${name}-${input.factor}`);
          mkdirSync(workspace);
          initWorkspace(workspace).close();
          const load = loadavg()[0];
          const steal = cpuTicks();
          const outcome = await measuredImport(workspace, input.file);
          if (input.written.samples !== undefined && outcome.result.rows.samples !== input.written.samples) throw new Error(`${name} ×${input.factor}: ${outcome.result.rows.samples} samples imported of ${input.written.samples} written`);
          const measured = { seconds: round2(outcome.seconds), cpu_seconds: round2(outcome.cpu_seconds), peak_rss_mb: outcome.peak_rss_mb, load_average_1m: Math.round(load * 10) / 10, cpu_steal_percent: stealPercent(steal, cpuTicks()), machine_check_ms: outcome.check_ms, rows: outcome.result.rows };
          input.rounds.push(measured);
          rmSync(workspace, { recursive: true, force: true });
          console.error(`${name} ×${input.factor} round ${round + 1}/${rounds}: ${Math.round(input.bytes / MB)} MB in ${measured.seconds} s (${measured.cpu_seconds} s CPU), peak RSS ${measured.peak_rss_mb} MB, load ${measured.load_average_1m}, steal ${measured.cpu_steal_percent} %`);
        }
      }
      for (const input of inputs) rmSync(input.file);
      const [base, large] = inputs.map((input) => sizeFigures(input.bytes, input.rounds));
      const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
      const cpuRatio = ratio(large.cpu_seconds, base.cpu_seconds);
      const sizeRatio = ratio(large.input_mb, base.input_mb);
      formats[name] = { base, large, size_ratio: sizeRatio, cpu_time_ratio: cpuRatio, wall_time_ratio: ratio(large.seconds, base.seconds), meets_goal: cpuRatio <= GOAL.time_ratio_at_5x * (sizeRatio / 5) && large.peak_rss_mb <= GOAL.peak_rss_mb };
    }
    return { base_mb: baseMb, rounds, formats, goal: GOAL };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
