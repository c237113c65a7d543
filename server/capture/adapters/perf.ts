import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { CaptureAdapter } from "./types";
import { isNodeExecutable, probeCommand, whichExecutable } from "./tools";

/** Linux perf: `perf record -g`, then `perf script` into text the perf-script importer reads. */
export const perfAdapter: CaptureAdapter = {
  name: "perf",
  summary: "Sampled call stacks of any executable (perf record -g, then perf script).",
  options: { frequency: { default: 999, description: "Samples per second." }, event: { default: "cpu-clock", description: "perf event to sample." } },
  probe: async () => {
    const version = await probeCommand("perf", ["--version"]);
    if (!version || version.code !== 0) return { adapter: "perf", available: false, version: null, reason: "perf is not installed (apt-get install linux-perf)." };
    // perf may be installed yet refused by the kernel (paranoia level, containers): try a tiny recording.
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-perf-probe-"));
    try {
      const trial = await probeCommand("perf", ["record", "-q", "-e", "cpu-clock", "-o", path.join(dir, "probe.data"), "--", "true"], 10_000);
      if (!trial || trial.code !== 0) return { adapter: "perf", available: false, version: version.output.trim(), reason: `perf cannot record here: ${(trial?.output ?? "").trim().split("\n")[0] || "permission denied"}` };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return { adapter: "perf", available: true, version: version.output.trim(), reason: null };
  },
  unsuitableFor: () => null,
  repetitions: () => ({ runs: 1, warmups: 0 }),
  command: (base, outDir, options) => {
    const perf = whichExecutable("perf", base.env.PATH ?? process.env.PATH ?? "", "/") ?? "perf";
    // Node's JIT frames are only named for perf when it writes /tmp/perf-<pid>.map.
    const workload = isNodeExecutable(base.argv[0]) || base.argv[0] === "node" ? [base.argv[0], "--perf-basic-prof", ...base.argv.slice(1)] : base.argv;
    return { argv: [perf, "record", "-g", "-q", "-e", String(options.event), "-F", String(options.frequency), "-o", path.join(outDir, "perf.data"), "--", ...workload], env: base.env };
  },
  collect: async (outDir) => {
    const data = path.join(outDir, "perf.data");
    if (!existsSync(data)) return [];
    const script = path.join(outDir, "perf.script.txt");
    // +pid: each sample says its process (`comm pid/tid`), so a process's threads group together.
    const out = openSync(script, "w");
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn("perf", ["script", "-F", "+pid", "-i", data], { stdio: ["ignore", out, "ignore"] });
        child.on("error", () => resolve(null));
        child.on("close", (c) => resolve(c));
      });
      if (code !== 0) return [];
    } finally {
      closeSync(out);
    }
    return [{ file: script, kind: "perf-script", mediaType: "text/plain", format: "perf-script" as const }];
  },
};
