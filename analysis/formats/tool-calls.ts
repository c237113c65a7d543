/**
 * Tool calls as evidence, shared by every agent-trace importer (trace v1, Claude Code, Codex,
 * Hugging Face session traces, OpenAI-style chats). One span per call: name = the tool, category
 * "tool" (a result whose call is not in the file: "tool_result", name "(unknown tool)"), status
 * ok / error / unfinished, one track per agent (the main agent, each subagent). Its args (bounded
 * JSON) hold `call_id`, `side_effect` (read | write | unknown), `timing` (recorded | approximate |
 * logical), `agent`, `arguments` (JSON text), `result` (text), `error`, and the source's own keys.
 * `parent_id` → the span's parent and a `child` edge; `after` → `follows_from` edges (earlier → later).
 *
 * ToolCallLog reads a conversation message by message: calls issued by one message are one batch
 * (parallel calls: they start together and overlap); a call follows from the calls of its agent
 * whose results arrived since that agent's previous batch (the results the model had seen when it
 * issued the call; earlier ones are reached through them).
 */
import type { EvidenceBuilder } from "../evidence/builder";
import type { SideEffect, Timing, ToolCallStatus } from "../workflow/trace-v1";
import { spanDepths } from "./span-tree";

/** Longest argument and result texts kept in a span's args (the rest is cut, and the cut flagged). */
export const MAX_ARGUMENTS_CHARS = 8192;
export const MAX_RESULT_CHARS = 4096;
const MAX_ERROR_CHARS = 1024;
const MAX_EXTRA_CHARS = 1024;

export const SIDE_EFFECT_UNKNOWN_MESSAGE = "The source does not say which tools only read: those calls' side_effect is unknown until a person reviews the tool.";

export interface ToolCall {
  id: string;
  tool: string;
  category: "tool" | "tool_result";
  /** JSON text of the arguments (null: none). */
  argumentsText: string | null;
  /** The result as text (null: none). */
  resultText: string | null;
  status: ToolCallStatus;
  error: string | null;
  sideEffect: SideEffect;
  startMs: number;
  endMs: number;
  timing: Timing;
  agent: string;
  parentId: string | null;
  after: string[];
  /** Keys of the source kept in args (message ids, exit codes, …), small values only. */
  extra: Record<string, unknown>;
  /**
   * Set when the span's text (name, category, status, args) already went to the builder as this
   * draft (ToolCallLog's draftAnswered): its texts here are then empty, and it is only placed.
   */
  draftId?: number;
}

/** Names the session's tracks: process = the session, thread = the agent. */
export interface ToolSession {
  id: string | null;
  name: string;
}

/** JSON text of a value given as JSON text or as a value; text that is no JSON stays as it is. */
export function jsonText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") {
    try {
      // Compact and canonical as JSON.stringify writes it: equal arguments, equal text.
      return JSON.stringify(JSON.parse(value));
    } catch {
      return value;
    }
  }
  return JSON.stringify(value);
}

/** A result as text: strings as they are, text blocks ([{type: "text", text}]) joined, other values as JSON. */
export function resultText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((b) => typeof b === "object" && b !== null)) {
    const parts = value.map((block: Record<string, unknown>) => (typeof block.text === "string" ? block.text : typeof block.type === "string" ? `[${block.type}]` : JSON.stringify(block)));
    return parts.join("\n");
  }
  return JSON.stringify(value);
}

function cut(builder: EvidenceBuilder, text: string | null, max: number, what: "arguments" | "result" | "error"): { text: string | null; cut: boolean } {
  if (text === null || text.length <= max) return { text, cut: false };
  builder.limit(`TOOL_${what.toUpperCase()}_TRUNCATED`, `Some tool calls' ${what} were longer than ${max} characters; they were cut (the span's args say ${what}_truncated).`);
  return { text: text.slice(0, max), cut: true };
}

