import { z } from "zod";
import { defineCellKind, RunRef } from "./define";

/**
 * A critical path at the cell's commit: a run's agent tool calls compiled into a workflow (with an
 * optional what-if), or its span traces (one trace shown). The numbers are critical_path.get's.
 */
export const criticalPathCell = defineCellKind({
  kind: "critical_path",
  title: "Critical path",
  readsEvidence: true,
  content: z
    .object({
      run_id: RunRef,
      trace_id: z.string().min(1).max(256).optional().describe("Span traces: the trace shown (default: the longest)."),
      what_if: z.object({ node: z.string().min(1).max(64), duration_ms: z.number().min(0).max(1e12) }).strict().optional().describe("Workflows: as if that node took duration_ms."),
    })
    .strict(),
  runs: (c) => [c.run_id],
});
