import { z } from "zod";
import { defineCellKind, NsRange, RunRef } from "./define";

/** A trace window: the visible time window and a selected range inside it (ns from the run's origin). */
export const traceCell = defineCellKind({
  kind: "trace",
  title: "Trace window",
  readsEvidence: true,
  content: z
    .object({
      run_id: RunRef,
      window: NsRange.optional().describe("The visible window [start_ns, end_ns]."),
      range: NsRange.optional().describe("The selected range [start_ns, end_ns]."),
    })
    .strict(),
  runs: (c) => [c.run_id],
});
