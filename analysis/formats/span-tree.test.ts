import { describe, expect, it } from "vitest";
import { EvidenceBuilder, MemorySink } from "../evidence/builder";
import { DraftedSpans } from "./span-tree";

/** Drafts spans of the given keys (key, parent key, references), places them, and returns each span's parent's key and the references found. */
async function linked(spans: [string | null, string | null, string[]?][]) {
  const sink = new MemorySink();
  const builder = new EvidenceBuilder(sink);
  const track = builder.track({ processId: "svc", kind: "service" });
  const drafted = new DraftedSpans(builder);
  for (const [key, parentKey, refs] of spans) drafted.add({ key, parentKey, refs: refs ?? [], trackId: track, name: key ?? "(none)", category: "span", status: "unset", args: "{}" });
  const found: [number | undefined, number][] = [];
  await drafted.place({ prefix: "T", refersTo: "parents" }, (i) => ({ startNs: i, durNs: 1 }), (from, i) => found.push([from, i]));
  const summary = await builder.finish();
  const rows = sink.tables.spans;
  const nameOf = new Map(rows.map((r) => [r.span_id, r.name]));
  return { parents: rows.map((r) => (r.parent_span_id === null ? null : nameOf.get(r.parent_span_id))), depths: rows.map((r) => r.depth), found, limits: summary.limitations.filter((l) => l.code.startsWith("T_")).map((l) => [l.code, l.count]) };
}

describe("DraftedSpans", () => {
  it("links parents by key whatever their order, keys of hex span ids and of any other text alike", async () => {
    const hex = "4bf92f3577b34da6a3ce929d0e0e4736";
    const result = await linked([
      [`${hex}/00f067aa0ba902b7`, `${hex}/ffffffffffffffff`],
      [`${hex}/ffffffffffffffff`, null],
      ["t/not-hex", `${hex}/00f067aa0ba902b7`],
      ["t/NOT-HEX-child", "t/not-hex"],
      // Upper case is other text: not the span of the lowercase id.
      [`${hex}/child-of-upper`, `${hex}/00F067AA0BA902B7`],
      // Same span id, other trace: another span.
      [`other/00f067aa0ba902b7`, `${hex}/ffffffffffffffff`, [`${hex}/00f067aa0ba902b7`, "t/not-hex", "missing/0000000000000000", "missing"]],
    ]);
    expect(result.parents).toEqual([`${hex}/ffffffffffffffff`, null, `${hex}/00f067aa0ba902b7`, "t/not-hex", null, `${hex}/ffffffffffffffff`]);
    expect(result.depths).toEqual([1, 0, 2, 3, 0, 1]);
    expect(result.found).toEqual([[0, 5], [2, 5], [undefined, 5], [undefined, 5]]);
    expect(result.limits).toEqual([["T_PARENT_MISSING", 1]]);
  });

  it("refers to the first of a duplicated key", async () => {
    const result = await linked([
      ["a/0000000000000001", null],
      ["a/0000000000000001", null],
      ["x", null],
      ["x", null],
      ["b/0000000000000002", "a/0000000000000001"],
      ["c", "x"],
    ]);
    expect(result.parents).toEqual([null, null, null, null, "a/0000000000000001", "x"]);
    expect(result.depths).toEqual([0, 0, 0, 0, 1, 1]);
    expect(result.limits).toEqual([["T_DUPLICATE_SPAN", 2]]);
  });
});