function spanArgs(builder: EvidenceBuilder, call: ToolCall): Record<string, unknown> {
  const args: Record<string, unknown> = { call_id: call.id, side_effect: call.sideEffect, timing: call.timing, agent: call.agent };
  const argumentsText = cut(builder, call.argumentsText, MAX_ARGUMENTS_CHARS, "arguments");
  const result = cut(builder, call.resultText, MAX_RESULT_CHARS, "result");
  const error = cut(builder, call.error, MAX_ERROR_CHARS, "error");
  if (argumentsText.text !== null) args.arguments = argumentsText.text;
  if (argumentsText.cut) args.arguments_truncated = true;
  if (result.text !== null) args.result = result.text;
  if (result.cut) args.result_truncated = true;
  if (error.text !== null) args.error = error.text;
  for (const [key, value] of Object.entries(call.extra)) {
    if (value === undefined || key in args) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    args[key] = text.length > MAX_EXTRA_CHARS ? `${text.slice(0, MAX_EXTRA_CHARS)}…` : value;
  }
  return args;
}

/** Writes tool calls as spans and edges (see the file comment); times are ms on one clock. */
export async function writeToolCalls(builder: EvidenceBuilder, calls: ToolCall[], session: ToolSession): Promise<void> {
  if (calls.length === 0) return;
  let origin = Infinity;
  for (const call of calls) origin = Math.min(origin, call.startMs);
  // Epoch milliseconds (after 1973): the origin is a wall-clock time.
  if (origin > 1e11 && calls.every((c) => c.timing !== "logical")) builder.metadata.time_origin_unix_nano = (BigInt(Math.round(origin)) * 1_000_000n).toString();

  const trackOf = new Int32Array(calls.length);
  const tracks = new Map<string, number>();
  calls.forEach((call, i) => {
    let track = tracks.get(call.agent);
    if (track === undefined) {
      track = builder.track({ processId: session.id, processName: session.name, threadId: call.agent, threadName: call.agent, kind: "agent" });
      tracks.set(call.agent, track);
    }
    trackOf[i] = track;
  });

  const indexById = new Map<string, number>();
  const spanIds = calls.map((call, i) => {
    if (indexById.has(call.id)) builder.limit("TOOL_CALL_DUPLICATE_ID", "Some tool-call ids appeared more than once; parents and links refer to the first.");
    else indexById.set(call.id, i);
    return builder.allocateSpanId();
  });
  const parentOf = new Int32Array(calls.length).fill(-1);
  calls.forEach((call, i) => {
    if (call.parentId === null) return;
    const parent = indexById.get(call.parentId);
    if (parent === undefined) builder.limit("TOOL_PARENT_MISSING", "Some tool calls name a parent call that is not in the file; they are shown as roots.");
    else if (parent !== i) parentOf[i] = parent;
  });
  const depths = spanDepths(trackOf, parentOf, () => builder.limit("TOOL_PARENT_CYCLE", "Some tool calls were (indirectly) their own parents; the cycle was cut there."));

  const drafting = calls.some((call, i) => {
    if (call.draftId !== undefined && call.draftId !== i) throw new Error(`tool call ${i} was drafted as ${call.draftId}`);
    return call.draftId !== undefined;
  });
  let approximate = 0;
  let logical = 0;
  let unknown = 0;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i];
    if (call.timing === "approximate") approximate++;
    if (call.timing === "logical") logical++;
    if (call.sideEffect === "unknown" && call.category === "tool") unknown++;
    const parent = parentOf[i];
    const place = {
      spanId: spanIds[i],
      trackId: trackOf[i],
      parentSpanId: parent >= 0 ? spanIds[parent] : null,
      startNs: Math.round((call.startMs - origin) * 1e6),
      durNs: Math.round((call.endMs - call.startMs) * 1e6),
      depth: depths[i],
    };
    // Where some calls were drafted, the rest are drafted here (a call's draft id is its place in
    // the list), so that every span is placed in the list's order.
    if (drafting && call.draftId === undefined) builder.spanDraft(i, { name: call.tool, category: call.category, status: call.status, args: spanArgs(builder, call) });
    if (drafting) builder.placeSpan(call.draftId ?? i, place);
    else builder.span({ ...place, name: call.tool, category: call.category, status: call.status, args: spanArgs(builder, call) });
    if (parent >= 0) builder.edge(spanIds[parent], spanIds[i], "child");
    for (const id of new Set(call.after)) {
      const from = indexById.get(id);
      if (from === undefined) builder.limit("TOOL_LINK_MISSING", "Some tool calls follow calls that are not in the file; those links were left out.");
      else if (from !== i) builder.edge(spanIds[from], spanIds[i], "follows_from");
    }
    if (i % 16_384 === 16_383) await builder.checkpoint();
  }
  if (approximate > 0) {
    builder.limit("TOOL_TIMES_APPROXIMATE", "Tool-call times come from message timestamps: a call starts when the message issuing it was written and ends when its result's message was, so durations include model and queueing time and are approximate.", approximate);
  }
  if (logical > 0) builder.limit("TOOL_TIMES_LOGICAL", "The source has no timestamps: tool calls are placed in order one millisecond per message apart; their durations measure nothing.", logical);
  if (unknown > 0) builder.limit("TOOL_SIDE_EFFECT_UNKNOWN", SIDE_EFFECT_UNKNOWN_MESSAGE, unknown);
}

