import { decodeCursor, encodeCursor, type CursorBinding } from "../domain/cursor";
import { EmberscopeError, type Recovery } from "../domain/errors";
import type { Workspace } from "../store/workspace";

export interface KeysetRequest<T, K extends unknown[]> {
  ws: Workspace;
  binding: CursorBinding;
  cursor: string | undefined;
  limit: number;
  /** The same call without its cursor, offered as recovery from STALE_CURSOR. */
  restart: { operation: string; arguments: Record<string, unknown> };
  /** Rows strictly after `after` in the binding's order; null starts at the beginning. */
  fetch: (after: K | null, limit: number) => T[];
  keyOf: (item: T) => K;
}

export interface KeysetPage<T> {
  items: T[];
  next_cursor: string | null;
  truncated: boolean;
  limit: number;
}

/** Keyset pagination through the one cursor codec: fetches limit + 1 rows to know whether more exist. */
export function keysetPage<T, K extends unknown[]>(req: KeysetRequest<T, K>): KeysetPage<T> {
  const after = req.cursor
    ? (decodeCursor(req.ws.secret, req.cursor, req.binding, { ...req.restart, safe_to_repeat: true }) as K)
    : null;
  const rows = req.fetch(after, req.limit + 1);
  const more = rows.length > req.limit;
  const items = more ? rows.slice(0, req.limit) : rows;
  const next = more ? encodeCursor(req.ws.secret, req.binding, req.keyOf(items[items.length - 1])) : null;
  return { items, next_cursor: next, truncated: more, limit: req.limit };
}

/** A position a two-way cursor holds: rows after or before the key of the row it was issued at. */
export interface KeysetPosition<K extends unknown[]> {
  key: K;
  direction: "after" | "before";
}

export interface TwoWayKeysetRequest<T, K extends unknown[]> extends Omit<KeysetRequest<T, K>, "fetch"> {
  /** Up to `limit` rows strictly after or before the position (null: from the start), in the binding's order either way. */
  fetch: (position: KeysetPosition<K> | null, limit: number) => T[];
}

export interface TwoWayKeysetPage<T> extends KeysetPage<T> {
  /** The page before this one; null on the first page. */
  previous_cursor: string | null;
}

/**
 * Keyset pages that can be walked both ways (a table's next and previous page): each cursor
 * holds its direction beside the key, through the same codec and binding as `keysetPage`.
 * `truncated` says rows exist after this page.
 */
export function twoWayKeysetPage<T, K extends unknown[]>(req: TwoWayKeysetRequest<T, K>): TwoWayKeysetPage<T> {
  const restart = { ...req.restart, safe_to_repeat: true };
  const position = req.cursor ? positionOf<K>(decodeCursor(req.ws.secret, req.cursor, req.binding, restart), req.binding, restart) : null;
  const cursorAt = (direction: KeysetPosition<K>["direction"], item: T) => encodeCursor(req.ws.secret, req.binding, [direction, ...req.keyOf(item)]);
  const rows = req.fetch(position, req.limit + 1);
  const more = rows.length > req.limit;
  if (position?.direction === "before") {
    // The extra row is the one farthest back: it says an earlier page exists.
    const items = more ? rows.slice(1) : rows;
    const last = items[items.length - 1];
    return { items, next_cursor: last ? cursorAt("after", last) : null, previous_cursor: more ? cursorAt("before", items[0]) : null, truncated: last !== undefined, limit: req.limit };
  }
  const items = more ? rows.slice(0, req.limit) : rows;
  const next = more ? cursorAt("after", items[items.length - 1]) : null;
  return { items, next_cursor: next, previous_cursor: position && items.length ? cursorAt("before", items[0]) : null, truncated: more, limit: req.limit };
}

function positionOf<K extends unknown[]>(stored: unknown[], binding: CursorBinding, restart: Recovery): KeysetPosition<K> {
  const [direction, ...key] = stored;
  if (direction !== "after" && direction !== "before") {
    throw new EmberscopeError("STALE_CURSOR", "The cursor cannot be used here: it was issued for a one-way list.", {
      details: { argument: "cursor", reason: "it was issued for a one-way list", query: binding.query },
      recovery: restart,
    });
  }
  return { direction, key: key as K };
}
