import { listCorpusFiles } from "../services/corpus";
import { procedureFor, router } from "./init";

export const corpusRouter = router({
  files: procedureFor(listCorpusFiles),
});
