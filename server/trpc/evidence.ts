import { analyzeHotspots, compareRuns, flameTimeline, flameTree, frameCallees, frameCallers, stackExamples, summarizeRun, traceWindow } from "../services/evidence";
import { exportSpeedscope } from "../services/run-downloads";
import { traceFlows } from "../services/trace-flows";
import { procedureFor, router } from "./init";

export const evidenceRouter = router({
  summary: procedureFor(summarizeRun),
  hotspots: procedureFor(analyzeHotspots),
  callers: procedureFor(frameCallers),
  callees: procedureFor(frameCallees),
  stack_examples: procedureFor(stackExamples),
  flame_tree: procedureFor(flameTree),
  flame_timeline: procedureFor(flameTimeline),
  trace_window: procedureFor(traceWindow),
  trace_flows: procedureFor(traceFlows),
  compare: procedureFor(compareRuns),
  export_speedscope: procedureFor(exportSpeedscope),
});
