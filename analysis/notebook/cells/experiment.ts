import { z } from "zod";
import { defineCellKind } from "./define";

/** An experiment of the investigation: its decision, the paired deltas with the CI, values in run order, each variant's distribution. */
export const experimentCell = defineCellKind({
  kind: "experiment",
  title: "Experiment",
  readsEvidence: false,
  content: z
    .object({
      experiment_id: z.string().regex(/^exp_[0-9a-z]{1,120}$/, "expected an id starting exp_").describe("The experiment (exp_…)."),
    })
    .strict(),
});
