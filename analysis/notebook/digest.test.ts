import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalRowsJson, rowsDigest, ROWS_DIGEST_PATTERN } from "./digest";

describe("the rows digest of a query_result reference", () => {
  it("is the SHA-256 of the rows' canonical JSON: keys sorted, integers plain whatever their type", async () => {
    const rows = [
      { v: 9007199254740993n, name: "main", share: 0.25, at: new Date(Date.UTC(2026, 0, 2)) },
      { name: "run", v: 12, share: null, at: null },
    ];
    const expected = '[{"at":"2026-01-02T00:00:00.000Z","name":"main","share":0.25,"v":9007199254740993},{"at":null,"name":"run","share":null,"v":12}]';
    expect(canonicalRowsJson(rows)).toBe(expected);
    const digest = await rowsDigest(rows);
    expect(digest).toBe(`sha256:${createHash("sha256").update(expected).digest("hex")}`);
    expect(digest).toMatch(ROWS_DIGEST_PATTERN);
  });

  it("gives one digest for a BigInt and a number of the same value, and another for other rows", async () => {
    expect(await rowsDigest([{ n: 12n }])).toBe(await rowsDigest([{ n: 12 }]));
    expect(await rowsDigest([{ n: 12 }])).not.toBe(await rowsDigest([{ n: 13 }]));
    expect(await rowsDigest([])).toBe(`sha256:${createHash("sha256").update("[]").digest("hex")}`);
  });
});
