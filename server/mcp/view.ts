import { randomBytes } from "node:crypto";
import { agentView, type AgentDetail, type AgentViewReport, type MemoEntry, type ProjectionMemo } from "../../analysis/redaction";
import type { Workspace } from "../store/workspace";
import { redactionContext } from "../store/redaction-context";
import { MCP_TOOL_NAMES } from "./tools";

/** Without a workspace there is no workspace key; tokens are then keyed per process. */
const PROCESS_KEY = randomBytes(32);


/**
 * Projections of observed strings, kept across calls per (workspace key, detail, project root):
 * the same frame and span names come back in call after call, and each costs a dozen regular
 * expressions and often a keyed token. Pure functions of those inputs, so reuse is exact.
 */
const memos = new Map<string, ProjectionMemo>();
const MAX_MEMOS = 16;
const MAX_MEMO_STRINGS = 20_000;
/** Names repeat; long texts (span arguments) rarely do and would only fill memory. */
const MAX_MEMO_STRING_LENGTH = 256;

class BoundedMemo extends Map<string, MemoEntry> {
  override set(text: string, entry: MemoEntry): this {
    if (text.length <= MAX_MEMO_STRING_LENGTH) super.set(text, entry);
    return this;
  }
}

function memoFor(key: Buffer, detail: AgentDetail, projectRoot: string): ProjectionMemo {
  const id = `${key.toString("hex")}\0${detail}\0${projectRoot}`;
  let memo = memos.get(id);
  if (!memo || memo.size >= MAX_MEMO_STRINGS) {
    memo = new BoundedMemo();
    memos.delete(id);
    if (memos.size >= MAX_MEMOS) memos.delete(memos.keys().next().value!);
    memos.set(id, memo);
  }
  return memo;
}

/**
 * The one place results are projected for agents: redacted with tokens keyed by the workspace
 * secret (unless a person chose full detail) and neutralized. Stored evidence is never rewritten.
 */
export function viewForAgent<T>(value: T, options: { ws: Workspace | null; projectRoot: string; detail: AgentDetail }): { value: T; report: AgentViewReport } {
  const key = options.ws?.secret ?? PROCESS_KEY;
  return agentView(value, {
    detail: options.detail,
    toolNames: MCP_TOOL_NAMES,
    redaction: redactionContext(key, options.projectRoot),
    memo: memoFor(key, options.detail, options.projectRoot),
  });
}
