import { z } from "zod";
import { defineCellKind } from "./define";

/** A column of the cell's result, by name. */
const Column = z.string().min(1).max(256);

/**
 * SQL over the cell's pinned commit, run by DuckDB-WASM in the page (never by the server). A
 * named SQL cell is read by later cells as a table of that name. `view.chart` is how the result
 * is drawn; absent, it is a table.
 */
export const sqlCell = defineCellKind({
  kind: "sql",
  title: "SQL",
  readsEvidence: true,
  content: z
    .object({
      sql: z.string().max(20_000),
      view: z
        .object({
          chart: z
            .object({
              kind: z.enum(["bar", "line"]),
              x: Column.optional().describe("The label (bar) or order (line) column."),
              y: Column.optional().describe("The numeric column."),
            })
            .strict()
            .optional(),
        })
        .strict()
        .default({})
        .describe("How the result is drawn: { chart?: { kind: bar or line, x?, y? } } (columns by name); a table when there is no chart."),
    })
    .strict(),
});
