import { collectGarbage, purgeGarbage, restoreGarbage } from "../services/gc";
import { validateWorkspace } from "../services/validate";
import { initializeWorkspace, workspaceStatus } from "../services/workspace";
import { procedureFor, router } from "./init";

export const workspaceRouter = router({
  init: procedureFor(initializeWorkspace),
  status: procedureFor(workspaceStatus),
  validate: procedureFor(validateWorkspace),
  gc: procedureFor(collectGarbage),
  gcRestore: procedureFor(restoreGarbage),
  gcPurge: procedureFor(purgeGarbage),
});
