import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, decodeCursor, encodeCursor, type CursorBinding } from "../../server/domain/cursor";
import { EmberscopeError } from "../../server/domain/errors";

const key = randomBytes(32);
const binding: CursorBinding = { query: "runs.list", filters: { kind: "import", status: undefined }, order: "created_at desc", commit: "cmt_a" };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof EmberscopeError ? error.code : "NOT_TYPED";
  }
  return undefined;
}

describe("cursor codec", () => {
  it("round-trips the keyset position for the same binding, whatever the filter key order", () => {
    const cursor = encodeCursor(key, binding, ["2026-01-01", "run_x"]);
    expect(decodeCursor(key, cursor, { ...binding, filters: { status: undefined, kind: "import" } })).toEqual(["2026-01-01", "run_x"]);
  });

  it("is opaque: the cursor text does not read as the filters", () => {
    const cursor = encodeCursor(key, binding, [1]);
    expect(cursor).not.toContain("import");
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it.each([
    ["another query", { ...binding, query: "artifacts.list" }],
    ["other filters", { ...binding, filters: { kind: "capture" } }],
    ["another ordering", { ...binding, order: "created_at asc" }],
    ["another commit", { ...binding, commit: "cmt_b" }],
  ])("fails with STALE_CURSOR when reused for %s", (_name, other) => {
    const cursor = encodeCursor(key, binding, [1]);
    expect(codeOf(() => decodeCursor(key, cursor, other))).toBe("STALE_CURSOR");
  });

  it("fails with STALE_CURSOR when altered, truncated or from another workspace", () => {
    const cursor = encodeCursor(key, binding, [1]);
    const [body, tag] = cursor.split(".");
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), after: [999] })).toString("base64url");
    expect(codeOf(() => decodeCursor(key, `${forged}.${tag}`, binding))).toBe("STALE_CURSOR");
    expect(codeOf(() => decodeCursor(key, body, binding))).toBe("STALE_CURSOR");
    expect(codeOf(() => decodeCursor(key, "not a cursor", binding))).toBe("STALE_CURSOR");
    expect(codeOf(() => decodeCursor(randomBytes(32), cursor, binding))).toBe("STALE_CURSOR");
  });

  it("offers the restart recovery it is given", () => {
    try {
      decodeCursor(key, "x.y", binding, { operation: "runs.list", arguments: { limit: 5 }, safe_to_repeat: true });
      expect.unreachable();
    } catch (error) {
      expect((error as EmberscopeError).recovery).toEqual({ operation: "runs.list", arguments: { limit: 5 }, safe_to_repeat: true });
    }
  });

  it("canonical JSON sorts keys and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [2, { y: 1, x: 0 }] } })).toBe('{"a":{"c":[2,{"x":0,"y":1}]},"b":1}');
  });
});
