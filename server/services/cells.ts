import { z } from "zod";
import { positionBetween } from "../../analysis/notebook/position";
import { EmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { Cell, CellId, CellKind, CellName, CommitId, InvestigationId, type Author } from "../domain/notebook";
import { DOCUMENT_LIMITS } from "../domain/notebook-document";
import { cellNamed, cellRevisions, countCells, getCell, insertCell, listCellRows, nameTaken, slotAfter, updateCell } from "../store/cells";
import { writeTransaction, type SqliteDatabase } from "../store/control-store";
import { getInvestigation } from "../store/investigations";
import { Revision } from "./investigations";
import { authorFor, checkCellTargets, kindDef, parseContent, pinFor, refuseAgentOverPerson, refuseDeleted } from "./notebook-rules";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

/** Notebook cells: ordered, kind-validated, pinned to a commit when they read evidence; every change a revision. */

const AfterCell = CellId.nullable().optional().describe("Place it right after this cell; null puts it first; absent, last.");

export interface NewCell {
  investigationId: string;
  kind: string;
  content: unknown;
  name?: string | null;
  commitId?: string;
  afterCellId?: string | null;
  author: Author;
}

/**
 * Adds one cell inside the caller's write transaction (hypotheses.record and findings.record add
 * theirs in the same one as their record).
 */
export function addCellIn(db: SqliteDatabase, draft: NewCell): Cell {
  const inv = getInvestigation(db, draft.investigationId);
  if (countCells(db, inv.investigation_id, true) >= DOCUMENT_LIMITS.cells) {
    // Bounded so that every notebook can be exported whole (deleted cells count: they are restorable).
    throw new EmberscopeError("INVALID_ARGUMENTS", `An investigation holds at most ${DOCUMENT_LIMITS.cells} cells, deleted ones included.`, { details: { argument: "investigation_id", limit: DOCUMENT_LIMITS.cells } });
  }
  const def = kindDef(draft.kind);
  const content = parseContent(def, draft.content);
  const commitId = pinFor(db, def, draft.commitId);
  checkCellTargets(db, inv.investigation_id, def, content, commitId);
  const name = draft.name ?? null;
  if (name) {
    const holder = cellNamed(db, inv.investigation_id, name);
    if (holder) throw nameTaken(inv.investigation_id, name, holder.cell_id);
  }
  const slot = slotAfter(db, inv.investigation_id, draft.afterCellId);
  const now = nowIso();
  const cell = {
    cell_id: newId("cell"),
    investigation_id: inv.investigation_id,
    position: positionBetween(slot.before, slot.after),
    kind: def.kind,
    name,
    content,
    commit_id: commitId,
    created_by: draft.author,
    deleted: false,
    revision: 1,
    created_at: now,
    updated_at: now,
  } as Cell;
  insertCell(db, cell);
  return cell;
}

export const addCell = defineService({
  name: "cells.add",
  summary: "Add a cell to an investigation's notebook; evidence cells pin the HEAD of this moment unless given a commit.",
  kind: "mutation",
  input: z
    .object({
      investigation_id: InvestigationId,
      kind: CellKind,
      content: z.record(z.string(), z.unknown()).describe("The kind's content (docs/notebooks.md lists each kind's fields)."),
      name: CellName.nullable().optional().describe("A name later SQL cells read as a table (unique in the investigation)."),
      commit_id: CommitId.optional().describe("The commit an evidence cell reads; HEAD's id at this moment when absent."),
      after_cell_id: AfterCell,
    })
    .strict(),
  output: Cell,
  handler: (input, { ws, ctx }) =>
    writeTransaction(ws.db, () =>
      addCellIn(ws.db, { investigationId: input.investigation_id, kind: input.kind, content: input.content, name: input.name, commitId: input.commit_id, afterCellId: input.after_cell_id, author: authorFor(ctx) }),
    ),
});

export const showCell = defineService({
  name: "cells.get",
  summary: "Show one cell as it is now (deleted ones too).",
  kind: "query",
  input: z.object({ cell_id: CellId }).strict(),
  output: Cell,
  handler: (input, { ws }) => getCell(ws.db, input.cell_id),
});

export const changeCell = defineService({
  name: "cells.update",
  summary: "Edit a cell's content or name, or re-pin it to another concrete commit, by compare-and-set on its revision.",
  kind: "mutation",
  input: z
    .object({
      cell_id: CellId,
      expected_revision: Revision,
      content: z.record(z.string(), z.unknown()).optional().describe("The whole new content of the cell's kind."),
      name: CellName.nullable().optional().describe("A new name, or null to clear it."),
      commit_id: CommitId.optional().describe('Re-pin to this commit ("re-pin to HEAD" passes HEAD\'s id).'),
    })
    .strict(),
  output: Cell,
  handler: (input, { ws, ctx }) =>
    updateCell(ws.db, input.cell_id, input.expected_revision, (current) => {
      refuseDeleted(current);
      refuseAgentOverPerson(ctx, current, "cell", { cell_id: current.cell_id });
      const def = kindDef(current.kind);
      const content = input.content !== undefined ? parseContent(def, input.content) : current.content;
      const commitId = input.commit_id !== undefined ? pinFor(ws.db, def, input.commit_id) : current.commit_id;
      checkCellTargets(ws.db, current.investigation_id, def, content, commitId);
      const name = input.name !== undefined ? input.name : current.name;
      if (name && name !== current.name) {
        const holder = cellNamed(ws.db, current.investigation_id, name, current.cell_id);
        if (holder) throw nameTaken(current.investigation_id, name, holder.cell_id);
      }
      return { content, commit_id: commitId, name } as Partial<Cell>;
    }),
});

export const moveCell = defineService({
  name: "cells.move",
  summary: "Move a cell to right after another (null: first); one revision of the moved cell only.",
  kind: "mutation",
  input: z.object({ cell_id: CellId, expected_revision: Revision, after_cell_id: CellId.nullable().describe("The cell it goes after; null puts it first.") }).strict(),
  output: Cell,
  handler: (input, { ws, ctx }) =>
    updateCell(ws.db, input.cell_id, input.expected_revision, (current) => {
      refuseDeleted(current);
      refuseAgentOverPerson(ctx, current, "cell", { cell_id: current.cell_id });
      if (input.after_cell_id === current.cell_id) throw new EmberscopeError("INVALID_ARGUMENTS", "A cell cannot be moved after itself.", { details: { argument: "after_cell_id" } });
      const slot = slotAfter(ws.db, current.investigation_id, input.after_cell_id, current.cell_id);
      return { position: positionBetween(slot.before, slot.after) };
    }),
});

export const deleteCell = defineService({
  name: "cells.delete",
  summary: "Delete a cell (soft: it keeps its place and revisions, and cells.restore brings it back).",
  kind: "mutation",
  input: z.object({ cell_id: CellId, expected_revision: Revision }).strict(),
  output: Cell,
  handler: (input, { ws, ctx }) =>
    updateCell(ws.db, input.cell_id, input.expected_revision, (current) => {
      refuseDeleted(current);
      refuseAgentOverPerson(ctx, current, "cell", { cell_id: current.cell_id });
      return { deleted: true };
    }),
});

export const restoreCell = defineService({
  name: "cells.restore",
  summary: "Undo a cell's deletion: it returns where it was, unless its name was taken meanwhile (CELL_NAME_TAKEN).",
  kind: "mutation",
  input: z.object({ cell_id: CellId, expected_revision: Revision }).strict(),
  output: Cell,
  handler: (input, { ws, ctx }) =>
    updateCell(ws.db, input.cell_id, input.expected_revision, (current) => {
      refuseAgentOverPerson(ctx, current, "cell", { cell_id: current.cell_id });
      if (!current.deleted) throw new EmberscopeError("INVALID_ARGUMENTS", "The cell is not deleted.", { details: { argument: "cell_id", cell_id: current.cell_id } });
      if (current.name) {
        const holder = cellNamed(ws.db, current.investigation_id, current.name, current.cell_id);
        if (holder) throw nameTaken(current.investigation_id, current.name, holder.cell_id);
      }
      return { deleted: false };
    }),
});

export const listCells = defineService({
  name: "cells.list",
  summary: "List an investigation's cells in notebook order, a page at a time.",
  kind: "query",
  input: z.object({ investigation_id: InvestigationId, include_deleted: z.boolean().default(false), limit: Limit, cursor: CursorArg }).strict(),
  output: pageOf(Cell),
  handler: (input, { ws }) => {
    getInvestigation(ws.db, input.investigation_id);
    const filters = { investigation_id: input.investigation_id, include_deleted: input.include_deleted };
    return keysetPage({
      ws,
      binding: { query: "cells.list", filters, order: "position, id", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "cells.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listCellRows(ws.db, input.investigation_id, { includeDeleted: input.include_deleted, after, limit }),
      keyOf: (cell): [string, string] => [cell.position, cell.cell_id],
    });
  },
});

export const listCellRevisions = defineService({
  name: "cells.revisions",
  summary: "Every revision of a cell, newest first (after a conflict, both versions are here to take either).",
  kind: "query",
  input: z.object({ cell_id: CellId, limit: Limit, cursor: CursorArg }).strict(),
  output: pageOf(Cell),
  handler: (input, { ws }) => {
    getCell(ws.db, input.cell_id);
    const filters = { cell_id: input.cell_id };
    return keysetPage({
      ws,
      binding: { query: "cells.revisions", filters, order: "revision desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "cells.revisions", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [number] | null, limit) => cellRevisions(ws.db, input.cell_id, after?.[0] ?? null, limit),
      keyOf: (cell): [number] => [cell.revision],
    });
  },
});

/** The note and query cells an agent adds (through MCP add_cell, server/services/notebook-entries.ts): cells.add with one kind's fields. */
export const addNoteCell = defineService({
  name: "cells.add_note",
  summary: "Add a markdown note to an investigation's notebook.",
  kind: "mutation",
  input: z.object({ investigation_id: InvestigationId, markdown: z.string().min(1).max(100_000), after_cell_id: AfterCell }).strict(),
  output: z.object({ cell: Cell }),
  handler: (input, { ws, ctx }) => ({
    cell: writeTransaction(ws.db, () => addCellIn(ws.db, { investigationId: input.investigation_id, kind: "note", content: { markdown: input.markdown }, afterCellId: input.after_cell_id, author: authorFor(ctx) })),
  }),
});

export const addQueryCell = defineService({
  name: "cells.add_query",
  summary: "Add a SQL cell over a pinned commit's evidence tables (and earlier named cells); the page runs it, the server stores it.",
  kind: "mutation",
  input: z
    .object({
      investigation_id: InvestigationId,
      sql: z.string().min(1).max(20_000),
      name: CellName.nullable().optional().describe("A name later SQL cells read as a table (unique in the investigation)."),
      commit_id: CommitId.optional().describe("The commit it reads; HEAD's id at this moment when absent."),
      chart: z.object({ kind: z.enum(["bar", "line"]), x: z.string().min(1).max(256).optional(), y: z.string().min(1).max(256).optional() }).strict().optional(),
      after_cell_id: AfterCell,
    })
    .strict(),
  output: z.object({ cell: Cell }),
  handler: (input, { ws, ctx }) => ({
    cell: writeTransaction(ws.db, () =>
      addCellIn(ws.db, {
        investigationId: input.investigation_id,
        kind: "sql",
        content: { sql: input.sql, view: input.chart ? { chart: input.chart } : {} },
        name: input.name,
        commitId: input.commit_id,
        afterCellId: input.after_cell_id,
        author: authorFor(ctx),
      }),
    ),
  }),
});
