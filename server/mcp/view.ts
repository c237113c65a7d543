import { createHmac, randomBytes } from "node:crypto";
import os from "node:os";
import { agentView, type AgentDetail, type AgentViewReport, type TokenKind } from "../../analysis/redaction";
import type { Workspace } from "../store/workspace";
import { MCP_TOOL_NAMES } from "./tools";

/** Without a workspace there is no workspace key; tokens are then keyed per process. */
const PROCESS_KEY = randomBytes(32);

function localNames(): { users: string[]; hosts: string[] } {
  const users = new Set<string>();
  try {
    users.add(os.userInfo().username);
  } catch {
    // no passwd entry for this uid
  }
  for (const v of [process.env.USER, process.env.LOGNAME, process.env.SUDO_USER]) if (v) users.add(v);
  return { users: [...users], hosts: [os.hostname()] };
}

const NAMES = localNames();

/**
 * The one place results are projected for agents: redacted with tokens keyed by the workspace
 * secret (unless a person chose full detail) and neutralized. Stored evidence is never rewritten.
 */
export function viewForAgent<T>(value: T, options: { ws: Workspace | null; projectRoot: string; detail: AgentDetail }): { value: T; report: AgentViewReport } {
  const key = options.ws?.secret ?? PROCESS_KEY;
  const tokenFor = (kind: TokenKind, text: string) => createHmac("sha256", key).update(`emberscope-redact\0${kind}\0${text}`).digest("hex");
  return agentView(value, {
    detail: options.detail,
    toolNames: MCP_TOOL_NAMES,
    redaction: { projectRoot: options.projectRoot, userNames: NAMES.users, hostNames: NAMES.hosts, tokenFor },
  });
}
