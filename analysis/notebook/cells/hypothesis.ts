import { z } from "zod";
import { defineCellKind } from "./define";

/** Shows one hypothesis of the investigation (the record lives in the hypotheses table). */
export const hypothesisCell = defineCellKind({
  kind: "hypothesis",
  title: "Hypothesis",
  readsEvidence: false,
  content: z.object({ hypothesis_id: z.string().min(1).max(128) }).strict(),
  records: (c) => ({ hypotheses: [c.hypothesis_id] }),
});
