import { createHmac, timingSafeEqual } from "node:crypto";
import { EmberscopeError, type Recovery } from "./errors";

/**
 * The one cursor codec. A cursor is opaque to callers: base64url(JSON) + "." + MAC.
 * It binds the query name, its normalized filters, the ordering and the pinned commit;
 * decoding it for anything else — or after it was altered — fails with STALE_CURSOR.
 */
export interface CursorBinding {
  query: string;
  filters: Record<string, unknown>;
  order: string;
  commit: string | null;
}

interface CursorPayload extends CursorBinding {
  v: 1;
  after: unknown[];
}

/**
 * JSON with sorted keys and no undefined values, so equal filters always encode equally. A
 * container nested `maxDepth` deep is written as "…" (the recursion stays bounded however deep
 * the value is).
 */
export function canonicalJson(value: unknown, maxDepth = Infinity, depth = 0): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (depth >= maxDepth) return JSON.stringify("…");
  // Loops rather than entries/filter/map (every cursor and digest goes through here); the keys'
  // default sort is by UTF-16 code units, the order `<` gives.
  let out: string;
  if (Array.isArray(value)) {
    out = "[";
    for (let i = 0; i < value.length; i++) out += (i ? "," : "") + canonicalJson(value[i], maxDepth, depth + 1);
    return out + "]";
  }
  const record = value as Record<string, unknown>;
  out = "{";
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const child = record[key];
    if (child === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(key) + ":" + canonicalJson(child, maxDepth, depth + 1);
    first = false;
  }
  return out + "}";
}

function mac(key: Buffer, body: string): Buffer {
  return createHmac("sha256", key).update("emberscope-cursor\0").update(body).digest().subarray(0, 16);
}

export function encodeCursor(key: Buffer, binding: CursorBinding, after: unknown[]): string {
  // canonicalJson sorts the filters' keys and drops their undefined values with the rest.
  const payload: CursorPayload = { v: 1, ...binding, after };
  const body = Buffer.from(canonicalJson(payload)).toString("base64url");
  return `${body}.${mac(key, body).toString("base64url")}`;
}

function stale(reason: string, restart?: Recovery): EmberscopeError {
  return new EmberscopeError("STALE_CURSOR", `The cursor cannot be used here: ${reason}.`, {
    details: { argument: "cursor", reason },
    recovery: restart,
  });
}

/**
 * Returns the keyset position stored in the cursor, after checking its MAC and binding.
 * `restart` is the recovery offered on failure: usually the same query without its cursor.
 */
export function decodeCursor(key: Buffer, cursor: string, expected: CursorBinding, restart?: Recovery): unknown[] {
  const fail = (reason: string) => stale(reason, restart);
  const [body, tag, extra] = cursor.split(".");
  if (!body || !tag || extra !== undefined) throw fail("it is malformed");
  const given = Buffer.from(tag, "base64url");
  const wanted = mac(key, body);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw fail("it was altered or belongs to another workspace");
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as CursorPayload;
  } catch {
    throw fail("it is malformed");
  }
  if (payload.v !== 1 || !Array.isArray(payload.after)) throw fail("it is malformed");
  if (payload.query !== expected.query) throw fail("it was issued for another query");
  if (canonicalJson(payload.filters) !== canonicalJson(expected.filters)) throw fail("it was issued with other filters");
  if (payload.order !== expected.order) throw fail("it was issued for another ordering");
  if (payload.commit !== expected.commit) throw fail("it was issued for another commit");
  return payload.after;
}
