import { changeInvestigation, createInvestigation, investigationActivity, listInvestigations, showInvestigation } from "../services/investigations";
import { exportInvestigation, importInvestigation } from "../services/notebook-format";
import { procedureFor, router } from "./init";

/** Investigations as notebooks (procedure paths = service names, e.g. investigations.get). */
export const investigationsRouter = router({
  create: procedureFor(createInvestigation),
  list: procedureFor(listInvestigations),
  get: procedureFor(showInvestigation),
  update: procedureFor(changeInvestigation),
  activity: procedureFor(investigationActivity),
  export: procedureFor(exportInvestigation),
  import: procedureFor(importInvestigation),
});
