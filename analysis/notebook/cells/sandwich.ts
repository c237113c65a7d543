import { z } from "zod";
import { defineCellKind, TransformsRef, TrackChoiceRef, FrameKeyRef, MetricName, RunRef } from "./define";

/** The function table of a run and, for the selected function, its callers and callees. */
export const sandwichCell = defineCellKind({
  kind: "sandwich",
  title: "Sandwich",
  readsEvidence: true,
  content: z
    .object({
      run_id: RunRef,
      metric: MetricName.optional(),
      tracks: TrackChoiceRef.optional(),
      transforms: TransformsRef.optional(),
      selected: FrameKeyRef.nullable().optional().describe("The selected function's frame_key."),
    })
    .strict(),
  runs: (c) => [c.run_id],
});
