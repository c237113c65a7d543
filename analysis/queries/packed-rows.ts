import type { z } from "zod";
import type { FrameColumns } from "./columns";

type Frame = z.infer<typeof FrameColumns>;
type Scalar = string | number | null;
/** A row: its frame's fields, an id, a parent's id, and numbers or strings. */
type Row = Frame;
const field = (r: Row, k: string): Scalar => (r as unknown as Record<string, Scalar>)[k];

const FRAME_FIELDS = ["frame_key", "name", "file", "line", "module", "kind"] as const;

/**
 * Rows of a tree whose rows name frames (flame tree nodes, time order's cells) packed for a
 * transfer: each frame once, a parent as its row's position, every other field one array. An
 * object per row repeats its frame's name, file and module and two ids: five times the bytes,
 * serialized and parsed again on the way to the page.
 */
export interface PackedTreeRows {
  /** The rows' keys, in their order. */
  keys: string[];
  frames: Frame[];
  /** Per row: its frame's position in `frames`. */
  frame: number[];
  /** Per row: its parent's position in the rows; -1 none; -2 - k a parent named that is not a row (`ids[rows + k]`). */
  parent: number[];
  /** The rows' ids, then the parents named that are not rows; absent when `ruleIds` rebuilds them. */
  ids?: string[];
  /** Every other field, one array each. */
  columns: Record<string, Scalar[]>;
}

export interface TreeRowKeys {
  id: string;
  parent: string;
  /** The ids the rows are named by, rebuilt from their other fields (when they follow a rule). */
  ruleIds?: (columns: Record<string, Scalar[]>) => string[];
}

function sameFrame(a: Frame, b: Row): boolean {
  return a.name === b.name && a.file === b.file && a.line === b.line && a.module === b.module && a.kind === b.kind;
}

export function packTreeRows(rows: readonly Row[], keys: TreeRowKeys): PackedTreeRows {
  const fieldKeys = rows.length ? Object.keys(rows[0]) : [];
  const other = fieldKeys.filter((k) => k !== keys.id && k !== keys.parent && !(FRAME_FIELDS as readonly string[]).includes(k));
  const packed: PackedTreeRows = { keys: fieldKeys, frames: [], frame: [], parent: [], columns: Object.fromEntries(other.map((k) => [k, [] as Scalar[]])) };
  // By frame_key, then compared field by field (a key per row built from every field cost more than the rest of the packing).
  const framesByKey = new Map<string, number[]>();
  const position = new Map<Scalar, number>();
  rows.forEach((r, i) => position.set(field(r, keys.id), i));
  const ids = rows.map((r) => String(field(r, keys.id)));
  const strays: string[] = [];
  for (const r of rows) {
    // Every field must match: one frame_key with other details stays two frames.
    let candidates = framesByKey.get(r.frame_key);
    if (!candidates) framesByKey.set(r.frame_key, (candidates = []));
    let f = candidates.find((c) => sameFrame(packed.frames[c], r));
    if (f === undefined) {
      candidates.push((f = packed.frames.length));
      packed.frames.push({ frame_key: r.frame_key, name: r.name, file: r.file, line: r.line, module: r.module, kind: r.kind });
    }
    packed.frame.push(f);
    const p = field(r, keys.parent);
    const at = p === null ? -1 : position.get(p);
    if (at === undefined) {
      packed.parent.push(-2 - strays.length);
      strays.push(String(p));
    } else packed.parent.push(at);
    for (const k of other) packed.columns[k].push(field(r, k));
  }
  const rebuilt = keys.ruleIds?.(packed.columns);
  if (!rebuilt || strays.length || new Set(ids).size !== ids.length || rebuilt.some((id, i) => id !== ids[i])) packed.ids = [...ids, ...strays];
  return packed;
}

export function unpackTreeRows<R extends Row>(packed: PackedTreeRows, keys: TreeRowKeys): R[] {
  const n = packed.frame.length;
  const ids = packed.ids ?? keys.ruleIds!(packed.columns);
  const rows: R[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const frame = packed.frames[packed.frame[i]];
    const p = packed.parent[i];
    const row: Record<string, Scalar> = {};
    for (const k of packed.keys) {
      if (k === keys.id) row[k] = ids[i];
      else if (k === keys.parent) row[k] = p === -1 ? null : p >= 0 ? ids[p] : ids[n - 2 - p];
      else if (k in frame) row[k] = frame[k as keyof Frame];
      else row[k] = packed.columns[k][i];
    }
    rows[i] = row as unknown as R;
  }
  return rows;
}

/** An answer with its `field` of tree rows packed, for a transfer. */
export type PackedAnswer<T, F extends keyof T & string> = Omit<T, F> & { [K in `packed_${F}`]: PackedTreeRows };

/** Packings of rows by the rows themselves: an answer kept by the engine is the same array each time it is asked. */
const packings = new WeakMap<readonly Row[], Map<TreeRowKeys, PackedTreeRows>>();

/**
 * Records how `rows` pack with `keys`, when their maker built the packing beside them for less
 * than packTreeRows takes (it must be exactly what packTreeRows would give): packAnswer sends it.
 */
export function keepPacking(rows: readonly Row[], keys: TreeRowKeys, packed: PackedTreeRows): void {
  let byKeys = packings.get(rows);
  if (!byKeys) packings.set(rows, (byKeys = new Map()));
  byKeys.set(keys, packed);
}

/**
 * The answer with its rows packed. Rows are read, never changed (the engine shares its kept
 * answers), so rows packed before are not packed again: a run page opened again sends the kept
 * flame tree's and time order's packing (tens of ms each at 20 k rows).
 */
export function packAnswer<T extends { [K in F]: readonly Row[] }, F extends keyof T & string>(answer: T, field: F, keys: TreeRowKeys): PackedAnswer<T, F> {
  const { [field]: rows, ...rest } = answer;
  let byKeys = packings.get(rows);
  if (!byKeys) packings.set(rows, (byKeys = new Map()));
  let packed = byKeys.get(keys);
  if (!packed) byKeys.set(keys, (packed = packTreeRows(rows, keys)));
  return { ...rest, [`packed_${field}`]: packed } as unknown as PackedAnswer<T, F>;
}

export function unpackAnswer<T extends { [K in F]: readonly Row[] }, F extends keyof T & string>(answer: PackedAnswer<T, F>, field: F, keys: TreeRowKeys): T {
  const { [`packed_${field}` as keyof PackedAnswer<T, F>]: packed, ...rest } = answer;
  return { ...rest, [field]: unpackTreeRows(packed as PackedTreeRows, keys) } as unknown as T;
}
