import { decodeCursor, encodeCursor, type CursorBinding } from "../domain/cursor";
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
