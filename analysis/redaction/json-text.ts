/**
 * Strings that are JSON text (span args, measurement dimensions): read, walked and written back,
 * so that redaction works on the decoded strings and its output is JSON again. Pure.
 */

/** Deeper than this, a value is not walked: it is redacted whole (fail closed). */
export const MAX_JSON_DEPTH = 64;

/** Whether a string not known to hold JSON looks like a JSON object or array worth reading. */
export function looksLikeJson(text: string): boolean {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  // `[unknown]`, `{closure}`, `[native code]` are frame names: JSON text of a container has a quote or is empty.
  return ((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d)) && (text.includes('"') || /^[[{]\s*[\]}]$/.test(text));
}

/** The decoded value, or undefined when the text is not JSON. */
export function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** One step of a JSON Pointer (RFC 6901). */
export function pointerStep(key: string | number): string {
  return `/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === "string") return value.length > limit ? `${value.slice(0, limit)}…` : value;
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, limit));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [cutStrings(k, limit) as string, cutStrings(v, limit)]));
  return value;
}

function keepEntries(value: unknown, keep: number): unknown {
  if (Array.isArray(value)) {
    const kept = value.slice(0, keep).map((v) => keepEntries(v, keep));
    return value.length > keep ? [...kept, `… ${value.length - keep} more`] : kept;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const kept = Object.fromEntries(entries.slice(0, keep).map(([k, v]) => [k, keepEntries(v, keep)]));
    return entries.length > keep ? { ...kept, "…": `${entries.length - keep} more` } : kept;
  }
  return value;
}

/**
 * JSON text of `value` at most `max` characters long, still JSON: long strings are cut first,
 * then containers keep their first entries; as a last resort the text becomes a JSON string of
 * its cut beginning.
 */
export function shrinkJson(value: unknown, text: string, max: number): string {
  for (const limit of [1024, 256, 64, 16]) {
    const cut = JSON.stringify(cutStrings(value, limit));
    if (cut.length <= max) return cut;
  }
  for (const keep of [64, 16, 4, 1, 0]) {
    const cut = JSON.stringify(keepEntries(cutStrings(value, 16), keep));
    if (cut.length <= max) return cut;
  }
  return JSON.stringify(`${text.slice(0, Math.max(0, max - 40))}… [cut ${text.length} chars]`);
}
