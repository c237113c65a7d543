import { listExperiments, planExperiment, resumeExperiment, runExperiment, showExperiment, summarizeExperiment } from "../services/experiments";
import { procedureFor, router } from "./init";

export const experimentsRouter = router({
  plan: procedureFor(planExperiment),
  run: procedureFor(runExperiment),
  resume: procedureFor(resumeExperiment),
  get: procedureFor(showExperiment),
  summary: procedureFor(summarizeExperiment),
  list: procedureFor(listExperiments),
});
