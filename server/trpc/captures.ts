import { executeCapturePlan, listCapabilities, listWorkloads, planCapture, runCapture, showWorkload, startCapture } from "../services/captures";
import { cancelOperation, listOperations, showOperation } from "../services/operations";
import { procedureFor, router } from "./init";

export const workloadsRouter = router({
  list: procedureFor(listWorkloads),
  get: procedureFor(showWorkload),
});

export const capturesRouter = router({
  capabilities: procedureFor(listCapabilities),
  plan: procedureFor(planCapture),
  execute: procedureFor(executeCapturePlan),
  run: procedureFor(runCapture),
  start: procedureFor(startCapture),
});

/** Live progress: the workbench polls operations.get (phase, monotonic completed/total). */
export const operationsRouter = router({
  list: procedureFor(listOperations),
  get: procedureFor(showOperation),
  cancel: procedureFor(cancelOperation),
});