interface AgentState {
  batch: string | null;
  /** Calls whose results arrived since the agent's last batch. */
  completed: string[];
  /** What the current batch's calls follow. */
  after: string[];
}

/** When a message was written: its timestamp in ms (the previous one's when it has none), and its place in the file. */
export interface MessageTime {
  ms: number;
  tick: number;
}

export interface CallInput {
  id: string | null;
  tool: string;
  /** The arguments as a value, or as the JSON text the source wrote. */
  arguments: unknown;
  at: MessageTime;
  agent: string;
  /** Calls of one batch (one message) are parallel. */
  batch: string;
  parentId?: string | null;
  sideEffect?: SideEffect;
  extra?: Record<string, unknown>;
}

export interface ResultInput {
  id: string | null;
  result: unknown;
  isError: boolean;
  error?: string | null;
  at: MessageTime;
  agent: string;
  extra?: Record<string, unknown>;
}

interface LoggedCall extends ToolCall {
  startTick: number;
  endTick: number;
  /** Its place in the log (finish() returns the calls in this order). */
  index: number;
}

/**
 * Reads a conversation's calls and results, pairs them by id and infers causal links (see the file
 * comment). Times are the messages' timestamps (timing approximate); a source without any is
 * placed on its messages' order, one millisecond apart (timing logical).
 */
export class ToolCallLog {
  private readonly calls: LoggedCall[] = [];
  /** Calls waiting for their result, by the source's id. */
  private readonly open = new Map<string, LoggedCall>();
  private readonly issued = new Set<string>();
  private readonly agents = new Map<string, AgentState>();
  private generated = 0;
  private lastMs: number | null = null;
  private ticks = 0;
  private timestamps = 0;
  private missing = 0;

