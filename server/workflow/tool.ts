import { z } from "zod";

/**
 * What a tool module registers: a name, the code that runs (`handler`) and what the code declares
 * of itself — its side effect, input and output zod schemas, timeout and concurrency limit. A
 * person's review (`tools.review`) binds a contract to exactly this code (see registry.ts).
 *
 * A module of the project's tools folder exports them as `tools` (an array) or as its default
 * export (one tool or an array); it may import `defineTool` from here for types, or export plain
 * objects of this shape.
 */
export interface ToolDefinition<I = unknown, O = unknown> {
  name: string;
  description?: string;
  side_effect: "read" | "write";
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  /** Milliseconds before a call is aborted (TOOL_TIMEOUT). */
  timeout_ms: number;
  /** At most this many calls of the tool at once within one run. */
  concurrency: number;
  /** The call: it must stop when `signal` aborts (a cancel or the timeout). */
  handler: (input: I, context: ToolCallContext) => Promise<O> | O;
}

export interface ToolCallContext {
  signal: AbortSignal;
  /** The workflow node this call replays. */
  node: string;
}

export function defineTool<I, O>(definition: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return definition;
}

/** Names a tool may be registered under: what traces use (`Read`, `mcp__github__get_issue`, `web.search`). */
export const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/;

const isSchema = (value: unknown): value is z.ZodType => typeof value === "object" && value !== null && typeof (value as { safeParse?: unknown }).safeParse === "function";

/** Why a value exported as a tool is not one, or null. */
export function definitionProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return "a tool must be an object";
  const d = value as Partial<Record<keyof ToolDefinition, unknown>>;
  if (typeof d.name !== "string" || !TOOL_NAME.test(d.name)) return "its name must match " + String(TOOL_NAME);
  if (d.side_effect !== "read" && d.side_effect !== "write") return `tool ${d.name}: side_effect must be "read" or "write"`;
  if (!isSchema(d.input) || !isSchema(d.output)) return `tool ${d.name}: input and output must be zod schemas`;
  if (typeof d.timeout_ms !== "number" || !Number.isInteger(d.timeout_ms) || d.timeout_ms < 1 || d.timeout_ms > 3_600_000) return `tool ${d.name}: timeout_ms must be an integer from 1 to 3600000`;
  if (typeof d.concurrency !== "number" || !Number.isInteger(d.concurrency) || d.concurrency < 1 || d.concurrency > 256) return `tool ${d.name}: concurrency must be an integer from 1 to 256`;
  if (typeof d.handler !== "function") return `tool ${d.name}: handler must be a function`;
  return null;
}

/** A schema as JSON Schema, for the contract a person reviews (schemas that cannot be written so say so). */
export function jsonSchemaOf(schema: z.ZodType): unknown {
  try {
    return z.toJSONSchema(schema, { unrepresentable: "any" });
  } catch {
    return { description: "not representable as JSON Schema" };
  }
}
