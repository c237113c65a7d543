import { promises as fsp } from "node:fs";
import path from "node:path";
import type { CaptureAdapter, CollectedArtifact, Command } from "./types";
import { isNodeExecutable } from "./tools";
import type { FormatId } from "../../../analysis/formats/types";

/** Inserts Node flags right after the executable: `node <flags> script args…`. */
function withNodeFlags(base: Command, flags: string[]): Command {
  return { argv: [base.argv[0], ...flags, ...base.argv.slice(1)], env: base.env };
}

async function filesEndingWith(dir: string, suffix: string): Promise<string[]> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith(suffix)).sort().map((n) => path.join(dir, n));
}

function nodeAdapter(spec: {
  name: string;
  summary: string;
  options: CaptureAdapter["options"];
  flags: (outDir: string, options: Record<string, string | number | boolean>) => string[];
  suffix: string;
  format: FormatId;
  kind: string;
}): CaptureAdapter {
  return {
    name: spec.name,
    summary: spec.summary,
    options: spec.options,
    probe: async () => ({ adapter: spec.name, available: true, version: `node ${process.version}`, reason: null }),
    unsuitableFor: (executable) => (isNodeExecutable(executable) ? null : `${spec.name} runs Node workloads; this one starts ${path.basename(executable)}.`),
    repetitions: () => ({ runs: 1, warmups: 0 }),
    command: (base, outDir, options) => withNodeFlags(base, spec.flags(outDir, options)),
    collect: async (outDir) => {
      const files = await filesEndingWith(outDir, spec.suffix);
      return files.map((file): CollectedArtifact => ({ file, kind: spec.kind, mediaType: "application/json", format: spec.format }));
    },
  };
}

export const nodeCpuProfileAdapter = nodeAdapter({
  name: "node-cpuprofile",
  summary: "V8 CPU profile of a Node workload (node --cpu-prof).",
  options: { interval_us: { default: 1000, description: "Sampling interval in microseconds." } },
  flags: (outDir, options) => ["--cpu-prof", `--cpu-prof-dir=${outDir}`, `--cpu-prof-interval=${Number(options.interval_us)}`],
  suffix: ".cpuprofile",
  format: "cpuprofile",
  kind: "cpuprofile",
});

export const nodeHeapProfileAdapter = nodeAdapter({
  name: "node-heapprofile",
  summary: "V8 sampling heap profile of a Node workload (node --heap-prof).",
  options: { interval_bytes: { default: 512 * 1024, description: "Average bytes between allocation samples." } },
  flags: (outDir, options) => ["--heap-prof", `--heap-prof-dir=${outDir}`, `--heap-prof-interval=${Number(options.interval_bytes)}`],
  suffix: ".heapprofile",
  format: "heapprofile",
  kind: "heapprofile",
});

export const nodeTraceEventsAdapter = nodeAdapter({
  name: "node-trace-events",
  summary: "Chrome trace events of a Node workload (node --trace-event-categories).",
  options: { categories: { default: "v8,node,node.async_hooks", description: "Comma-separated trace categories." } },
  flags: (outDir, options) => [`--trace-event-categories=${String(options.categories)}`, `--trace-event-file-pattern=${path.join(outDir, "trace-${pid}-${rotation}.log")}`],
  suffix: ".log",
  format: "chrome-trace",
  kind: "trace",
});