  /**
   * `draftAnswered`: a call's span text goes to the builder as a draft as soon as its result comes
   * (once the source has shown a timestamp, its timing can only be approximate), and its texts are
   * let go: a long session's arguments and results do not wait in memory for its end. Only for
   * importers that change no call after its result.
   */
  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly options: { draftAnswered?: boolean } = {},
  ) {}

  /** A message's time: `timestampMs` when valid, else the previous message's (said in a limitation if the source has any). */
  messageTime(timestampMs: number | null): MessageTime {
    const tick = ++this.ticks;
    if (timestampMs !== null && Number.isFinite(timestampMs)) {
      this.timestamps++;
      this.lastMs = timestampMs;
      return { ms: timestampMs, tick };
    }
    this.missing++;
    return { ms: this.lastMs ?? NaN, tick };
  }

  private agent(name: string): AgentState {
    let state = this.agents.get(name);
    if (!state) this.agents.set(name, (state = { batch: null, completed: [], after: [] }));
    return state;
  }

  call(input: CallInput): ToolCall {
    let id = input.id ?? `call-${++this.generated}`;
    if (this.issued.has(id)) {
      this.builder.limit("TOOL_CALL_DUPLICATE_ID", "Some tool-call ids appeared more than once; later calls were given a suffix (#2, …), and results go to the latest.");
      let n = 2;
      while (this.issued.has(`${id}#${n}`)) n++;
      id = `${id}#${n}`;
    }
    const state = this.agent(input.agent);
    if (state.batch !== input.batch) {
      state.batch = input.batch;
      state.after = state.completed;
      state.completed = [];
    }
    const call: LoggedCall = {
      id,
      tool: input.tool || "(unnamed tool)",
      category: "tool",
      argumentsText: jsonText(input.arguments),
      resultText: null,
      status: "unfinished",
      error: null,
      sideEffect: input.sideEffect ?? "unknown",
      startMs: input.at.ms,
      endMs: input.at.ms,
      startTick: input.at.tick,
      endTick: input.at.tick,
      timing: "approximate",
      agent: input.agent,
      parentId: input.parentId ?? null,
      after: [...state.after],
      extra: input.extra ?? {},
      index: this.calls.length,
    };
    this.issued.add(id);
    // A result names the source's id: with ids given twice, it answers the latest call.
    this.open.set(input.id ?? id, call);
    this.calls.push(call);
    return call;
  }

  result(input: ResultInput): void {
    const call = input.id === null ? undefined : this.open.get(input.id);
    if (!call) {
      this.builder.limit("TOOL_RESULT_WITHOUT_CALL", "Some tool results answer no call in the file; each is kept as a span of category tool_result named (unknown tool).");
      this.calls.push({
        id: input.id ?? `result-${++this.generated}`,
        tool: "(unknown tool)",
        category: "tool_result",
        argumentsText: null,
        resultText: resultText(input.result),
        status: input.isError ? "error" : "ok",
        error: input.error ?? null,
        sideEffect: "unknown",
        startMs: input.at.ms,
        endMs: input.at.ms,
        startTick: input.at.tick,
        endTick: input.at.tick,
        timing: "approximate",
        agent: input.agent,
        parentId: null,
        after: [],
        extra: input.extra ?? {},
        index: this.calls.length,
      });
      return;
    }
    this.open.delete(input.id!);
    call.resultText = resultText(input.result);
    call.status = input.isError ? "error" : "ok";
    call.error = input.error ?? null;
    call.endMs = input.at.ms;
    call.endTick = input.at.tick;
    Object.assign(call.extra, input.extra);
    this.agent(call.agent).completed.push(call.id);
    if (this.options.draftAnswered) this.draft(call);
  }

  /**
   * Sends an answered call's span text to the builder as a draft now and lets its texts go (once
   * the source has shown a timestamp: before, its timing may yet turn out logical). Whatever
   * changes the call afterwards is lost: an importer calls this once nothing more can. Returns
   * whether the call is drafted.
   */
  draft(call: ToolCall): boolean {
    const logged = call as LoggedCall;
    if (logged.draftId !== undefined) return true;
    if (this.timestamps === 0 || logged.status === "unfinished" || this.calls[logged.index] !== logged) return false;
    this.builder.spanDraft(logged.index, { name: logged.tool, category: logged.category, status: logged.status, args: spanArgs(this.builder, logged) });
    logged.draftId = logged.index;
    logged.argumentsText = logged.resultText = logged.error = null;
    logged.extra = {};
    return true;
  }

  /** Every call and unmatched result, in the order read; calls never answered stay unfinished. */
  finish(): ToolCall[] {
    const unanswered = this.calls.filter((c) => c.status === "unfinished").length;
    if (unanswered > 0) this.builder.limit("TOOL_CALL_WITHOUT_RESULT", "Some tool calls have no result in the file; they are kept with status unfinished and a duration of 0.", unanswered);
    const logical = this.timestamps === 0;
    if (!logical && this.missing > 0) this.builder.limit("TOOL_TIMESTAMP_MISSING", "Some messages had no valid timestamp; they were given the previous message's.", this.missing);
    // Messages before the first timestamp take it.
    const first = this.calls.find((c) => Number.isFinite(c.startMs))?.startMs ?? 0;
    let backwards = 0;
    const calls: ToolCall[] = this.calls.map(({ startTick, endTick, index: _index, ...call }) => {
      if (logical) return { ...call, startMs: startTick, endMs: endTick, timing: "logical" };
      const startMs = Number.isFinite(call.startMs) ? call.startMs : first;
      let endMs = Number.isFinite(call.endMs) ? call.endMs : startMs;
      if (endMs < startMs) {
        backwards++;
        endMs = startMs;
      }
      return { ...call, startMs, endMs };
    });
    if (backwards > 0) this.builder.limit("TOOL_RESULT_BEFORE_CALL", "Some tool results are timestamped before their call; those calls were given a duration of 0.", backwards);
    return calls;
  }
}
