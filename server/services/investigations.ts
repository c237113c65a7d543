import { z } from "zod";
import { newId, nowIso } from "../domain/ids";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { Cell, Finding, Hypothesis, Investigation, InvestigationId, InvestigationStatus, Question, Title } from "../domain/notebook";
import { countCells, listCellRows } from "../store/cells";
import { writeTransaction } from "../store/control-store";
import { listFindingRows } from "../store/findings";
import { listHypothesisRows } from "../store/hypotheses";
import { getInvestigation, insertInvestigation, investigationCounts, listInvestigationRows, updateInvestigation } from "../store/investigations";
import { AuditEvent } from "./agent-access";
import { authorFor, refuseAgentOverPerson } from "./notebook-rules";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

/** Investigations: the notebook's record (title, question, status); cells, hypotheses and findings hang off it. */

export const Revision = z.number().int().min(1).describe("The revision you read: the update applies only if it is still current (else REVISION_CONFLICT).");

export const createInvestigation = defineService({
  name: "investigations.create",
  summary: "Start an investigation: a question to answer with pinned evidence, as a notebook of cells.",
  kind: "mutation",
  input: z.object({ title: Title, question: Question.default("") }).strict(),
  output: Investigation,
  handler: (input, { ws, ctx }) => {
    const now = nowIso();
    const inv: Investigation = {
      investigation_id: newId("inv"),
      title: input.title,
      question: input.question,
      status: "open",
      created_by: authorFor(ctx),
      imported: null,
      revision: 1,
      created_at: now,
      updated_at: now,
    };
    writeTransaction(ws.db, () => insertInvestigation(ws.db, inv));
    return inv;
  },
});

export const InvestigationListItem = Investigation.extend({
  counts: z.object({ cells: z.number().int(), hypotheses: z.number().int(), findings: z.number().int() }),
});

export const listInvestigations = defineService({
  name: "investigations.list",
  summary: "List investigations, newest first, with how many cells, hypotheses and findings each holds.",
  kind: "query",
  input: z.object({ limit: Limit, cursor: CursorArg, status: InvestigationStatus.optional() }).strict(),
  output: pageOf(InvestigationListItem),
  handler: (input, { ws }) => {
    const filters = { status: input.status };
    return keysetPage({
      ws,
      binding: { query: "investigations.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "investigations.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listInvestigationRows(ws.db, filters, after, limit).map((inv) => ({ ...inv, counts: investigationCounts(ws.db, inv.investigation_id) })),
      keyOf: (inv): [string, string] => [inv.created_at, inv.investigation_id],
    });
  },
});

/** At most this many cells, hypotheses and findings in one `investigations.get`. */
export const MAX_NOTEBOOK_ITEMS = 500;

export const NotebookView = z.object({
  investigation: Investigation,
  cells: z.array(Cell).describe("In notebook order."),
  hypotheses: z.array(Hypothesis).describe("Oldest first."),
  findings: z.array(Finding).describe("Newest first."),
  counts: z.object({ cells: z.number().int(), hypotheses: z.number().int(), findings: z.number().int() }).describe("How many there are in all (cells: live ones, or all with include_deleted)."),
  truncated: z.object({ cells: z.boolean(), hypotheses: z.boolean(), findings: z.boolean() }).describe("Whether a list was cut at its limit; cells.list and findings.list page through the rest."),
});
export type NotebookView = z.infer<typeof NotebookView>;

export const showInvestigation = defineService({
  name: "investigations.get",
  summary: "Show an investigation as its notebook: cells in order (with their pinned commits), hypotheses and findings.",
  kind: "query",
  input: z
    .object({
      investigation_id: InvestigationId,
      max_cells: z.number().int().min(1).max(MAX_NOTEBOOK_ITEMS).default(MAX_NOTEBOOK_ITEMS).describe("Cells returned at most (cells.list pages through all)."),
      include_deleted: z.boolean().default(false).describe("Also return deleted cells (restorable)."),
    })
    .strict(),
  output: NotebookView,
  handler: (input, { ws }) => {
    const read = ws.db.transaction(() => {
      const investigation = getInvestigation(ws.db, input.investigation_id);
      const id = investigation.investigation_id;
      const cells = listCellRows(ws.db, id, { includeDeleted: input.include_deleted, after: null, limit: input.max_cells + 1 });
      const hypotheses = listHypothesisRows(ws.db, id, MAX_NOTEBOOK_ITEMS + 1);
      const findings = listFindingRows(ws.db, { investigation_id: id }, null, MAX_NOTEBOOK_ITEMS + 1);
      const counts = investigationCounts(ws.db, id);
      return {
        investigation,
        cells: cells.slice(0, input.max_cells),
        hypotheses: hypotheses.slice(0, MAX_NOTEBOOK_ITEMS),
        findings: findings.slice(0, MAX_NOTEBOOK_ITEMS),
        counts: { ...counts, cells: input.include_deleted ? countCells(ws.db, id, true) : counts.cells },
        truncated: { cells: cells.length > input.max_cells, hypotheses: hypotheses.length > MAX_NOTEBOOK_ITEMS, findings: findings.length > MAX_NOTEBOOK_ITEMS },
      };
    });
    return read.deferred();
  },
});

export const changeInvestigation = defineService({
  name: "investigations.update",
  summary: "Change an investigation's title, question or status (open, concluded, abandoned), by compare-and-set on its revision.",
  kind: "mutation",
  input: z
    .object({
      investigation_id: InvestigationId,
      expected_revision: Revision,
      title: Title.optional(),
      question: Question.optional(),
      status: InvestigationStatus.optional(),
    })
    .strict(),
  output: Investigation,
  handler: (input, { ws, ctx }) =>
    updateInvestigation(ws.db, input.investigation_id, input.expected_revision, (current) => {
      refuseAgentOverPerson(ctx, current, "investigation", { investigation_id: current.investigation_id });
      return {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.question !== undefined ? { question: input.question } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
      };
    }),
});

export const investigationActivity = defineService({
  name: "investigations.activity",
  summary: "The audit events of agent calls that touched an investigation, newest first (the notebook's agent timeline).",
  kind: "query",
  input: z.object({ investigation_id: InvestigationId, limit: Limit, cursor: CursorArg }).strict(),
  output: pageOf(AuditEvent),
  handler: (input, { ws }) => {
    getInvestigation(ws.db, input.investigation_id);
    const filters = { investigation_id: input.investigation_id };
    return keysetPage({
      ws,
      binding: { query: "investigations.activity", filters, order: "seq desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "investigations.activity", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [number] | null, limit) => {
        const rows = ws.db
          .prepare(
            `SELECT seq, at, actor, action, target, arguments_digest, result_code, duration_ms, details FROM audit_events
             WHERE target = ? AND actor = 'agent' AND (? IS NULL OR seq < ?) ORDER BY seq DESC LIMIT ?`,
          )
          .all(input.investigation_id, after?.[0] ?? null, after?.[0] ?? null, limit) as (Omit<AuditEvent, "details"> & { details: string })[];
        return rows.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> }));
      },
      keyOf: (e): [number] => [e.seq],
    });
  },
});
