/**
 * Claude Code session logs (~/.claude/projects/<project>/<session>.jsonl): one JSON object per
 * line, read line by line. `assistant` lines carry `tool_use` blocks (id, name, input); `user`
 * lines carry `tool_result` blocks (tool_use_id, content, is_error); every line has an ISO
 * `timestamp`, a `uuid` and its `parentUuid`. Other lines (summary, system, snapshots) are skipped.
 *
 * Each tool_use is one span (tool-calls.ts): name = the tool, category "tool", args with call_id
 * (the tool_use id), side_effect unknown (the log does not say), timing approximate (from message
 * timestamps: issued → result), arguments (the input as JSON text), result and the line's uuid.
 * Blocks of one message (message.id; Claude Code writes each block on its own line) are one
 * batch: parallel calls. is_error → status error. Subagents: lines with `isSidechain: true` are
 * a subagent's (one track each, told apart by `agentId` or by their parentUuid chain); its calls
 * are children (parent span and `child` edge) of the Task call that was open when the subagent
 * began — the earliest one not yet given a subagent. `follows_from` edges link each call to the
 * calls of its agent whose results came in since that agent's previous batch.
 */
import { jsonLines } from "../io/json-lines";
import { EvidenceParseError } from "./errors";
import { ToolCallLog, writeToolCalls } from "./tool-calls";
import type { FormatImporter } from "./types";

const FORMAT = "claude-code";
/** The tools that start a subagent (Task; Agent in later versions). */
const SUBAGENT_TOOLS = new Set(["Task", "Agent"]);
const MAIN = "main";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

export function isoMs(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

export const claudeCodeImporter: FormatImporter = {
  id: "claude-code",
  title: "Claude Code session log (JSONL)",
  extensions: ["jsonl"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{")) return 0;
    const first = text.slice(0, text.indexOf("\n") < 0 ? text.length : text.indexOf("\n"));
    if (/"parentUuid"\s*:/.test(text) && /"sessionId"\s*:/.test(text) && /"type"\s*:\s*"(user|assistant)"/.test(text)) return 0.95;
    if (/^\{\s*"type"\s*:\s*"summary"/.test(first) && /"leafUuid"\s*:/.test(first)) return 0.9;
    return 0;
  },

  async parse({ source, builder, limits }) {
    // Lines are only read, never revisited: each call's text goes out once answered.
    const log = new ToolCallLog(builder, { draftAnswered: true });
    let sessionId: string | null = null;
    let messages = 0;
    /** Per sidechain line's uuid, the subagent the line belongs to (sidechains are told apart by their chains). */
    const agentOfUuid = new Map<string, string>();
    const agentOfId = new Map<string, string>();
    const parentOfAgent = new Map<string, string | null>();
    /** Task calls of the main agent waiting for their result, in the order issued, and those given a subagent. */
    const openTasks: string[] = [];
    const tasksTaken = new Set<string>();
    let subagents = 0;

    const newSubagent = (key: string | null): string => {
      const name = key ? `subagent ${key}` : `subagent ${++subagents}`;
      const task = openTasks.find((id) => !tasksTaken.has(id)) ?? null;
      if (task) tasksTaken.add(task);
      else builder.limit("CLAUDE_SUBAGENT_PARENT_UNKNOWN", "Some subagents began while no Task call was open; their calls are shown without a parent.");
      parentOfAgent.set(name, task);
      return name;
    };
    const agentOf = (line: Record<string, unknown>): string => {
      if (line.isSidechain !== true) return MAIN;
      const agentId = text(line.agentId);
      if (agentId) {
        let agent = agentOfId.get(agentId);
        if (!agent) agentOfId.set(agentId, (agent = newSubagent(agentId)));
        return agent;
      }
      const parent = text(line.parentUuid);
      const known = parent ? agentOfUuid.get(parent) : undefined;
      return known && known !== MAIN ? known : newSubagent(null);
    };

    for await (const { value, line, offset } of jsonLines(FORMAT, source.chunks(), limits.maxLineLength)) {
      if (!isRecord(value)) throw new EvidenceParseError(FORMAT, "expected a JSON object on each line", { line, offset });
      if (value.type !== "user" && value.type !== "assistant") {
        if (typeof value.type !== "string") throw new EvidenceParseError(FORMAT, "a line has no type: not a Claude Code session log", { line, offset });
        continue;
      }
      messages++;
      sessionId ??= text(value.sessionId);
      const agent = agentOf(value);
      const uuid = text(value.uuid);
      // Main-agent lines are not kept: a sidechain line whose parent is one, or unknown, starts a subagent alike.
      if (uuid && agent !== MAIN) agentOfUuid.set(uuid, agent);
      const message = value.message;
      if (!isRecord(message) || !Array.isArray(message.content)) continue;
      const at = log.messageTime(isoMs(value.timestamp));
      const batch = text(message.id) ?? uuid ?? `line ${line}`;
      for (const block of message.content) {
        if (!isRecord(block)) continue;
        if (block.type === "tool_use" && value.type === "assistant") {
          const id = text(block.id);
          const tool = text(block.name) ?? "(unnamed tool)";
          log.call({ id, tool, arguments: block.input ?? null, at, agent, batch, parentId: parentOfAgent.get(agent) ?? null, extra: { uuid: uuid ?? undefined } });
          if (agent === MAIN && id && SUBAGENT_TOOLS.has(tool)) openTasks.push(id);
        } else if (block.type === "tool_result") {
          const id = text(block.tool_use_id);
          log.result({ id, result: block.content ?? null, isError: block.is_error === true, at, agent, extra: { result_uuid: uuid ?? undefined } });
          const task = id ? openTasks.indexOf(id) : -1;
          if (task >= 0) openTasks.splice(task, 1);
        }
      }
      if (messages % 4096 === 0) await builder.checkpoint();
    }
    if (messages === 0) throw new EvidenceParseError(FORMAT, "no user or assistant messages in the input", { offset: 0, line: 1 });
    await writeToolCalls(builder, log.finish(), { id: sessionId, name: "Claude Code session" });
  },
};
