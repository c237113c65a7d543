import { z } from "zod";
import { defineCellKind, TransformsRef, InvertedRef, TrackChoiceRef, MetricName, NodeRef, RunRef, SearchText } from "./define";

/** A run's flame graph with its view state (FlameGraphCell's props). */
export const flameCell = defineCellKind({
  kind: "flame",
  title: "Flame graph",
  readsEvidence: true,
  content: z
    .object({
      run_id: RunRef,
      metric: MetricName.optional(),
      tracks: TrackChoiceRef.optional(),
      transforms: TransformsRef.optional(),
      inverted: InvertedRef.optional(),
      zoom: NodeRef.nullable().optional().describe("The zoomed node's id, null for the whole graph."),
      search: SearchText.optional(),
      orientation: z.enum(["icicle", "flame"]).optional(),
      mode: z.enum(["left-heavy", "time-order"]).optional(),
    })
    .strict(),
  runs: (c) => [c.run_id],
});
