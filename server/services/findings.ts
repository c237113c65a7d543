import { z } from "zod";
import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { Assessment, Cell, CellId, ClaimText, EvidenceLevel, Finding, FindingId, FindingKind, InvestigationId, Lifecycle, References, TextList, Title } from "../domain/notebook";
import { writeTransaction } from "../store/control-store";
import { findFinding, findingNotFound, getFinding, insertFinding, listFindingRows, updateFinding } from "../store/findings";
import { getInvestigation } from "../store/investigations";
import { addCellIn } from "./cells";
import { Revision } from "./investigations";
import { authorFor, refuseOverLimit, checkReferences, refuseAgentOverPerson, requireExperimentDecisions, requireSupport } from "./notebook-rules";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

/**
 * Findings: a claim with its kind, evidence level and limitations, citing pinned evidence by
 * reference; assessed (supported only with a `supports` reference) and superseded or retracted
 * rather than deleted.
 */

export const recordFinding = defineService({
  name: "findings.record",
  summary: "Record a finding that cites pinned evidence (cells, runs, commits, query results, comparisons, experiments), and append its cell.",
  kind: "mutation",
  input: z
    .object({
      investigation_id: InvestigationId,
      title: Title,
      claim: ClaimText,
      kind: FindingKind.default("observation"),
      evidence_level: EvidenceLevel.describe("observed (seen in the evidence), derived (computed from it) or inferred (reasoned beyond it)."),
      assessment: Assessment.default("unassessed"),
      limitations: TextList.default([]),
      next_steps: TextList.default([]),
      references: References.default([]).describe("Evidence references; each target names a concrete commit."),
      add_cell: z.boolean().default(true).describe("Also add a finding cell to the notebook (default true)."),
      after_cell_id: CellId.nullable().optional().describe("Where its cell goes: after this cell; null first; absent last."),
    })
    .strict(),
  output: z.object({ finding: Finding, cell: Cell.nullable() }),
  handler: (input, { ws, ctx }) =>
    writeTransaction(ws.db, () => {
      const inv = getInvestigation(ws.db, input.investigation_id);
      refuseOverLimit(ws.db, inv.investigation_id, "findings");
      checkReferences(ws.db, inv.investigation_id, input.references);
      requireSupport(input, null);
      requireExperimentDecisions(ws.db, input, null);
      const now = nowIso();
      const author = authorFor(ctx);
      const finding: Finding = {
        finding_id: newId("fnd"),
        investigation_id: inv.investigation_id,
        title: input.title,
        claim: input.claim,
        kind: input.kind,
        evidence_level: input.evidence_level,
        assessment: input.assessment,
        lifecycle: "active",
        superseded_by: null,
        limitations: input.limitations,
        next_steps: input.next_steps,
        references: input.references,
        created_by: author,
        revision: 1,
        created_at: now,
        updated_at: now,
      };
      insertFinding(ws.db, finding);
      const cell = input.add_cell
        ? addCellIn(ws.db, { investigationId: inv.investigation_id, kind: "finding", content: { finding_id: finding.finding_id }, afterCellId: input.after_cell_id, author })
        : null;
      return { finding, cell };
    }),
});

export const changeFinding = defineService({
  name: "findings.update",
  summary: "Revise a finding (text, kind, level, limitations, next steps, references) or its lifecycle (superseded by another finding, retracted), by compare-and-set.",
  kind: "mutation",
  input: z
    .object({
      finding_id: FindingId,
      expected_revision: Revision,
      title: Title.optional(),
      claim: ClaimText.optional(),
      kind: FindingKind.optional(),
      evidence_level: EvidenceLevel.optional(),
      limitations: TextList.optional(),
      next_steps: TextList.optional(),
      references: References.optional().describe("The whole new list of references."),
      lifecycle: Lifecycle.optional(),
      superseded_by: FindingId.nullable().optional().describe("The finding that replaces this one (with lifecycle superseded)."),
    })
    .strict(),
  output: Finding,
  handler: (input, { ws, ctx }) =>
    updateFinding(ws.db, input.finding_id, input.expected_revision, (current) => {
      refuseAgentOverPerson(ctx, current, "finding", { finding_id: current.finding_id });
      const { finding_id: _id, expected_revision: _rev, ...given } = input;
      const patch = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<Finding>;
      const next = { ...current, ...patch };
      if (input.lifecycle !== undefined && input.lifecycle !== "superseded" && input.superseded_by === undefined) next.superseded_by = null;
      if (next.lifecycle === "superseded") {
        if (!next.superseded_by) throw new EmberscopeError("INVALID_ARGUMENTS", "A superseded finding names the finding that supersedes it.", { details: { argument: "superseded_by" } });
        if (next.superseded_by === current.finding_id) throw new EmberscopeError("INVALID_ARGUMENTS", "A finding cannot supersede itself.", { details: { argument: "superseded_by" } });
        if (findFinding(ws.db, next.superseded_by)?.investigation_id !== current.investigation_id) throw findingNotFound(next.superseded_by, current.investigation_id);
      } else if (next.superseded_by !== null) {
        throw new EmberscopeError("INVALID_ARGUMENTS", "superseded_by goes with lifecycle superseded.", { details: { argument: "superseded_by" } });
      }
      if (input.references !== undefined) checkReferences(ws.db, current.investigation_id, input.references);
      requireSupport(next, current.finding_id);
      requireExperimentDecisions(ws.db, next, current.finding_id);
      return { ...patch, superseded_by: next.superseded_by };
    }),
});

export const assessFinding = defineService({
  name: "findings.assess",
  summary: "Assess a finding: supported (needs a `supports` reference; a cited experiment must have decided a meaningful change in the claimed direction), refuted, inconclusive or unassessed.",
  kind: "mutation",
  input: z.object({ finding_id: FindingId, expected_revision: Revision, assessment: Assessment }).strict(),
  output: Finding,
  handler: (input, { ws, ctx }) =>
    updateFinding(ws.db, input.finding_id, input.expected_revision, (current) => {
      refuseAgentOverPerson(ctx, current, "finding", { finding_id: current.finding_id });
      requireSupport({ assessment: input.assessment, references: current.references }, current.finding_id);
      requireExperimentDecisions(ws.db, { ...current, assessment: input.assessment }, current.finding_id);
      return { assessment: input.assessment };
    }),
});

export const showFinding = defineService({
  name: "findings.get",
  summary: "Show one finding with its references.",
  kind: "query",
  input: z.object({ finding_id: FindingId }).strict(),
  output: Finding,
  handler: (input, { ws }) => getFinding(ws.db, input.finding_id),
});

export const listFindings = defineService({
  name: "findings.list",
  summary: "List findings, newest first, of one investigation or all, filtered by assessment, lifecycle or kind.",
  kind: "query",
  input: z
    .object({
      investigation_id: InvestigationId.optional(),
      assessment: Assessment.optional(),
      lifecycle: Lifecycle.optional(),
      kind: FindingKind.optional(),
      limit: Limit,
      cursor: CursorArg,
    })
    .strict(),
  output: pageOf(Finding),
  handler: (input, { ws }) => {
    if (input.investigation_id) getInvestigation(ws.db, input.investigation_id);
    const filters = { investigation_id: input.investigation_id, assessment: input.assessment, lifecycle: input.lifecycle, kind: input.kind };
    return keysetPage({
      ws,
      binding: { query: "findings.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "findings.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listFindingRows(ws.db, filters, after, limit),
      keyOf: (f): [string, string] => [f.created_at, f.finding_id],
    });
  },
});
