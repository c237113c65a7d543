import { describe, expect, it } from "vitest";
import { TABLES, type ColumnSpec } from "../../analysis/evidence/schema";
import { neededColumns } from "../../components/export-viewer/columns";

const names = (spec: readonly ColumnSpec[]) => spec.map((c) => c.name);
const samples = TABLES.samples as readonly ColumnSpec[];

/** The offline viewer decodes only the columns a query can read (components/export-viewer/columns.ts). */
describe("the columns an offline query needs", () => {
  it("are those the query names, at least one for a count, and all of them for a star", () => {
    expect(names(neededColumns("SELECT sum(value) FROM samples WHERE metric_id = 1", samples)).sort()).toEqual(["metric_id", "value"]);
    expect(neededColumns("SELECT count(*) AS n FROM samples", samples)).toHaveLength(1);
    for (const sql of ["SELECT * FROM samples", "SELECT DISTINCT * FROM samples", "SELECT s.* FROM samples s", "SELECT 1, * FROM samples", "SELECT COLUMNS('.*_id') FROM samples"]) {
      expect(names(neededColumns(sql, samples)), sql).toEqual(names(samples));
    }
    expect(names(neededColumns(null, samples))).toEqual(names(samples));
  });
});
