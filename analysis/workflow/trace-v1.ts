import { z } from "zod";

/**
 * Trace v1: Emberscope's own JSON format for an agent's tool-call trace, written as a zod schema
 * (the spec is this code; docs/evidence.md is generated from it). Every agent-session importer
 * reads its format into these events (analysis/formats/tool-calls.ts), and the workflow compiler
 * reads them back from the spans they become. Pure: no Node, React or Next imports.
 */

export const TRACE_V1_FORMAT = "emberscope.trace";

/** What a tool call does to the world: only `read` calls may be deduplicated or reordered. */
export const SIDE_EFFECTS = ["read", "write", "unknown"] as const;
export type SideEffect = (typeof SIDE_EFFECTS)[number];

/** `unfinished`: the trace holds no result for the call (the session ended, or the result was lost). */
export const TOOL_CALL_STATUSES = ["ok", "error", "unfinished"] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/**
 * How an event's times were known: `recorded` by whoever ran the tool, `approximate` from the
 * timestamps of the messages that issued the call and carried its result (model and queueing
 * time included), `logical` when the source has no clock (events one millisecond apart, in order).
 */
export const TIMINGS = ["recorded", "approximate", "logical"] as const;
export type Timing = (typeof TIMINGS)[number];

export const TRACE_V1_LIMITS = {
  events: 1_000_000,
  idLength: 256,
  toolLength: 512,
  links: 1024,
  errorLength: 4096,
};

const EventId = z.string().min(1).max(TRACE_V1_LIMITS.idLength);

const Time = z
  .union([z.number(), z.iso.datetime({ offset: true })])
  .describe("Milliseconds (a number: since the epoch or any origin shared by the trace) or an ISO 8601 date-time with its offset.");

export const ToolEventV1 = z
  .object({
    id: EventId.describe("The call's id, unique in the trace (the source's call id where it has one)."),
    tool: z.string().min(1).max(TRACE_V1_LIMITS.toolLength).describe("The tool's name: the span's name."),
    arguments: z.json().optional().describe("The arguments, as JSON (most tools take an object)."),
    result: z.json().optional().describe("The result, as JSON or text; absent when the call has none."),
    status: z.enum(TOOL_CALL_STATUSES).describe("ok, error (the tool failed or refused) or unfinished (no result)."),
    error: z.string().max(TRACE_V1_LIMITS.errorLength).optional().describe("Why the call failed, when the source says."),
    side_effect: z.enum(SIDE_EFFECTS).default("unknown").describe("read, write or unknown; unknown unless the source says, never guessed."),
    start: Time.optional().describe("When the call started: milliseconds (a number, since the epoch or any origin the trace shares) or an ISO 8601 date-time with offset. Either every event has one or none has (then the order is the clock)."),
    end: Time.optional().describe("When it ended, as `start`; or give duration_ms."),
    duration_ms: z.number().nonnegative().optional().describe("Its duration in milliseconds, when `end` is absent."),
    timing: z.enum(TIMINGS).default("recorded").describe("How the times were known: recorded, approximate (from message timestamps) or logical."),
    agent: z.string().min(1).max(TRACE_V1_LIMITS.idLength).default("main").describe("The agent that made the call (main, or a subagent's id): one track each."),
    parent_id: EventId.optional().describe("The event this one ran inside (a subagent's calls inside the call that started it): the span's parent and a `child` edge."),
    after: z.array(EventId).max(TRACE_V1_LIMITS.links).default([]).describe("Events whose results were known when this one was issued (causal links): `follows_from` edges."),
  })
  .describe("One tool call.");

export const TraceV1 = z
  .object({
    format: z.literal(TRACE_V1_FORMAT).describe(`Always "${TRACE_V1_FORMAT}".`),
    version: z.literal(1).describe("Always 1."),
    id: z.string().max(TRACE_V1_LIMITS.idLength).optional().describe("The trace's (session's) id."),
    source: z.string().max(TRACE_V1_LIMITS.idLength).optional().describe("What produced it (a harness, an agent framework)."),
    inputs: z.record(z.string().max(TRACE_V1_LIMITS.idLength), z.json()).default({}).describe("The runtime inputs the agent started from, by name (a compiled workflow's parameters)."),
    events: z.array(ToolEventV1).max(TRACE_V1_LIMITS.events).describe("The tool calls, in the order they were issued."),
  })
  .superRefine((trace, ctx) => {
    const ids = new Set<string>();
    const timed = trace.events.filter((e) => e.start !== undefined).length;
    if (timed !== 0 && timed !== trace.events.length) ctx.addIssue({ code: "custom", path: ["events"], message: "either every event has a start or none has" });
    trace.events.forEach((event, i) => {
      if (ids.has(event.id)) ctx.addIssue({ code: "custom", path: ["events", i, "id"], message: "event ids must be unique" });
      ids.add(event.id);
      if ((event.end !== undefined || event.duration_ms !== undefined) && event.start === undefined) ctx.addIssue({ code: "custom", path: ["events", i, "start"], message: "an end or duration needs a start" });
      if (event.end !== undefined && event.duration_ms !== undefined) ctx.addIssue({ code: "custom", path: ["events", i, "duration_ms"], message: "give end or duration_ms, not both" });
      if (event.start !== undefined && event.end !== undefined && timeMs(event.end) < timeMs(event.start)) ctx.addIssue({ code: "custom", path: ["events", i, "end"], message: "end is before start" });
    });
    trace.events.forEach((event, i) => {
      if (event.parent_id !== undefined && !ids.has(event.parent_id)) ctx.addIssue({ code: "custom", path: ["events", i, "parent_id"], message: "parent_id names no event of the trace" });
      event.after.forEach((id, k) => {
        if (!ids.has(id)) ctx.addIssue({ code: "custom", path: ["events", i, "after", k], message: "after names no event of the trace" });
      });
    });
  })
  .describe("A tool-call trace (trace v1).");

export type ToolEventV1 = z.output<typeof ToolEventV1>;
export type TraceV1 = z.output<typeof TraceV1>;

/** A trace time in milliseconds: numbers as they are, ISO date-times since the epoch. */
export function timeMs(time: number | string): number {
  return typeof time === "number" ? time : Date.parse(time);
}
