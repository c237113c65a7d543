import { z } from "zod";
import { defineTool, type ToolDefinition } from "./tool";

/**
 * Tools every workspace has, registered by this code. They touch nothing outside the run: a
 * workflow of them can be replayed live anywhere, and they show the runtime's checks end to end.
 */

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: "emberscope.echo",
    description: "Returns its `value` argument unchanged.",
    side_effect: "read",
    input: z.object({ value: z.json() }).strict(),
    output: z.json(),
    timeout_ms: 1000,
    concurrency: 64,
    handler: (input) => input.value,
  }),
  defineTool({
    name: "emberscope.sleep",
    description: "Waits `ms` milliseconds (stopping at a cancel), then returns `{slept_ms}`.",
    side_effect: "read",
    input: z.object({ ms: z.number().int().min(0).max(600_000) }).strict(),
    output: z.object({ slept_ms: z.number() }).strict(),
    timeout_ms: 600_000,
    concurrency: 256,
    handler: async (input, { signal }) => {
      await wait(input.ms, signal);
      return { slept_ms: input.ms };
    },
  }),
] as ToolDefinition[];
