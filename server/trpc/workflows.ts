import { compileRunWorkflow, getCriticalPath, getWorkflow, listToolContracts, listWorkflows, reviewTool } from "../services/workflows";
import { procedureFor, router } from "./init";

export const workflowsRouter = router({
  compile: procedureFor(compileRunWorkflow),
  get: procedureFor(getWorkflow),
  list: procedureFor(listWorkflows),
});

export const toolsRouter = router({
  list: procedureFor(listToolContracts),
  review: procedureFor(reviewTool),
});

export const criticalPathRouter = router({
  get: procedureFor(getCriticalPath),
});
