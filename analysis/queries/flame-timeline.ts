import { z } from "zod";
import { FrameColumns, GenerationList } from "./columns";
import { defineQuery } from "./define";
import type { TimeOrder } from "../flame/time-order";
import { keepPacking, packTreeRows, unpackTreeRows, type PackedTreeRows, type TreeRowKeys } from "./packed-rows";

export const TimelineCell = FrameColumns.extend({
  cell_id: z.string(),
  parent_id: z.string().nullable(),
  depth: z.number().int(),
  start_ns: z.number(),
  end_ns: z.number(),
  /** Summed metric value of the samples under this cell, and of those whose leaf is this frame. */
  total: z.number(),
  self: z.number(),
});
export type TimelineCell = z.infer<typeof TimelineCell>;

/** The generations' positions in $generations (0-based): rows name their generation by it. */
const POSITIONS = `positions AS (
  SELECT unnest($generations) AS generation_id, generate_subscripts($generations, 1) - 1 AS g
)`;

const generationsOnly = z.object({ generations: GenerationList });

/** The frames of the generations, by position: what time order's cells name. */
export const timelineFramesQuery = defineQuery({
  name: "timeline_frames",
  description: "Frames of the generations (time order names its cells by them).",
  params: generationsOnly,
  row: FrameColumns.extend({ g: z.number().int(), frame_id: z.number().int() }),
  sql: `WITH ${POSITIONS}
SELECT p.g::INTEGER AS g, f.frame_id, f.frame_key, f.name, f.file, f.line, f.module, f.kind
FROM frames f JOIN positions p ON p.generation_id = f.generation_id
ORDER BY g, f.frame_id`,
});

/** Every stack node of the generations: time order's call-path tree (read by scan, column by column). */
export const timelineStacksQuery = defineQuery({
  name: "timeline_stacks",
  description: "Stack nodes of the generations (the call-path tree time order walks).",
  params: generationsOnly,
  row: z.object({ g: z.number().int(), stack_id: z.number().int(), parent_stack_id: z.number().int().nullable(), frame_id: z.number().int(), depth: z.number().int() }),
  sql: `WITH ${POSITIONS}
SELECT p.g::INTEGER AS g, s.stack_id, s.parent_stack_id, s.frame_id, s.depth
FROM stacks s JOIN positions p ON p.generation_id = s.generation_id`,
});

/** The metric's id in each generation that has it: what timeline_samples filters on. */
export const timelineMetricIdsQuery = defineQuery({
  name: "timeline_metric_ids",
  description: "The id of one metric in each generation that has it (timeline_samples filters on it).",
  params: z.object({ generations: GenerationList, metric: z.string().min(1).max(128) }),
  row: z.object({ g: z.number().int(), generation_id: z.string(), metric_id: z.number().int() }),
  sql: `WITH ${POSITIONS}
SELECT p.g::INTEGER AS g, m.generation_id, m.metric_id
FROM metrics m JOIN positions p ON p.generation_id = m.generation_id
WHERE m.name = $metric
ORDER BY g`,
});

/**
 * The time-stamped samples of one metric (by id: pass one generation) or of every metric,
 * optionally of one track and in [start_ns, end_ns), in the order of the samples files: no ORDER
 * BY, as importers write samples in time order and a sort of millions of rows cost most of the
 * old query, and no join either (a join, even a scalar subquery, hands rows out of order). Time
 * order merges them in one pass (analysis/flame/time-order.ts), sorting only what is not in order.
 */
export const timelineSamplesQuery = defineQuery({
  name: "timeline_samples",
  description: "Time-stamped samples (of one metric id, track and time range) in the order of the samples files, for time order's one-pass merge.",
  params: z.object({
    generations: GenerationList,
    metric_id: z.number().int().nullable().default(null),
    start_ns: z.number().int().nullable(),
    end_ns: z.number().int().nullable(),
    track_id: z.number().int().nullable(),
  }),
  row: z.object({ stack_id: z.number().int(), time_ns: z.number(), value: z.number() }),
  sql: `SELECT s.stack_id, s.time_ns::DOUBLE AS time_ns, s.value::DOUBLE AS value
FROM samples s
WHERE list_contains($generations, s.generation_id) AND s.time_ns IS NOT NULL
  AND ($metric_id IS NULL OR s.metric_id = $metric_id)
  AND ($start_ns IS NULL OR s.time_ns >= $start_ns)
  AND ($end_ns IS NULL OR s.time_ns < $end_ns)
  AND ($track_id IS NULL OR s.track_id = $track_id)`,
});

