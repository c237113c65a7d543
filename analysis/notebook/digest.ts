/**
 * The digest a `query_result` evidence reference carries: `sha256:` and the hex SHA-256 of the
 * rows' canonical JSON (an array of row objects, keys sorted, no whitespace; integers of any size,
 * BigInt or number, as plain decimal; dates as ISO text). The page computes it over the rows a
 * SQL cell showed, so a finding names exactly the result it read; anyone can recompute it by
 * running the SQL at the reference's commit. WebCrypto: the same in the browser and in Node.
 */

export function canonicalRowsJson(rows: readonly Record<string, unknown>[]): string {
  return `[${rows.map(canonicalJson).join(",")}]`;
}

/** Canonical JSON of a value: keys sorted, no whitespace, integers as plain decimal (also used for workflows' content hashes). */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? (Number.isInteger(value) && Math.abs(value) < 1e21 ? BigInt(value).toString() : JSON.stringify(value)) : "null";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(String(value));
}

export const ROWS_DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

export async function rowsDigest(rows: readonly Record<string, unknown>[]): Promise<string> {
  return sha256Digest(canonicalRowsJson(rows));
}

/** `sha256:` and the hex SHA-256 of a text's UTF-8 bytes. */
export async function sha256Digest(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
