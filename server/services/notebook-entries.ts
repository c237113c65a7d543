import { z } from "zod";
import { Cell, CellId, CellName, ClaimText, CommitId, Hypothesis, HypothesisStatus, InvestigationId, ShortText } from "../domain/notebook";
import { addNoteCell, addQueryCell } from "./cells";
import { recordHypothesis } from "./hypotheses";
import { defineService, parseServiceInput, type ServiceDef } from "./service";
import { TABLE_NAMES } from "../../analysis/evidence/schema";

/**
 * One way for an agent to write into a notebook: a note, a SQL cell or a hypothesis (with its
 * cell), chosen by `kind`. Each kind is exactly the service that adds it, called with that
 * kind's fields only, so a field of another kind is refused by name (INVALID_ARGUMENTS).
 */

const ENTRY_SERVICES: Record<"note" | "query" | "hypothesis", ServiceDef> = { note: addNoteCell, query: addQueryCell, hypothesis: recordHypothesis } as unknown as Record<"note" | "query" | "hypothesis", ServiceDef>;

export const addNotebookEntry = defineService({
  name: "cells.add_entry",
  summary: "Add a note (markdown), a SQL cell (sql, name, commit_id, chart) or a hypothesis (claim, prediction, refuted_by, status) with its cell to an investigation.",
  kind: "mutation",
  input: z
    .object({
      investigation_id: InvestigationId,
      kind: z.enum(["note", "query", "hypothesis"]).describe("note: markdown; query: a SQL cell; hypothesis: a hypothesis record and its cell."),
      after_cell_id: CellId.nullable().optional().describe("Place it right after this cell; null puts it first; absent, last."),
      markdown: z.string().min(1).max(100_000).optional().describe("note: the note's markdown."),
      sql: z.string().min(1).max(20_000).optional().describe(`query: the SQL, over the pinned commit's evidence tables (${TABLE_NAMES.join(", ")}) and earlier named cells.`),
      name: CellName.nullable().optional().describe("query: a name later SQL cells read as a table (unique in the investigation)."),
      commit_id: CommitId.optional().describe("query: the commit it reads; HEAD's id at this moment when absent."),
      chart: z.object({ kind: z.enum(["bar", "line"]), x: z.string().min(1).max(256).optional(), y: z.string().min(1).max(256).optional() }).strict().optional().describe("query: draw the result."),
      claim: ClaimText.optional().describe("hypothesis: the claim."),
      prediction: ShortText.optional().describe("hypothesis: what it predicts."),
      refuted_by: ShortText.optional().describe("hypothesis: what observation would refute it."),
      status: HypothesisStatus.optional().describe("hypothesis: open (default), supported, refuted or inconclusive."),
    })
    .strict(),
  output: z.object({ cell: Cell, hypothesis: Hypothesis.nullable().describe("The hypothesis recorded (kind hypothesis), else null.") }),
  handler: async ({ kind, ...fields }, context) => {
    const service = ENTRY_SERVICES[kind];
    const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    const result = (await service.handler(parseServiceInput(service, given), context)) as { cell: Cell | null; hypothesis?: Hypothesis };
    // A hypothesis added here always gets its cell (add_cell defaults to true and is not offered).
    return { cell: result.cell!, hypothesis: result.hypothesis ?? null };
  },
});
