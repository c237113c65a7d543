import { describe, expect, it } from "vitest";
import { CELL_KINDS, CellBodySchema, CellName, cellKind } from "./index";

describe("the cell-kind registry", () => {
  it("registers each kind once, each with a strict content schema", () => {
    expect(CELL_KINDS.map((k) => k.kind)).toEqual(["note", "sql", "flame", "sandwich", "calltree", "trace", "compare", "critical_path", "experiment", "hypothesis", "finding"]);
    for (const def of CELL_KINDS) expect(def.content.safeParse({ unexpected: true }).success).toBe(false);
    expect(CELL_KINDS.filter((k) => k.readsEvidence).map((k) => k.kind)).toEqual(["sql", "flame", "sandwich", "calltree", "trace", "compare", "critical_path"]);
    expect(cellKind("poem")).toBeUndefined();
  });

  it("parses kind and content together, defaulting a SQL cell's view", () => {
    expect(CellBodySchema.parse({ kind: "sql", content: { sql: "SELECT 1" } })).toEqual({ kind: "sql", content: { sql: "SELECT 1", view: {} } });
    expect(CellBodySchema.safeParse({ kind: "flame", content: { run_id: "run_1", orientation: "sideways" } }).success).toBe(false);
    expect(cellKind("compare")!.runs!({ base_run_id: "run_a", candidate_run_id: "run_b" } as never)).toEqual(["run_a", "run_b"]);
    expect(CellBodySchema.safeParse({ kind: "critical_path", content: { run_id: "run_1", what_if: { node: "n2", duration_ms: -1 } } }).success).toBe(false);
    expect(CellBodySchema.parse({ kind: "critical_path", content: { run_id: "run_1", what_if: { node: "n2", duration_ms: 10 } } })).toEqual({ kind: "critical_path", content: { run_id: "run_1", what_if: { node: "n2", duration_ms: 10 } } });
  });

  it("a compare cell keeps each run's tracks in evidence.compare's three forms, and refuses anything else", () => {
    const content = { base_run_id: "run_a", candidate_run_id: "run_b", base_tracks: ["0123456789ab"], candidate_tracks: "busiest" };
    expect(CellBodySchema.parse({ kind: "compare", content })).toEqual({ kind: "compare", content });
    expect(CellBodySchema.parse({ kind: "compare", content: { ...content, base_tracks: "all" } }).content).toMatchObject({ base_tracks: "all" });
    for (const bad of [[], ["XYZ"], ["0123456789ab'--"], "every", 12, [null], Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(12, "0"))])
      expect(CellBodySchema.safeParse({ kind: "compare", content: { ...content, candidate_tracks: bad } }).success, JSON.stringify(bad).slice(0, 40)).toBe(false);
  });

  it("names are lower-case SQL identifiers that hide no evidence table", () => {
    expect(CellName.safeParse("hot_frames").success).toBe(true);
    expect(CellName.safeParse("_t2").success).toBe(true);
    for (const bad of ["Hot", "2hot", "hot-frames", "", "a".repeat(64), "samples", "frames", "spans"]) expect(CellName.safeParse(bad).success, bad).toBe(false);
  });
});
