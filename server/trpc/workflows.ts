import { compileRunWorkflow, getCriticalPath, getWorkflow, listToolContracts, listWorkflows, reviewTool } from "../services/workflows";
import { approveWorkflowTool, benchmarkWorkflow, codegenWorkflow, getWorkflowRun, listWorkflowRuns, runWorkflow, workflowPolicy } from "../services/workflow-runs";
import { exposeWorkflow, listExposedWorkflows } from "../services/workflow-exposures";
import { procedureFor, router } from "./init";

export const workflowsRouter = router({
  compile: procedureFor(compileRunWorkflow),
  get: procedureFor(getWorkflow),
  list: procedureFor(listWorkflows),
  run: procedureFor(runWorkflow),
  benchmark: procedureFor(benchmarkWorkflow),
  run_get: procedureFor(getWorkflowRun),
  runs: procedureFor(listWorkflowRuns),
  approve: procedureFor(approveWorkflowTool),
  codegen: procedureFor(codegenWorkflow),
  policy: procedureFor(workflowPolicy),
  expose: procedureFor(exposeWorkflow),
  exposed: procedureFor(listExposedWorkflows),
});

export const toolsRouter = router({
  list: procedureFor(listToolContracts),
  review: procedureFor(reviewTool),
});

export const criticalPathRouter = router({
  get: procedureFor(getCriticalPath),
});
