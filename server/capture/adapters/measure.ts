import { promises as fsp } from "node:fs";
import path from "node:path";
import type { CaptureAdapter } from "./types";
import { probeCommand } from "./tools";

const TIME = "/usr/bin/time";

export interface MeasuredRun {
  index: number;
  is_warmup: boolean;
  exit_code: number | null;
  wall_s: number;
  user_s: number;
  sys_s: number;
  max_rss_kb: number;
}

/** Parses GNU time's `-f "%e %U %S %M"` line (the last line: the program may print above it). */
export function parseTimeOutput(text: string): { wall_s: number; user_s: number; sys_s: number; max_rss_kb: number } | null {
  const line = text.trim().split("\n").pop() ?? "";
  const parts = line.trim().split(/\s+/).map(Number);
  if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n))) return null;
  const [wall_s, user_s, sys_s, max_rss_kb] = parts;
  return { wall_s, user_s, sys_s, max_rss_kb };
}

/**
 * Repeated runs with warm-ups, each timed by GNU time: wall (by the runner's monotonic clock), user,
 * sys (GNU time's, in hundredths of a second) and max RSS per run become measurements (warm-ups are
 * kept, flagged is_warmup).
 */
export const measureAdapter: CaptureAdapter = {
  name: "measure",
  summary: "Repeated runs with warm-ups: wall, user, sys time and max RSS per run.",
  options: {
    repeat: { default: 5, description: "Measured runs." },
    warmup: { default: 1, description: "Warm-up runs before them." },
  },
  probe: async () => {
    const found = await probeCommand(TIME, ["-f", "%e", "true"]);
    if (!found || found.code !== 0) return { adapter: "measure", available: false, version: null, reason: "GNU time (/usr/bin/time) is not installed (apt-get install time)." };
    return { adapter: "measure", available: true, version: "GNU time", reason: null };
  },
  unsuitableFor: () => null,
  repetitions: (options) => {
    const warmups = Number(options.warmup);
    return { runs: warmups + Number(options.repeat), warmups };
  },
  command: (base, outDir, _options, index) => ({
    argv: [TIME, "-f", "%e %U %S %M", "-o", path.join(outDir, `time-${index}.txt`), "--", ...base.argv],
    env: base.env,
  }),
  collect: async (outDir, results, options) => {
    const warmups = Number(options.warmup);
    const runs: MeasuredRun[] = [];
    for (let index = 0; index < results.length; index++) {
      const text = await fsp.readFile(path.join(outDir, `time-${index}.txt`), "utf8").catch(() => "");
      const parsed = parseTimeOutput(text);
      // GNU time reports wall time in hundredths of a second (steps of ~12 % at 85 ms, too coarse for
      // an experiment's paired ratios): the runner's monotonic clock from spawn to exit is used instead
      // (GNU time's own start, about a millisecond and the same for every run, included).
      const elapsedNs = results[index].elapsedNs;
      if (parsed) runs.push({ index, is_warmup: index < warmups, exit_code: results[index].exitCode, ...parsed, ...(elapsedNs !== null ? { wall_s: elapsedNs / 1e9 } : {}) });
    }
    const file = path.join(outDir, "measure.json");
    await fsp.writeFile(file, JSON.stringify({ runs }, null, 2));
    return [
      {
        file,
        kind: "measurements",
        mediaType: "application/json",
        extractor: {
          id: "measure",
          version: "1",
          produce: async (builder) => {
            for (const run of runs) {
              const common = { trialId: `run-${run.index}`, isWarmup: run.is_warmup, aggregation: "sample", dimensions: { run: run.index, exit_code: run.exit_code } };
              builder.measurement({ name: "wall_ns", value: Math.round(run.wall_s * 1e9), unit: "ns", ...common });
              builder.measurement({ name: "user_ns", value: Math.round(run.user_s * 1e9), unit: "ns", ...common });
              builder.measurement({ name: "sys_ns", value: Math.round(run.sys_s * 1e9), unit: "ns", ...common });
              builder.measurement({ name: "max_rss_bytes", value: run.max_rss_kb * 1024, unit: "bytes", ...common });
            }
          },
        },
      },
    ];
  },
};
