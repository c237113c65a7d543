import { describe, expect, it } from "vitest";
import { TextTable, textHash } from "./text-table";

describe("TextTable", () => {
  it("gives each distinct text one id, in order of first use, and the same id again, across the table's growth", () => {
    const table = new TextTable();
    const texts = Array.from({ length: 200_000 }, (_, i) => `module${i % 97}.function_${i}`);
    expect(texts.map((t) => table.id(t))).toEqual(texts.map((_, i) => i));
    expect(table.size).toBe(texts.length);
    // Asked again (as new strings, not the same objects), in another order.
    for (let i = texts.length - 1; i >= 0; i -= 7) expect(table.id(`module${i % 97}.function_${i}`)).toBe(i);
    for (let i = 0; i < texts.length; i += 1013) expect(table.text(i)).toBe(texts[i]);
    expect(table.size).toBe(texts.length);
  });

  it("keeps apart texts whose hashes collide", () => {
    // A birthday search for real collisions of the table's 32-bit hash among generated names.
    const byHash = new Map<number, string>();
    const pairs: [string, string][] = [];
    for (let i = 0; pairs.length < 3; i++) {
      const text = `fn_${i}`;
      const other = byHash.get(textHash(text));
      if (other !== undefined) pairs.push([other, text]);
      else byHash.set(textHash(text), text);
    }
    const table = new TextTable();
    for (const [a, b] of pairs) {
      expect(textHash(a)).toBe(textHash(b));
      const idA = table.id(a);
      const idB = table.id(b);
      expect(idB).not.toBe(idA);
      expect([table.text(idA), table.text(idB)]).toEqual([a, b]);
      expect([table.id(a), table.id(b)]).toEqual([idA, idB]);
    }
  });

  it("keeps any text exactly: empty, Latin-1 past ASCII, past U+00FF, surrogate pairs and lone surrogates, and long texts", () => {
    const texts = [
      "",
      "a",
      "\u00e9t\u00e9",
      "\u0080\u009f\u00ff",
      "\u0161",
      "\u0161\u0000",
      "f\u00fc\u00dfe::\u6f22\u5b57()",
      "\ud83d\udd25 hot",
      "\ud800 lone",
      "x".repeat(10_000),
      "\u00ff".repeat(9_999),
      "\u4e00".repeat(5_000) + "z",
    ];
    const table = new TextTable();
    const ids = texts.map((t) => table.id(t));
    expect(new Set(ids).size).toBe(texts.length);
    expect(ids.map((id) => table.text(id))).toEqual(texts);
    expect(texts.map((t) => table.id(t))).toEqual(ids);
    // The same characters, one of them past U+00FF, are another text.
    expect(table.id("\u00e9t\u0117")).toBe(texts.length);
  });

  it("refuses an id it never gave, and a new text once sealed, still giving the texts it has", () => {
    const table = new TextTable();
    table.id("only");
    expect(() => table.text(1)).toThrow(RangeError);
    expect(() => table.text(-1)).toThrow(RangeError);
    table.seal();
    expect(table.text(0)).toBe("only");
    expect(() => table.id("only")).toThrow(/sealed/);
  });
});
