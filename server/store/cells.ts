import { EmberscopeError } from "../domain/errors";
import type { Cell } from "../domain/notebook";
import type { SqliteDatabase } from "./control-store";
import { authorOf, type AuthorColumns } from "./investigations";
import { compareAndSet, isUniqueViolation, listRevisions, recordRevision, type CasSpec } from "./revisions";

/** Notebook cells in the control store (content as JSON text, validated by the services first). */

interface CellRow extends AuthorColumns {
  id: string;
  investigation_id: string;
  position: string;
  kind: string;
  name: string | null;
  content: string;
  commit_id: string | null;
  deleted: number;
  revision: number;
  created_at: string;
  updated_at: string;
}

function fromRow(row: CellRow): Cell {
  return {
    cell_id: row.id,
    investigation_id: row.investigation_id,
    position: row.position,
    kind: row.kind,
    name: row.name,
    content: JSON.parse(row.content),
    commit_id: row.commit_id,
    created_by: authorOf(row),
    deleted: row.deleted === 1,
    revision: row.revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  } as Cell;
}

const REVISIONS = { table: "cell_revisions", key: "cell_id" };

export function cellNotFound(id: string, investigationId?: string): EmberscopeError {
  return new EmberscopeError("CELL_NOT_FOUND", investigationId ? "The investigation has no cell with that id." : "No notebook cell has that id.", {
    details: { cell_id: id, ...(investigationId ? { investigation_id: investigationId } : {}) },
    recovery: investigationId ? { operation: "cells.list", arguments: { investigation_id: investigationId }, safe_to_repeat: true } : { operation: "investigations.list", arguments: {}, safe_to_repeat: true },
  });
}

export function findCell(db: SqliteDatabase, id: string): Cell | null {
  const row = db.prepare("SELECT * FROM cells WHERE id = ?").get(id) as CellRow | undefined;
  return row ? fromRow(row) : null;
}

export function getCell(db: SqliteDatabase, id: string): Cell {
  const found = findCell(db, id);
  if (!found) throw cellNotFound(id);
  return found;
}

/** The live cell of the investigation holding `name`, if any (other than `exceptId`). */
export function cellNamed(db: SqliteDatabase, investigationId: string, name: string, exceptId: string | null = null): Cell | null {
  const row = db.prepare("SELECT * FROM cells WHERE investigation_id = ? AND name = ? AND deleted = 0 AND id IS NOT ?").get(investigationId, name, exceptId) as CellRow | undefined;
  return row ? fromRow(row) : null;
}

export function nameTaken(investigationId: string, name: string, holder: string | null): EmberscopeError {
  return new EmberscopeError("CELL_NAME_TAKEN", `Another cell of the investigation is already named ${name}.`, {
    details: { investigation_id: investigationId, name, cell_id: holder },
    recovery: { operation: "cells.list", arguments: { investigation_id: investigationId }, safe_to_repeat: true },
  });
}

/** A unique name index refusal (a concurrent writer took the name) as CELL_NAME_TAKEN. */
function guardNames<T>(investigationId: string, name: string | null, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (isUniqueViolation(error) && name && /name/.test(String((error as Error).message))) throw nameTaken(investigationId, name, null);
    throw error;
  }
}

export function insertCell(db: SqliteDatabase, cell: Cell): void {
  guardNames(cell.investigation_id, cell.name, () =>
    db
      .prepare(
        `INSERT INTO cells (id, investigation_id, position, kind, name, content, commit_id, created_by_actor, created_by_client, deleted, revision, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(cell.cell_id, cell.investigation_id, cell.position, cell.kind, cell.name, JSON.stringify(cell.content), cell.commit_id, cell.created_by.actor, cell.created_by.client, cell.deleted ? 1 : 0, cell.revision, cell.created_at, cell.updated_at),
  );
  recordRevision(db, REVISIONS, cell.cell_id, cell);
}

const CAS: CasSpec<Cell> = {
  noun: "cell",
  idKey: "cell_id",
  revisions: REVISIONS,
  read: getCell,
  write: (db, next, expected) =>
    guardNames(next.investigation_id, next.name, () =>
      db
        .prepare("UPDATE cells SET position = ?, name = ?, content = ?, commit_id = ?, deleted = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?")
        .run(next.position, next.name, JSON.stringify(next.content), next.commit_id, next.deleted ? 1 : 0, next.revision, next.updated_at, next.cell_id, expected).changes,
    ),
  reread: (current) => ({ operation: "cells.get", arguments: { cell_id: current.cell_id }, safe_to_repeat: true }),
};

export type CellPatch = Partial<Pick<Cell, "position" | "name" | "content" | "commit_id" | "deleted">>;

export function updateCell(db: SqliteDatabase, id: string, expected: number, change: (current: Cell) => CellPatch): Cell {
  return compareAndSet(db, CAS, id, expected, change as (current: Cell) => Partial<Cell>);
}

export function cellRevisions(db: SqliteDatabase, id: string, beforeRevision: number | null, limit: number): Cell[] {
  return listRevisions<Cell>(db, REVISIONS, id, beforeRevision, limit);
}

/** Cells in notebook order (position, then id), strictly after the key `after` when given. */
export function listCellRows(db: SqliteDatabase, investigationId: string, options: { includeDeleted: boolean; after: [string, string] | null; limit: number }): Cell[] {
  const rows = db
    .prepare(
      `SELECT * FROM cells WHERE investigation_id = @inv AND (@all = 1 OR deleted = 0)
         AND (@after_pos IS NULL OR (position, id) > (@after_pos, @after_id))
       ORDER BY position, id LIMIT @limit`,
    )
    .all({ inv: investigationId, all: options.includeDeleted ? 1 : 0, after_pos: options.after?.[0] ?? null, after_id: options.after?.[1] ?? null, limit: options.limit }) as CellRow[];
  return rows.map(fromRow);
}

export function countCells(db: SqliteDatabase, investigationId: string, includeDeleted: boolean): number {
  return (db.prepare("SELECT count(*) AS n FROM cells WHERE investigation_id = ? AND (? = 1 OR deleted = 0)").get(investigationId, includeDeleted ? 1 : 0) as { n: number }).n;
}

/**
 * The positions a new place lies between. `afterCellId` null: before every cell; undefined: after
 * every cell; an id: right after that cell. Deleted cells count (they keep their place), so a
 * key made here never equals a deleted cell's and a restored cell returns where it was.
 */
export function slotAfter(db: SqliteDatabase, investigationId: string, afterCellId: string | null | undefined, movingId: string | null = null): { before: string | null; after: string | null } {
  const first = db.prepare("SELECT position FROM cells WHERE investigation_id = ? AND id IS NOT ? ORDER BY position LIMIT 1");
  const last = db.prepare("SELECT position FROM cells WHERE investigation_id = ? AND id IS NOT ? ORDER BY position DESC LIMIT 1");
  if (afterCellId === undefined) return { before: (last.get(investigationId, movingId) as { position: string } | undefined)?.position ?? null, after: null };
  if (afterCellId === null) return { before: null, after: (first.get(investigationId, movingId) as { position: string } | undefined)?.position ?? null };
  const anchor = db.prepare("SELECT position FROM cells WHERE id = ? AND investigation_id = ?").get(afterCellId, investigationId) as { position: string } | undefined;
  if (!anchor) throw cellNotFound(afterCellId, investigationId);
  const next = db.prepare("SELECT position FROM cells WHERE investigation_id = ? AND position > ? AND id IS NOT ? ORDER BY position LIMIT 1").get(investigationId, anchor.position, movingId) as { position: string } | undefined;
  return { before: anchor.position, after: next?.position ?? null };
}
