import { z } from "zod";
import { TABLES } from "../../evidence/schema";
import { calltreeCell } from "./calltree";
import { compareCell } from "./compare";
import { criticalPathCell } from "./critical-path";
import { experimentCell } from "./experiment";
import type { CellKindDef } from "./define";
import { findingCell } from "./finding";
import { flameCell } from "./flame";
import { hypothesisCell } from "./hypothesis";
import { noteCell } from "./note";
import { sandwichCell } from "./sandwich";
import { sqlCell } from "./sql";
import { traceCell } from "./trace";

export { defineCellKind, type CellKindDef } from "./define";

/**
 * Every cell kind, in the order a "new cell" menu offers them: the one registry the server's
 * validation, the notebook format, the docs and the page's renderers read. A new kind is a file
 * in this folder added here (and its renderer in components/notebook/cells/).
 */
export const CELL_KINDS = [noteCell, sqlCell, flameCell, sandwichCell, calltreeCell, traceCell, compareCell, criticalPathCell, experimentCell, hypothesisCell, findingCell] as const;

export type CellKindName = (typeof CELL_KINDS)[number]["kind"];
export const CELL_KIND_NAMES = CELL_KINDS.map((k) => k.kind) as [CellKindName, ...CellKindName[]];
export const CellKind = z.enum(CELL_KIND_NAMES);

export function cellKind(kind: string): CellKindDef | undefined {
  return (CELL_KINDS as readonly CellKindDef[]).find((k) => k.kind === kind);
}

type Body<D> = D extends CellKindDef<infer K, infer C> ? { kind: K; content: z.output<C> } : never;
/** A cell's kind with its content, discriminated by kind. */
export type CellBody = Body<(typeof CELL_KINDS)[number]>;
export type CellContent<K extends CellKindName> = Extract<CellBody, { kind: K }>["content"];

/** `{ kind, content }` of every kind, as one schema (the notebook format and the services' outputs). */
export const CellBodySchema = z.discriminatedUnion(
  "kind",
  CELL_KINDS.map((k) => z.object({ kind: z.literal(k.kind), content: k.content })) as unknown as [
    z.ZodObject<{ kind: z.ZodLiteral<CellKindName>; content: z.ZodType }>,
    ...z.ZodObject<{ kind: z.ZodLiteral<CellKindName>; content: z.ZodType }>[],
  ],
) as unknown as z.ZodType<CellBody>;

/**
 * Names of the evidence tables: a SQL cell of that name would hide the table from every later
 * cell (`FROM samples`), so none may take one.
 */
export const RESERVED_CELL_NAMES: readonly string[] = Object.keys(TABLES);

/** A cell's name, read by later SQL cells as a table: a lower-case SQL identifier. */
export const CellName = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a cell name is a lower-case identifier: a letter or _, then letters, digits or _ (at most 63)")
  .refine((name) => !RESERVED_CELL_NAMES.includes(name), { message: `an evidence table's name is reserved (${RESERVED_CELL_NAMES.join(", ")})` });
