/**
 * Neutralization of observed text that reads as instructions to an agent ("ignore previous
 * instructions…", fake role tags, "call tool X", in several languages). Profiles and traces are
 * observed data and may be hostile; such strings are replaced whole before they cross the MCP
 * boundary, and the caller reports how many fields were suppressed and where. Pure.
 *
 * Matching reads a normalized copy, never the text as shown: NFKC (fullwidth and other
 * compatibility forms), hidden characters removed (zero-width, bidi controls, soft hyphens,
 * variation selectors; Unicode tag characters read as the ASCII they hide), accents removed,
 * lower case, single spaces, look-alike letters of other scripts made Latin (confusables.ts),
 * spaced-out letters joined ("i g n o r e"), and digits read as letters ("1gn0r3").
 */

import { latinSkeleton } from "./confusables";
import { CALL_VERBS, COMPACT_RULES, LATIN_RULES, OTHER_SCRIPT_RULES, TRIGGER_PREFIX, TRIGGER_WORDS } from "./instruction-rules";

/** Characters that hide or reorder text, and C0/C1 controls (tab, line feed and carriage return stay). */
const INVISIBLE =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}\u{1d173}-\u{1d17a}]/gu;
/** Unicode tag characters (U+E0020–U+E007E) spell ASCII invisibly ("ASCII smuggling"). */
const TAG_RUN = /[\u{e0020}-\u{e007e}]+/gu;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Single letters separated by one space or mark, at least four in a row: "i g n o r e", "i.g.n.o.r.e". */
const SPACED_LETTERS = /(?<![a-z])[a-z](?:[ ._*·•|/-][a-z](?![a-z])){3,}/g;
const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s" };

export interface NeutralizeOptions {
  /** Names of the tools the agent can call: "call cancel_operation" is an instruction. */
  toolNames?: readonly string[];
}

const ASCII = /^[\x00-\x7f]*$/;
const ASCII_CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** The text as matching reads it before the skeleton: hidden characters, accents and case gone, tags read. */
function plainForm(text: string): string {
  // ASCII is its own NFKC and holds no tags, accents or look-alikes: only controls to drop.
  if (ASCII.test(text)) return text.replace(ASCII_CONTROLS, "").toLowerCase();
  const revealed = text.replace(TAG_RUN, (run) => ` ${[...run].map((ch) => String.fromCharCode(ch.codePointAt(0)! - 0xe0000)).join("")} `);
  return revealed
    .normalize("NFKC")
    .replace(INVISIBLE, "")
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .normalize("NFC")
    .toLowerCase();
}

const singleSpaces = (text: string) => (/\s\s|[^\S ]|^ | $/.test(text) ? text.replace(/\s+/g, " ").trim() : text);

/** The Latin skeleton matching reads (exported for tests and callers that match their own phrases). */
export function normalizeForMatching(text: string): string {
  return singleSpaces(latinSkeleton(plainForm(text)).toLowerCase());
}

const toolRules = new Map<string, RegExp>();
const toolRulesByList = new WeakMap<readonly string[], RegExp>();

/** "call cancel_operation": a verb followed by one of the named tools (compiled once per tool list). */
function toolRule(names: readonly string[]): RegExp | null {
  if (!names.length) return null;
  let rule = toolRulesByList.get(names);
  if (rule) return rule;
  const key = names.join(",");
  rule = toolRules.get(key);
  if (!rule) {
    const escaped = names.map((n) => n.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    rule = new RegExp(`\\b${CALL_VERBS}\\s+(?:the\\s+)?[\`'"]?(?:${escaped.join("|")})\\b`);
    if (toolRules.size < 100) toolRules.set(key, rule);
  }
  toolRulesByList.set(names, rule);
  return rule;
}

/** Whether any word of the text could start a rule (most identifiers and URLs have none): one scan. */
const MAY_INSTRUCT = new RegExp(
  `[<[#]|(?<![a-z])(?:${[...TRIGGER_WORDS].sort((a, b) => b.length - a.length).join("|")}|${TRIGGER_PREFIX.source.slice(1)}[a-z]*)(?![a-z])`,
);

/**
 * Adds the Latin rules `latin` trips to `hits`; false (and nothing added) when no word of it could
 * start a rule.
 */
function checkLatin(latin: string, hits: Set<string>, tool: RegExp | null): boolean {
  if (!MAY_INSTRUCT.test(latin)) return false;
  for (const rule of LATIN_RULES) if (!hits.has(rule.name) && rule.pattern.test(latin)) hits.add(rule.name);
  if (tool?.test(latin)) hits.add("tool_call");
  return true;
}

/** The rules a string trips, and whether any of its words could start one (`worded`). */
function signalsOf(text: string, options: NeutralizeOptions): { hits: string[]; worded: boolean } {
  const plain = plainForm(text);
  const ascii = ASCII.test(plain);
  const latinRaw = ascii ? plain : latinSkeleton(plain).toLowerCase();
  const hits = new Set<string>();
  const tool = toolRule(options.toolNames ?? []);

  const latin = singleSpaces(latinRaw);
  let worded = checkLatin(latin, hits, tool);
  if (!ascii) {
    worded = true;
    const other = singleSpaces(plain);
    for (const rule of OTHER_SCRIPT_RULES) if (rule.pattern.test(other)) hits.add(rule.name);
  }
  // Spaced-out letters, joined: "i g n o r e   p r e v i o u s" reads "ignore previous".
  SPACED_LETTERS.lastIndex = 0;
  if (SPACED_LETTERS.test(latinRaw)) {
    const joined = latinRaw.replace(SPACED_LETTERS, (run) => run.replace(/[^a-z]/g, ""));
    worded = checkLatin(singleSpaces(joined), hits, tool) || worded;
    const letters = joined.replace(/[^a-z]/g, "");
    for (const rule of COMPACT_RULES) if (rule.pattern.test(letters)) hits.add(rule.name);
  }
  // Digits for letters: "1gn0r3 pr3v10us 1nstruct10ns".
  if (/[a-z][0-9@$]|[0-9@$][a-z]/.test(latin)) worded = checkLatin(latin.replace(/[013457@$]/g, (d) => LEET[d]), hits, tool) || worded;
  return { hits: [...hits], worded };
}

/** The rule names an observed string trips, or [] when it reads as data. */
export function instructionSignals(text: string, options: NeutralizeOptions = {}): string[] {
  return signalsOf(text, options).hits;
}

export const SUPPRESSED_MARKER = "[suppressed: instruction-like observed text]";

/**
 * The string as an agent may see it: invisible characters removed, and replaced whole by a
 * marker when it reads as instructions (with its length, so a person can find it in the workbench).
 */
export function neutralizeText(text: string, options: NeutralizeOptions = {}): { text: string; suppressed: boolean; signals: string[]; worded: boolean } {
  // Printable ASCII with no space, tag bracket, role colon or separator is one word: most frame names.
  if (PRINTABLE_ASCII.test(text) && !/[\s<[:#_.-]/.test(text)) {
    const word = text.toLowerCase();
    if (!TRIGGER_PREFIX.test(word)) return { text, suppressed: false, signals: [], worded: TRIGGER_WORDS.has(word) };
  }
  const { hits, worded } = signalsOf(text, options);
  if (hits.length) return { text: `${SUPPRESSED_MARKER.slice(0, -1)}, ${text.length} chars]`, suppressed: true, signals: hits, worded };
  return { text: PRINTABLE_ASCII.test(text) ? text : text.replace(INVISIBLE, ""), suppressed: false, signals: hits, worded };
}
