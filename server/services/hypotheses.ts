import { z } from "zod";
import { newId, nowIso } from "../domain/ids";
import { Cell, CellId, ClaimText, Hypothesis, HypothesisId, HypothesisStatus, InvestigationId, ShortText } from "../domain/notebook";
import { writeTransaction } from "../store/control-store";
import { insertHypothesis, updateHypothesis } from "../store/hypotheses";
import { getInvestigation } from "../store/investigations";
import { addCellIn } from "./cells";
import { Revision } from "./investigations";
import { authorFor, refuseOverLimit, refuseAgentOverPerson } from "./notebook-rules";
import { defineService } from "./service";

/** Hypotheses: a claim, what it predicts and what would refute it, with a status as evidence comes in. */

export const recordHypothesis = defineService({
  name: "hypotheses.record",
  summary: "Record a hypothesis (claim, prediction, what would refute it) in an investigation, and append its cell.",
  kind: "mutation",
  input: z
    .object({
      investigation_id: InvestigationId,
      claim: ClaimText,
      prediction: ShortText.default(""),
      refuted_by: ShortText.default("").describe("What observation would refute it."),
      status: HypothesisStatus.default("open"),
      add_cell: z.boolean().default(true).describe("Also add a hypothesis cell to the notebook (default true)."),
      after_cell_id: CellId.nullable().optional().describe("Where its cell goes: after this cell; null first; absent last."),
    })
    .strict(),
  output: z.object({ hypothesis: Hypothesis, cell: Cell.nullable() }),
  handler: (input, { ws, ctx }) =>
    writeTransaction(ws.db, () => {
      const inv = getInvestigation(ws.db, input.investigation_id);
      refuseOverLimit(ws.db, inv.investigation_id, "hypotheses");
      const now = nowIso();
      const author = authorFor(ctx);
      const hypothesis: Hypothesis = {
        hypothesis_id: newId("hyp"),
        investigation_id: inv.investigation_id,
        claim: input.claim,
        prediction: input.prediction,
        refuted_by: input.refuted_by,
        status: input.status,
        created_by: author,
        revision: 1,
        created_at: now,
        updated_at: now,
      };
      insertHypothesis(ws.db, hypothesis);
      const cell = input.add_cell
        ? addCellIn(ws.db, { investigationId: inv.investigation_id, kind: "hypothesis", content: { hypothesis_id: hypothesis.hypothesis_id }, afterCellId: input.after_cell_id, author })
        : null;
      return { hypothesis, cell };
    }),
});

export const changeHypothesis = defineService({
  name: "hypotheses.update",
  summary: "Revise a hypothesis or set its status (open, supported, refuted, inconclusive), by compare-and-set on its revision.",
  kind: "mutation",
  input: z
    .object({
      hypothesis_id: HypothesisId,
      expected_revision: Revision,
      claim: ClaimText.optional(),
      prediction: ShortText.optional(),
      refuted_by: ShortText.optional(),
      status: HypothesisStatus.optional(),
    })
    .strict(),
  output: Hypothesis,
  handler: (input, { ws, ctx }) =>
    updateHypothesis(ws.db, input.hypothesis_id, input.expected_revision, (current) => {
      refuseAgentOverPerson(ctx, current, "hypothesis", { hypothesis_id: current.hypothesis_id });
      const { hypothesis_id: _id, expected_revision: _rev, ...patch } = input;
      return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    }),
});
