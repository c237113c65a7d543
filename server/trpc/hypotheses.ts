import { changeHypothesis, recordHypothesis } from "../services/hypotheses";
import { procedureFor, router } from "./init";

export const hypothesesRouter = router({
  record: procedureFor(recordHypothesis),
  update: procedureFor(changeHypothesis),
});
