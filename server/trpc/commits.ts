import { listCommits, showCommit, showHead } from "../services/commits";
import { procedureFor, router } from "./init";

export const commitsRouter = router({
  list: procedureFor(listCommits),
  get: procedureFor(showCommit),
  head: procedureFor(showHead),
});
