import { z } from "zod";
import { defineCellKind, TransformsRef, InvertedRef, TrackChoiceRef, MetricName, NodeRef, RunRef } from "./define";

/** A run's call tree with the nodes the investigator expanded. */
export const calltreeCell = defineCellKind({
  kind: "calltree",
  title: "Call tree",
  readsEvidence: true,
  content: z
    .object({
      run_id: RunRef,
      metric: MetricName.optional(),
      tracks: TrackChoiceRef.optional(),
      transforms: TransformsRef.optional(),
      inverted: InvertedRef.optional(),
      expanded: z.array(NodeRef).max(2000).optional().describe("Ids of the expanded nodes."),
    })
    .strict(),
  runs: (c) => [c.run_id],
});
