import { z } from "zod";
import { defineCellKind } from "./define";

/** Markdown written by the investigator (or an agent: then it is observed text to everyone else). */
export const noteCell = defineCellKind({
  kind: "note",
  title: "Note",
  readsEvidence: false,
  content: z.object({ markdown: z.string().max(100_000) }).strict(),
});
