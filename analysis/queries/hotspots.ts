import { z } from "zod";
import { FrameColumns, GenerationList } from "./columns";
import { defineQuery } from "./define";
import { FRAME_INFO, frameValues, grandTotal } from "./fragments";


export const HotspotRow = FrameColumns.extend({
  self: z.number(),
  total: z.number(),
  self_pct: z.number(),
  total_pct: z.number(),
  grand_total: z.number(),
});
export type HotspotRow = z.infer<typeof HotspotRow>;

/**
 * Frames ranked by self value (then frame_key), with inclusive totals that count a frame once
 * per sample even when it recurses. Keyset: rows after (after_self, after_key).
 */
export const hotspotsQuery = defineQuery({
  name: "hotspots",
  description: "Frames by self value of one metric, with inclusive totals and shares of the grand total.",
  params: z.object({
    generations: GenerationList,
    metric: z.string().min(1).max(128),
    after_self: z.number().nullable().default(null),
    after_key: z.string().nullable().default(null),
    frame_key: z.string().nullable().default(null),
    limit: z.number().int().min(1).max(10_000),
  }),
  row: HotspotRow,
  sql: `WITH
${frameValues()},
${grandTotal()},
${FRAME_INFO}
SELECT v.frame_key, fi.name, fi.file, fi.line, fi.module, fi.kind,
       v.self, v.total,
       CASE WHEN g.grand_total > 0 THEN 100.0 * v.self / g.grand_total ELSE 0 END AS self_pct,
       CASE WHEN g.grand_total > 0 THEN 100.0 * v.total / g.grand_total ELSE 0 END AS total_pct,
       g.grand_total
FROM frame_values v
JOIN frame_info fi ON fi.frame_key = v.frame_key
CROSS JOIN grand g
WHERE ($frame_key IS NULL OR v.frame_key = $frame_key)
  AND ($after_self IS NULL OR v.self < $after_self OR (v.self = $after_self AND v.frame_key > $after_key))
ORDER BY v.self DESC, v.frame_key ASC
LIMIT $limit`,
});
