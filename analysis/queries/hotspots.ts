import { z } from "zod";
import { defineQuery } from "./define";
import { FRAME_INFO, FRAME_TOTALS, LEAF, NODE_FRAME, UP } from "./fragments";

export const GenerationList = z.array(z.string().regex(/^gen_[0-9a-z]+$/)).max(1000);

export const HotspotRow = z.object({
  frame_key: z.string(),
  name: z.string(),
  file: z.string().nullable(),
  line: z.number().int().nullable(),
  module: z.string().nullable(),
  kind: z.string(),
  self: z.number(),
  total: z.number(),
  self_pct: z.number(),
  total_pct: z.number(),
  grand_total: z.number(),
});
export type HotspotRow = z.infer<typeof HotspotRow>;

/**
 * Functions ranked by self value (then frame_key), with inclusive totals that count a frame
 * once per sample even when it recurses. Keyset: rows after (after_self, after_key).
 */
export const hotspotsQuery = defineQuery({
  name: "hotspots",
  description: "Frames by self value of one metric, with inclusive totals and shares of the grand total.",
  params: z.object({
    generations: GenerationList,
    metric: z.string().min(1).max(128),
    start_ns: z.number().int().nullable().default(null),
    end_ns: z.number().int().nullable().default(null),
    after_self: z.number().nullable().default(null),
    after_key: z.string().nullable().default(null),
    frame_key: z.string().nullable().default(null),
    limit: z.number().int().min(1).max(10_000),
  }),
  row: HotspotRow,
  sql: `WITH RECURSIVE
${LEAF},
${UP},
${NODE_FRAME},
${FRAME_TOTALS},
${FRAME_INFO}
SELECT t.frame_key, fi.name, fi.file, fi.line, fi.module, fi.kind,
       coalesce(s.self, 0)::DOUBLE AS self, t.total::DOUBLE AS total,
       CASE WHEN g.grand_total > 0 THEN 100.0 * coalesce(s.self, 0) / g.grand_total ELSE 0 END AS self_pct,
       CASE WHEN g.grand_total > 0 THEN 100.0 * t.total / g.grand_total ELSE 0 END AS total_pct,
       g.grand_total
FROM totals t
JOIN frame_info fi ON fi.frame_key = t.frame_key
LEFT JOIN selfs s ON s.frame_key = t.frame_key
CROSS JOIN grand g
WHERE ($frame_key IS NULL OR t.frame_key = $frame_key)
  AND ($after_self IS NULL OR coalesce(s.self, 0) < $after_self
       OR (coalesce(s.self, 0) = $after_self AND t.frame_key > $after_key))
ORDER BY self DESC, t.frame_key ASC
LIMIT $limit`,
});
