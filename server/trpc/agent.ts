import { agentAccessStatus, listAuditEvents, setAgentAccess, setAgentDetail } from "../services/agent-access";
import { procedureFor, router } from "./init";

/** Agent access settings for the workbench. The token is shown by the CLI only (`emberscope mcp token`). */
export const agentRouter = router({
  status: procedureFor(agentAccessStatus),
  set_access: procedureFor(setAgentAccess),
  set_detail: procedureFor(setAgentDetail),
  audit: procedureFor(listAuditEvents),
});
