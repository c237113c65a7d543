import { listArtifacts, showArtifact } from "../services/artifacts";
import { procedureFor, router } from "./init";

export const artifactsRouter = router({
  list: procedureFor(listArtifacts),
  get: procedureFor(showArtifact),
});
