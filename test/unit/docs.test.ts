import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GENERATED_DOCS } from "../../scripts/generate-docs";
import { ERROR_CATALOG } from "../../server/domain/errors";

const root = path.resolve(import.meta.dirname, "..", "..");

describe("generated docs", () => {
  it.each(Object.keys(GENERATED_DOCS))("%s matches the code it is generated from (run `npm run docs`)", (file) => {
    expect(readFileSync(path.join(root, file), "utf8")).toBe(GENERATED_DOCS[file]());
  });

  it("docs/errors.md lists every code in the catalog", () => {
    const text = readFileSync(path.join(root, "docs", "errors.md"), "utf8");
    for (const code of Object.keys(ERROR_CATALOG)) expect(text).toContain(`| \`${code}\` |`);
  });
});
