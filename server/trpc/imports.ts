import { importArtifact } from "../services/imports";
import { procedureFor, router } from "./init";

export const importsRouter = router({
  import: procedureFor(importArtifact),
});
