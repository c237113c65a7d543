import { concatBytes } from "./bytes";
import { detectEncoding } from "./text";
import { EvidenceParseError, InputBoundError } from "../formats/errors";

/**
 * Whole-document JSON for formats that are small enough to parse in one piece (OTLP
 * requests, trace v1): bounded reads and JSON.parse with byte offsets in syntax errors.
 */

/** Largest JSON document parsed in one piece; beyond it the input is refused, not half-read. */
export const MAX_JSON_DOCUMENT_BYTES = 512 * 1024 * 1024;
/** Above this size a JSON error without a position is not searched for (each probe re-parses). */
const MAX_ERROR_SEARCH_CHARS = 4 * 1024 * 1024;

/** Decodes one JSON document's bytes (UTF-8, or UTF-16 with BOM) and parses it; syntax errors carry the byte offset. */
export function parseJsonDocument(format: string, bytes: Uint8Array, baseOffset = 0): unknown {
  const { encoding, bomLength } = detectEncoding(bytes);
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: false }).decode(bytes.subarray(bomLength));
  } catch {
    // V8 refuses strings above ~512 Mi characters.
    throw new InputBoundError("size", MAX_JSON_DOCUMENT_BYTES, "The JSON document is too large to decode as one string.");
  }
  if (text.trim() === "") throw new EvidenceParseError(format, "empty input", { offset: baseOffset });
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = jsonErrorPosition(text, message);
    const offset = position === null ? baseOffset : baseOffset + bomLength + utf8Length(text, position, encoding);
    const reason = `invalid JSON: ${jsonProblem(message)}${position === null ? " (position unknown)" : ""}`;
    throw new EvidenceParseError(format, reason, { offset });
  }
}

/**
 * JSON.parse's messages quote the input ("Unexpected token 'r', "root:x:0:0"... is not valid JSON"):
 * only a fixed category of the problem goes into a parse error, found from the message's wording.
 */
const JSON_PROBLEMS: [RegExp, string][] = [
  [/Unexpected end of JSON input|Unterminated string/, "the input ends inside a value (truncated?)"],
  [/Bad control character/, "a string holds an unescaped control character"],
  [/Bad (escaped character|Unicode escape)/, "invalid escape in a string"],
  [/property name/, "expected a property name in double quotes"],
  [/Expected ',' or '\}'/, "expected ',' or '}'"],
  [/Expected ',' or '\]'/, "expected ',' or ']'"],
  [/Expected ':'/, "expected ':'"],
  [/non-whitespace character after JSON/, "unexpected character after the end of the JSON value"],
  [/number|minus sign|Exponent/, "invalid number"],
  [/Unexpected token/, "unexpected character where a value was expected"],
];

function jsonProblem(message: string): string {
  return JSON_PROBLEMS.find(([pattern]) => pattern.test(message))?.[1] ?? "not a JSON value";
}

function utf8Length(text: string, end: number, encoding: string): number {
  const prefix = text.slice(0, end);
  return encoding === "utf-8" ? new TextEncoder().encode(prefix).length : prefix.length * 2;
}

/** Where JSON.parse failed, in characters; V8 omits it for some errors, so those are found by parsing prefixes. */
function jsonErrorPosition(text: string, message: string): number | null {
  const at = /at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  if (/Unexpected end of JSON input/.test(message)) return text.length;
  if (text.length > MAX_ERROR_SEARCH_CHARS) return null;
  // A prefix fails before its end exactly when it contains the error; the shortest such prefix ends just past it.
  const failsInside = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return false;
    } catch (e) {
      const m = e instanceof Error ? e.message : "";
      if (/Unexpected end of JSON input/.test(m)) return false;
      const p = /at position (\d+)/.exec(m);
      return !p || Number(p[1]) < n;
    }
  };
  let low = 1;
  let high = text.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (failsInside(mid)) high = mid;
    else low = mid + 1;
  }
  return low - 1;
}

/** All chunks of the input, refusing inputs beyond `limit` bytes. */
export async function readBounded(chunks: AsyncIterable<Uint8Array>, limit = MAX_JSON_DOCUMENT_BYTES): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > limit) throw new InputBoundError("size", limit, `The JSON input is larger than ${limit} bytes.`);
    parts.push(chunk);
  }
  return concatBytes(parts);
}
