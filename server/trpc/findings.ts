import { assessFinding, changeFinding, listFindings, recordFinding, showFinding } from "../services/findings";
import { procedureFor, router } from "./init";

export const findingsRouter = router({
  record: procedureFor(recordFinding),
  update: procedureFor(changeFinding),
  assess: procedureFor(assessFinding),
  list: procedureFor(listFindings),
  get: procedureFor(showFinding),
});
