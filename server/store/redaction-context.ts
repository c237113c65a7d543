import { createHmac } from "node:crypto";
import os from "node:os";
import type { RedactionContext, TokenKind } from "../../analysis/redaction";

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

/** The local user and machine names redaction replaces wherever they stand as words (exports use them too). */
export const LOCAL_NAMES = localNames();
const NAMES = LOCAL_NAMES;

/**
 * What redaction needs on this machine: the local user and host names and the token function keyed
 * by the workspace secret, so a value maps to the same token in every answer of one workspace (the
 * MCP boundary's views and a failed capture's stderr alike).
 */
export function redactionContext(key: Buffer, projectRoot: string): RedactionContext {
  const tokenFor = (kind: TokenKind, text: string) => createHmac("sha256", key).update(`emberscope-redact\0${kind}\0${text}`).digest("hex");
  return { projectRoot, userNames: NAMES.users, hostNames: NAMES.hosts, tokenFor };
}
