/**
 * A skeleton of text for matching: letters of other scripts that look like Latin ones (Cyrillic
 * "о", Greek "ο", fullwidth "ｏ") become those Latin letters, so "іgnоrе" reads as "ignore". Our
 * own table for the scripts attackers use to spoof English words — Cyrillic, Greek, fullwidth and
 * a few Latin and Armenian look-alikes — mapping by appearance, upper and lower case apart
 * (Cyrillic "Н" looks like "H", its lower case "н" like a small capital "H"). Pure.
 */

const PAIRS: readonly (readonly [string, string])[] = [
  // Cyrillic capitals
  ["А", "A"], ["В", "B"], ["Е", "E"], ["Ѐ", "E"], ["Ё", "E"], ["Ѕ", "S"], ["І", "I"], ["Ї", "I"], ["Ј", "J"], ["К", "K"],
  ["М", "M"], ["Н", "H"], ["О", "O"], ["Р", "P"], ["С", "C"], ["Т", "T"], ["У", "Y"], ["Х", "X"], ["Ү", "Y"], ["Һ", "H"],
  ["Ӏ", "I"], ["Ԛ", "Q"], ["Ԝ", "W"], ["Ԁ", "D"], ["Ь", "b"], ["З", "3"],
  // Cyrillic small letters
  ["а", "a"], ["в", "b"], ["е", "e"], ["ѐ", "e"], ["ё", "e"], ["ѕ", "s"], ["і", "i"], ["ї", "i"], ["ј", "j"], ["к", "k"],
  ["м", "m"], ["н", "h"], ["о", "o"], ["р", "p"], ["с", "c"], ["т", "t"], ["у", "y"], ["х", "x"], ["ү", "y"], ["һ", "h"],
  ["ӏ", "l"], ["ԛ", "q"], ["ԝ", "w"], ["ԁ", "d"], ["ь", "b"], ["ѵ", "v"], ["ɡ", "g"], ["ԍ", "g"], ["п", "n"], ["г", "r"],
  // Greek capitals
  ["Α", "A"], ["Β", "B"], ["Ε", "E"], ["Ζ", "Z"], ["Η", "H"], ["Ι", "I"], ["Κ", "K"], ["Μ", "M"], ["Ν", "N"], ["Ο", "O"],
  ["Ρ", "P"], ["Τ", "T"], ["Υ", "Y"], ["Χ", "X"], ["Ϲ", "C"], ["Ϳ", "J"],
  // Greek small letters
  ["α", "a"], ["β", "b"], ["γ", "y"], ["ε", "e"], ["η", "n"], ["ι", "i"], ["κ", "k"], ["ν", "v"], ["ο", "o"], ["ρ", "p"],
  ["τ", "t"], ["υ", "u"], ["χ", "x"], ["ω", "w"], ["ϲ", "c"], ["ϳ", "j"], ["ς", "s"], ["μ", "u"], ["ϵ", "e"],
  // Latin and Armenian look-alikes
  ["ı", "i"], ["ȷ", "j"], ["ɑ", "a"], ["ɩ", "i"], ["ʟ", "l"], ["ℓ", "l"], ["օ", "o"], ["ս", "u"], ["հ", "h"], ["ո", "n"],
  ["ց", "g"], ["ք", "p"],
];

const TABLE = new Map<number, string>(PAIRS.map(([from, to]) => [from.codePointAt(0)!, to]));
// Fullwidth ASCII (U+FF01–U+FF5E) is ASCII shifted by 0xFEE0; the ideographic space is a space.
for (let cp = 0xff01; cp <= 0xff5e; cp++) TABLE.set(cp, String.fromCharCode(cp - 0xfee0));
TABLE.set(0x3000, " ");

/** Characters the table maps (for a quick test before the per-character walk). */
const MAPPED = new RegExp(`[${[...TABLE.keys()].map((cp) => `\\u{${cp.toString(16)}}`).join("")}]`, "u");

/** The text with look-alike letters replaced by the Latin letters they imitate (case kept). */
export function latinSkeleton(text: string): string {
  if (!MAPPED.test(text)) return text;
  let out = "";
  for (const ch of text) out += TABLE.get(ch.codePointAt(0)!) ?? ch;
  return out;
}