/**
 * The value the kept cells leave undrawn: the window's total minus what the top-level cells hold,
 * plus under each cell its total minus its self value and its kept children's totals (the
 * samples of pruned, narrower cells).
 */
export function timelineRemainder(cells: readonly Pick<TimelineCell, "cell_id" | "parent_id" | "self" | "total">[], windowTotal: number): number {
  const childTotals = new Map<string, number>();
  for (const c of cells) if (c.parent_id !== null) childTotals.set(c.parent_id, (childTotals.get(c.parent_id) ?? 0) + c.total);
  let rest = windowTotal;
  for (const c of cells) if (c.parent_id === null) rest -= c.total;
  if (rest <= 1e-9 * Math.max(1, windowTotal)) rest = 0;
  for (const c of cells) {
    const r = c.total - c.self - (childTotals.get(c.cell_id) ?? 0);
    if (r > 1e-9 * Math.max(1, c.total)) rest += r;
  }
  return rest;
}

type FrameInfo = Omit<z.infer<typeof FrameColumns>, "frame_key">;

/**
 * Time order's cells as `flame_timeline` rows: each named by depth and start (`2@1500`, then
 * `2@1500.2`… for cells of no length at the same place), with its parent's name and its frame.
 */
export function timelineCells(order: TimeOrder, frameKeys: readonly string[], frameInfo: (frameKey: string) => FrameInfo | undefined): TimelineCell[] {
  const n = order.cells.length;
  const ids = timelineCellIds(order.cells.map((c) => c.depth), order.cells.map((c) => c.start));
  // Packed beside the rows (keepPacking), as packTreeRows would pack them: one frame per frame_key
  // (each key's details come from frameInfo), a parent as its position, ids by their rule. A page
  // opened in time order sends this packing; packTreeRows took 50–70 ms more at 20,000 cells.
  const packed: PackedTreeRows = { keys: [], frames: [], frame: new Array<number>(n), parent: new Array<number>(n), columns: { depth: [], start_ns: [], end_ns: [], total: [], self: [] } };
  const { depth, start_ns, end_ns, total, self } = packed.columns;
  const framePosition = new Map<string, number>();
  const cells = order.cells.map((c, i): TimelineCell => {
    const frameKey = frameKeys[c.frame] ?? "";
    const info = frameInfo(frameKey) ?? UNKNOWN_FRAME;
    let f = framePosition.get(frameKey);
    if (f === undefined) {
      framePosition.set(frameKey, (f = packed.frames.length));
      packed.frames.push({ frame_key: frameKey, name: info.name, file: info.file, line: info.line, module: info.module, kind: info.kind });
    }
    packed.frame[i] = f;
    packed.parent[i] = c.parent < 0 ? -1 : c.parent;
    depth.push(c.depth);
    start_ns.push(c.start);
    end_ns.push(c.end);
    total.push(c.total);
    self.push(c.self);
    return { cell_id: ids[i], parent_id: c.parent < 0 ? null : ids[c.parent], frame_key: frameKey, ...info, depth: c.depth, start_ns: c.start, end_ns: c.end, total: c.total, self: c.self };
  });
  if (n) {
    packed.keys = Object.keys(cells[0]);
    keepPacking(cells, TIMELINE_ROW_KEYS, packed);
  }
  return cells;
}

const UNKNOWN_FRAME: FrameInfo = { name: "(unknown)", file: null, line: null, module: null, kind: "other" };

/** Cells' names by depth and start, in their order: `2@1500`, then `2@1500.2`… at the same place. */
function timelineCellIds(depth: ArrayLike<number>, start: ArrayLike<number>): string[] {
  const ids: string[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < depth.length; i++) {
    const base = `${depth[i]}@${Math.trunc(start[i])}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    ids.push(n > 1 ? `${base}.${n}` : base);
  }
  return ids;
}

/** Time order's cells in a transfer (`packTreeRows`): names rebuilt by their rule, from depth and start. */
export const TIMELINE_ROW_KEYS: TreeRowKeys = {
  id: "cell_id",
  parent: "parent_id",
  ruleIds: (columns) => timelineCellIds(columns.depth as number[], columns.start_ns as number[]),
};

export const packTimelineCells = (cells: readonly TimelineCell[]): PackedTreeRows => packTreeRows(cells, TIMELINE_ROW_KEYS);
export const unpackTimelineCells = (packed: PackedTreeRows): TimelineCell[] => unpackTreeRows<TimelineCell>(packed, TIMELINE_ROW_KEYS);
