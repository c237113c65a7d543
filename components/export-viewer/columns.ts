import type { ColumnSpec } from "../../analysis/evidence/schema";

/** A query that selects every column (`*`, `t.*`, COLUMNS(…)) needs them all. */
const EVERY_COLUMN = /\bselect\s+(?:distinct\s+)?\*|,\s*\*|\.\*|\bcolumns\s*\(/i;

/**
 * The columns of a table a query can read: those whose names it mentions as words (a superset:
 * `name` of frames is kept when only metrics' is used), all of them for a star; at least one, so
 * `count(*)` has its rows.
 */
export function neededColumns(sql: string | null, spec: readonly ColumnSpec[]): ColumnSpec[] {
  if (sql === null || EVERY_COLUMN.test(sql)) return [...spec];
  const words = new Set(sql.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []);
  const named = spec.filter((c) => words.has(c.name.toLowerCase()));
  return named.length ? named : spec.slice(0, 1);
}
