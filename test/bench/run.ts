// `npm run bench`: runs each benchmark, prints its figures and writes them to bench-results/<name>.json.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { captureBenchmark } from "./capture.bench";
import { criticalPathBenchmark } from "./critical-path.bench";
import { dagViewBenchmark } from "./dag-view.bench";
import { dailyBenchmark } from "./daily.bench";
import { evidenceBenchmark } from "./evidence.bench";
import { experimentsBenchmark } from "./experiments.bench";
import { exportBenchmark } from "./export.bench";
import { foundationBenchmark } from "./foundation.bench";
import { importScalingBenchmark } from "./import-scaling.bench";
import { mcpBenchmark } from "./mcp.bench";
import { mcpAbBenchmark } from "./mcp-ab.bench";
import { notebookBenchmark } from "./notebook.bench";
import { redactionBenchmark } from "./redaction.bench";
import { runsLibraryBenchmark } from "./runs-library.bench";
import { sqlConsoleBenchmark } from "./sql-console.bench";
import { cpuTicks, stealPercent } from "./stats";
import { timeOrderBenchmark } from "./time-order.bench";
import { transformsBenchmark } from "./transforms.bench";
import { tracksBenchmark } from "./tracks.bench";
import { uiBenchmark } from "./ui.bench";
import { uiDataBenchmark } from "./ui-data.bench";
import { workflowRuntimeBenchmark } from "./workflow-runtime.bench";

const BENCHMARKS: Record<string, () => Promise<Record<string, unknown>>> = {
  foundation: foundationBenchmark,
  evidence: evidenceBenchmark,
  ui: uiBenchmark,
  "ui-data": uiDataBenchmark,
  "time-order": timeOrderBenchmark,
  capture: captureBenchmark,
  mcp: mcpBenchmark,
  "mcp-ab": mcpAbBenchmark,
  redaction: redactionBenchmark,
  notebook: notebookBenchmark,
  "critical-path": criticalPathBenchmark,
  "dag-view": dagViewBenchmark,
  "runs-library": runsLibraryBenchmark,
  tracks: tracksBenchmark,
  "import-scaling": importScalingBenchmark,
  experiments: experimentsBenchmark,
  "workflow-runtime": workflowRuntimeBenchmark,
  export: exportBenchmark,
  transforms: transformsBenchmark,
  "sql-console": sqlConsoleBenchmark,
  daily: dailyBenchmark,
};

const only = process.argv.slice(2);
const out = path.resolve(import.meta.dirname, "..", "..", "bench-results");
mkdirSync(out, { recursive: true });
for (const [name, bench] of Object.entries(BENCHMARKS)) {
  if (only.length && !only.includes(name)) continue;
  const at = new Date().toISOString();
  const ticks = cpuTicks();
  const result = await bench();
  // How much of the machine other guests of its host took meanwhile: figures taken under steal are slower than the code.
  const machine = { cores: (await import("node:os")).cpus().length, node: process.version, cpu_steal_percent: stealPercent(ticks, cpuTicks()) };
  const figures = { benchmark: name, at, machine, ...result };
  writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
  console.log(JSON.stringify(figures, null, 2));
}
