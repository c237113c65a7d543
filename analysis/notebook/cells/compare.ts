import { z } from "zod";
import { defineCellKind, MetricName, NodeRef, RunRef, SearchText, TrackChoiceRef } from "./define";

/** Two runs compared per frame, with the differential flame graph's view state. */
export const compareCell = defineCellKind({
  kind: "compare",
  title: "Compare",
  readsEvidence: true,
  content: z
    .object({
      base_run_id: RunRef,
      candidate_run_id: RunRef,
      metric: MetricName.optional(),
      /** Each run's tracks, as evidence.compare takes them; absent: every track merged. */
      base_tracks: TrackChoiceRef.optional(),
      candidate_tracks: TrackChoiceRef.optional(),
      normalize: z.boolean().optional().describe("Compare shares of each run's total."),
      from: z.enum(["base", "candidate"]).optional().describe("Which run's widths the graph draws."),
      zoom: NodeRef.nullable().optional(),
      search: SearchText.optional(),
    })
    .strict(),
  runs: (c) => [c.base_run_id, c.candidate_run_id],
});
