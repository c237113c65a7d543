import { z } from "zod";
import { defineCellKind } from "./define";

/** Shows one finding of the investigation with its evidence references (the record lives in the findings table). */
export const findingCell = defineCellKind({
  kind: "finding",
  title: "Finding",
  readsEvidence: false,
  content: z.object({ finding_id: z.string().min(1).max(128) }).strict(),
  records: (c) => ({ findings: [c.finding_id] }),
});
