/**
 * Neutralization of observed text that reads as instructions to an agent ("ignore previous
 * instructions…", fake role tags, "call tool X"). Profiles and traces are observed data and may
 * be hostile; such strings are replaced whole before they cross the MCP boundary, and the caller
 * reports how many fields were suppressed and where. Pure.
 */

/** Characters that hide or reorder text (zero-width, bidi overrides) and C0/C1 controls. */
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

const VERBS = "(?:call|invoke|run|execute|use|trigger|send|fetch)";

/** Each rule is checked on a normalized copy (NFKC, lower case, single spaces). */
const INSTRUCTION_RULES: readonly { name: string; pattern: RegExp }[] = [
  { name: "override", pattern: /\b(?:ignore|disregard|forget|override|bypass|skip)\b.{0,40}\b(?:previous|prior|above|earlier|preceding|all|any|your|the|system)\b.{0,40}\b(?:instructions?|prompts?|rules|directions?|guidelines|messages?|context|policy|policies)\b/ },
  { name: "new_instructions", pattern: /\b(?:new|updated|real|actual|following|important)\s+(?:system\s+)?(?:instructions?|orders|directives?)\b\s*[:!-]/ },
  { name: "role_tag", pattern: /<\|?\s*\/?\s*(?:system|assistant|user|developer|tool|im_start|im_end|endoftext)\s*\|?>|\[\/?(?:system|inst|assistant)\]|<<\/?sys>>/ },
  { name: "role_prefix", pattern: /(?:^|[\n;])\s*(?:system|assistant|developer)\s*:\s*\S/ },
  { name: "persona", pattern: /\byou\s+(?:are\s+now|must\s+now|will\s+now|should\s+now|must\s+(?:call|run|invoke|execute|ignore|delete|cancel|send))\b|\bact\s+as\s+(?:an?\s+)?(?:admin|root|system|developer)\b|\bdo\s+not\s+(?:tell|inform|show)\s+the\s+user\b/ },
  { name: "tool_call", pattern: new RegExp(`\\b${VERBS}\\s+(?:the\\s+)?(?:tool|function|command|mcp)\\b`) },
  { name: "tool_call", pattern: new RegExp(`\\b(?:please\\s+|now\\s+|then\\s+|must\\s+|should\\s+)${VERBS}\\s+[\`'"]?[a-z][a-z0-9]*_[a-z0-9_]+`) },
];

export interface NeutralizeOptions {
  /** Names of the tools the agent can call: "call cancel_operation" is an instruction. */
  toolNames?: readonly string[];
}

export function normalizeForMatching(text: string): string {
  // Printable-ASCII strings (most frame names) need no NFKC folding and hold no invisible characters.
  const folded = /^[\x20-\x7e]*$/.test(text) ? text : text.normalize("NFKC").replace(INVISIBLE, "");
  return folded.toLowerCase().replace(/\s+/g, " ");
}

const toolRules = new Map<string, RegExp>();

/** "call cancel_operation": a verb followed by one of the named tools (compiled once per tool list). */
function toolRule(names: readonly string[]): RegExp | null {
  if (!names.length) return null;
  const key = names.join(",");
  let rule = toolRules.get(key);
  if (!rule) {
    const escaped = names.map((n) => n.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    rule = new RegExp(`\\b${VERBS}\\s+(?:the\\s+)?[\`'"]?(?:${escaped.join("|")})\\b`);
    toolRules.set(key, rule);
  }
  return rule;
}

/** The rule names an observed string trips, or [] when it reads as data. */
export function instructionSignals(text: string, options: NeutralizeOptions = {}): string[] {
  const normalized = normalizeForMatching(text);
  // Every rule needs a space, a tag bracket or a role colon; most identifiers have none.
  if (!/[\s<[:]/.test(normalized)) return [];
  const hits = new Set<string>();
  for (const rule of INSTRUCTION_RULES) if (rule.pattern.test(normalized)) hits.add(rule.name);
  if (toolRule(options.toolNames ?? [])?.test(normalized)) hits.add("tool_call");
  return [...hits];
}

export const SUPPRESSED_MARKER = "[suppressed: instruction-like observed text]";

/**
 * The string as an agent may see it: invisible characters removed, and replaced whole by a
 * marker when it reads as instructions (with its length, so a person can find it in the workbench).
 */
export function neutralizeText(text: string, options: NeutralizeOptions = {}): { text: string; suppressed: boolean; signals: string[] } {
  const signals = instructionSignals(text, options);
  if (signals.length) return { text: `${SUPPRESSED_MARKER.slice(0, -1)}, ${text.length} chars]`, suppressed: true, signals };
  const visible = text.replace(INVISIBLE, "");
  return { text: visible, suppressed: false, signals };
}
