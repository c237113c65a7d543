import { listRuns, renameRun, listRunFacets, showRun } from "../services/runs";
import { procedureFor, router } from "./init";

export const runsRouter = router({
  list: procedureFor(listRuns),
  facets: procedureFor(listRunFacets),
  get: procedureFor(showRun),
  update: procedureFor(renameRun),
});
