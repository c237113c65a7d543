import { spawn, spawnSync } from "node:child_process";
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { analyzeHotspots, callService, compareRuns, flameTree, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { CLI } from "../helpers/cli";
import { processCpuMs } from "../helpers/server";
import { chromeTraceFile, cpuprofileFile, foldedFile } from "./generators";
import { geckoProfileFile, instrumentsDeepCopyFile, processedProfileFile, safariRecordingFile, stackprofFile } from "./generators";
import { summarize } from "./stats";

export const MB = 1024 * 1024;

interface ImportOutcome {
  seconds: number;
  /** The child's user + system CPU seconds (all its threads), from /proc, sampled every 50 ms: the last ≤ 50 ms may be missing. */
  cpu_seconds: number;
  /** machineCheckMs just before the import. */
  check_ms: number;
  peak_rss_mb: number;
  /** The CLI's `--json` result. */
  result: any;
}

/** Runs `emberscope import` as a child process, sampling its peak RSS (VmHWM) from /proc. */
function importWithPeakRss(projectRoot: string, file: string): Promise<Omit<ImportOutcome, "check_ms">> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [CLI, "import", file, "--json", "--project-root", projectRoot], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let peak = 0;
    let cpuMs = 0;
    const poll = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
        const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
        if (hwm) peak = Math.max(peak, Number(hwm[1]) / 1024);
        cpuMs = Math.max(cpuMs, processCpuMs(child.pid!));
      } catch {
        // the process has exited
      }
    }, 50);
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => {
      clearInterval(poll);
      if (code !== 0) return reject(new Error(`import failed (${code}): ${stdout} ${stderr}`));
      resolve({ seconds: (performance.now() - start) / 1000, cpu_seconds: cpuMs / 1000, peak_rss_mb: Math.round(peak), result: JSON.parse(stdout) });
    });
  });
}

/**
 * Times `runs` calls after a warm-up call (which opens the pinned commit's reader). Each call gets
 * its own `i`, which the caller folds into the question (a limit, a budget) so that it is a new
 * query: the engine keeps the answers of repeated questions per commit, and a cached answer is not
 * what this measures.
 */
