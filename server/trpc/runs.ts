import { listRuns, showRun } from "../services/runs";
import { procedureFor, router } from "./init";

export const runsRouter = router({
  list: procedureFor(listRuns),
  get: procedureFor(showRun),
});