async function timed<T>(runs: number, fn: (i: number) => Promise<T>): Promise<ReturnType<typeof summarize>> {
  await fn(runs);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn(i);
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

/**
 * Imports of each format per benchmark run (EMBERSCOPE_BENCH_IMPORT_ROUNDS, default 3): the same import on
 * this machine varies by up to 1.5x from one minute to the next, so one sample says little. Each
 * round imports every format once into a fresh workspace (identical bytes would reuse the last
 * round's generation), so a slow minute falls on all formats alike.
 */
function importRounds(): number {
  const rounds = Number(process.env.EMBERSCOPE_BENCH_IMPORT_ROUNDS ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`EMBERSCOPE_BENCH_IMPORT_ROUNDS must be a whole number of rounds, at least 1 (it is ${process.env.EMBERSCOPE_BENCH_IMPORT_ROUNDS})`);
  return rounds;
}

/** About 2.5 MB of trace-like JSON events, the same in every run. */
const CHECK_TEXT = JSON.stringify(Array.from({ length: 25_000 }, (_, i) => ({ name: `module${i % 17}.function_${i % 97}`, cat: "bench", ph: "X", ts: i * 3, dur: i % 50, pid: 1, tid: i % 8, args: { i } })));

/**
 * A fixed piece of single-thread JavaScript (parsing and writing back CHECK_TEXT five times), timed
 * just before each import: this machine's speed varies by up to 1.5x from minute to minute, and
 * this tells how fast it ran then, apart from any change in the import's code.
 */
function machineCheckMs(): number {
  const start = performance.now();
  for (let k = 0; k < 5; k++) JSON.stringify(JSON.parse(CHECK_TEXT));
  return Math.round(performance.now() - start);
}

/** Writes every file to disk (untimed), so that writing back one import's files does not take the next one's CPU. */
function syncDisks(): void {
  const synced = spawnSync("sync");
  if (synced.error || synced.status !== 0) throw new Error(`sync failed: ${synced.error?.message ?? `exit ${synced.status}`}`);
}

/** One timed import: the previous import's files on disk first (untimed), and the machine check just before. */
export async function measuredImport(projectRoot: string, file: string): Promise<ImportOutcome> {
  syncDisks();
  const check_ms = machineCheckMs();
  return { ...(await importWithPeakRss(projectRoot, file)), check_ms };
}

export interface ImportInput {
  format: string;
  file: string;
  make: (file: string) => Promise<unknown>;
}

/** Writes the input and flushes it to disk before any clock starts, as a user's file is: a file just written would have the import wait for the kernel to write back the generator's 220 MB (0.5-1 s here). */
export async function prepareInput(input: ImportInput): Promise<number> {
  await input.make(input.file);
  const fd = openSync(input.file, "r");
  fsyncSync(fd);
  closeSync(fd);
  return statSync(input.file).size;
}

/**
 * One format's imports: the median round's time (MB/s from it; of an even count, the faster of the
 * middle two), every round's, and the largest peak RSS.
 */
function importFigures(bytes: number, rounds: ImportOutcome[]): Record<string, unknown> {
  const bySpeed = [...rounds].sort((a, b) => a.seconds - b.seconds);
  const median = bySpeed[(bySpeed.length - 1) >> 1];
  const mbPerS = (seconds: number) => Math.round((bytes / MB / seconds) * 10) / 10;
  return {
    input_mb: Math.round(bytes / MB),
    rounds: rounds.length,
    seconds: Math.round(median.seconds * 100) / 100,
    mb_per_s: mbPerS(median.seconds),
    seconds_each: rounds.map((r) => Math.round(r.seconds * 100) / 100),
    machine_check_ms_each: rounds.map((r) => r.check_ms),
    mb_per_s_range: [mbPerS(bySpeed[bySpeed.length - 1].seconds), mbPerS(bySpeed[0].seconds)],
    peak_rss_mb: Math.max(...rounds.map((r) => r.peak_rss_mb)),
    rows: median.result.rows,
    phases_ms: median.result.timings_ms,
  };
}

/** Import throughput and peak RSS per format, and query times over ≥ 10 M samples. */
export async function evidenceBenchmark(): Promise<Record<string, unknown>> {
  const rounds = importRounds();
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-evidence-"));
  try {
    const inputs: ImportInput[] = [
      { format: "chrome-trace", file: path.join(dir, "trace.json"), make: (f: string) => chromeTraceFile(f, 220 * MB) },
      { format: "folded", file: path.join(dir, "stacks.folded"), make: (f: string) => foldedFile(f, 220 * MB) },
      { format: "cpuprofile", file: path.join(dir, "big.cpuprofile"), make: (f: string) => cpuprofileFile(f, 10_000_000, 100_000) },
    ];
    // The Firefox Profiler, stackprof, Instruments and Safari formats (issue 19, item 11), 200 MB
    // each: a few minutes more per round, so only when EMBERSCOPE_BENCH_NEW_FORMATS=1.
    if (process.env.EMBERSCOPE_BENCH_NEW_FORMATS === "1") {
      inputs.push(
        { format: "gecko", file: path.join(dir, "gecko.json"), make: (f: string) => geckoProfileFile(f, 200 * MB) },
        { format: "firefox-processed", file: path.join(dir, "processed.json"), make: (f: string) => processedProfileFile(f, 200 * MB) },
        { format: "stackprof", file: path.join(dir, "stackprof.json"), make: (f: string) => stackprofFile(f, 200 * MB) },
        { format: "instruments-deep-copy", file: path.join(dir, "deep-copy.txt"), make: (f: string) => instrumentsDeepCopyFile(f, 200 * MB) },
        { format: "safari-timeline", file: path.join(dir, "recording.json"), make: (f: string) => safariRecordingFile(f, 200 * MB) },
      );
    }
    // Per input: its size, and each round's import of it.
    const measured: { input: ImportInput; bytes: number; outcomes: ImportOutcome[] }[] = [];
    for (const input of inputs) measured.push({ input, bytes: await prepareInput(input), outcomes: [] });
    // The queries run over the last round's workspace, which holds every format's run.
    let workspace = "";
    const runs: Record<string, string> = {};
    for (let round = 0; round < rounds; round++) {
      workspace = path.join(dir, `workspace-${round}`);
      mkdirSync(workspace);
      initWorkspace(workspace).close();
      for (const { input, outcomes } of measured) {
        const outcome = await measuredImport(workspace, input.file);
        outcomes.push(outcome);
        runs[input.format] = outcome.result.run_id;
      }
      if (round < rounds - 1) rmSync(workspace, { recursive: true, force: true });
    }
    const imports: Record<string, unknown> = {};
    for (const { input, bytes, outcomes } of measured) {
      imports[input.format] = importFigures(bytes, outcomes);
      rmSync(input.file);
    }
    // The 1 GB inputs of the RSS goal take minutes: measured once each, when EMBERSCOPE_BENCH_1GB=1.
    if (process.env.EMBERSCOPE_BENCH_1GB === "1") {
      const large: ImportInput[] = [
        { format: "chrome-trace-1gb", file: path.join(dir, "trace-1g.json"), make: (f: string) => chromeTraceFile(f, 1024 * MB) },
        { format: "cpuprofile-1gb", file: path.join(dir, "big-1g.cpuprofile"), make: (f: string) => cpuprofileFile(f, 90_000_000, 100_000) },
      ];
      for (const input of large) {
        const bytes = await prepareInput(input);
        imports[input.format] = importFigures(bytes, [await measuredImport(workspace, input.file)]);
        rmSync(input.file);
      }
    }
    const ctx: ServiceContext = { locator: { cwd: workspace, projectRoot: workspace }, actor: "test" };
    const big = runs.cpuprofile;
    const queries = {
      hotspots_10m_samples_ms: await timed(5, (i) => callService(analyzeHotspots, ctx, { run_id: big, metric: "samples", limit: 20 + i })),
      flame_tree_10m_samples_ms: await timed(3, (i) => callService(flameTree, ctx, { run_id: big, metric: "samples", budget: 20_000 + i })),
      compare_10m_vs_folded_ms: await timed(3, (i) => callService(compareRuns, ctx, { base_run_id: runs.folded, candidate_run_id: big, metric: "samples", collection: "all", limit: 50 + i })),
    };
    return { imports, queries, goals: { import_mb_per_s: 50, hotspots_10m_ms: 500, peak_rss_mb_on_1gb: 2048 } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
