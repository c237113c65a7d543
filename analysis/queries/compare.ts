import { z } from "zod";
import { defineQuery, type EvidenceQuery } from "./define";
import { frameInfo, frameValues, grandTotal } from "./fragments";
import { FrameColumns, GenerationList } from "./columns";
import { TrackKeyList, trackViewsFor } from "./tracks";

export const CompareRow = FrameColumns.omit({ line: true }).extend({
  base_self: z.number(),
  candidate_self: z.number(),
  base_total: z.number(),
  candidate_total: z.number(),
  delta: z.number().describe("Change of the self value (candidate − base), as a share of each run's total when normalized."),
  relative: z.number().nullable().describe("delta / base self value; null when the base has none."),
  total_delta: z.number().describe("Change of the inclusive (total) value, as a share of each run's total when normalized."),
  total_relative: z.number().nullable().describe("total_delta / base total value; null when the base has none."),
  status: z.enum(["changed", "added", "removed", "unchanged"]),
});
export type CompareRow = z.infer<typeof CompareRow>;

const CompareParams = z.object({
  base_generations: GenerationList,
  candidate_generations: GenerationList,
  metric: z.string().min(1).max(128),
  normalize: z.boolean(),
  collection: z.enum(["changed", "added", "removed", "all"]),
  limit: z.number().int().min(1).max(10_000),
});

/** The comparison's SQL, each side reading its whole run or (scoped) only the samples of its chosen tracks. */
function compareSql(base: boolean, candidate: boolean): string {
  const views = [base ? trackViewsFor("b_", "$base_tracks", "$base_generations") : null, candidate ? trackViewsFor("c_", "$candidate_tracks", "$candidate_generations") : null].filter(Boolean);
  return `WITH${views.length ? ` RECURSIVE\n${views.join(",\n")},` : ""}
${frameValues("b_values", "$base_generations", base ? "b_track_frame_totals" : "frame_totals")},
${frameValues("c_values", "$candidate_generations", candidate ? "c_track_frame_totals" : "frame_totals")},
${grandTotal("b_grand", "$base_generations", base ? "b_track_metrics" : "metrics")},
${grandTotal("c_grand", "$candidate_generations", candidate ? "c_track_metrics" : "metrics")},
${frameInfo("list_concat($base_generations, $candidate_generations)")},
joined AS (
  SELECT coalesce(bt.frame_key, ct.frame_key) AS frame_key,
         coalesce(bt.self, 0) AS base_self, coalesce(ct.self, 0) AS candidate_self,
         coalesce(bt.total, 0) AS base_total, coalesce(ct.total, 0) AS candidate_total,
         bt.frame_key IS NOT NULL AS in_base, ct.frame_key IS NOT NULL AS in_candidate
  FROM b_values bt
  FULL OUTER JOIN c_values ct ON ct.frame_key = bt.frame_key
),
scaled AS (
  SELECT j.*,
         CASE WHEN $normalize THEN j.base_self / nullif(g.b_grand, 0) ELSE j.base_self END AS b_value,
         CASE WHEN $normalize THEN j.candidate_self / nullif(g.c_grand, 0) ELSE j.candidate_self END AS c_value,
         CASE WHEN $normalize THEN j.base_total / nullif(g.b_grand, 0) ELSE j.base_total END AS b_total_value,
         CASE WHEN $normalize THEN j.candidate_total / nullif(g.c_grand, 0) ELSE j.candidate_total END AS c_total_value
  FROM joined j
  -- Each grand total read once, in one row: a scalar subquery at each of the four uses cost 81 ms of CPU per call against 44 (a 10 M-sample run against a folded one).
  CROSS JOIN (SELECT (SELECT grand_total FROM b_grand) AS b_grand, (SELECT grand_total FROM c_grand) AS c_grand) g
),
classified AS (
  SELECT s.*, coalesce(s.c_value, 0) - coalesce(s.b_value, 0) AS delta,
         coalesce(s.c_total_value, 0) - coalesce(s.b_total_value, 0) AS total_delta,
         CASE WHEN NOT s.in_base THEN 'added' WHEN NOT s.in_candidate THEN 'removed'
              WHEN coalesce(s.c_value, 0) <> coalesce(s.b_value, 0) THEN 'changed' ELSE 'unchanged' END AS status
  FROM scaled s
)
SELECT c.frame_key, fi.name, fi.file, fi.module, fi.kind,
       c.base_self::DOUBLE AS base_self, c.candidate_self::DOUBLE AS candidate_self,
       c.base_total::DOUBLE AS base_total, c.candidate_total::DOUBLE AS candidate_total,
       c.delta::DOUBLE AS delta,
       CASE WHEN coalesce(c.b_value, 0) = 0 THEN NULL ELSE c.delta / c.b_value END AS relative,
       c.total_delta::DOUBLE AS total_delta,
       CASE WHEN coalesce(c.b_total_value, 0) = 0 THEN NULL ELSE c.total_delta / c.b_total_value END AS total_relative,
       c.status
FROM classified c JOIN frame_info fi ON fi.frame_key = c.frame_key
WHERE ($collection = 'all' AND c.status <> 'unchanged')
   OR ($collection = 'changed' AND c.status <> 'unchanged')
   OR c.status = $collection
ORDER BY abs(c.delta) DESC, c.frame_key
LIMIT $limit`;
}

/**
 * Per frame_key: base and candidate self and inclusive values and the change of each (optionally
 * with each side normalized to its grand total), sorted by the magnitude of the self change; a
 * frame whose self value is the same on both sides is unchanged (its total may still differ, and
 * is said beside it, so that no view shows one without the other).
 */
export const compareQuery = defineQuery({
  name: "compare",
  description: "Differential per frame between a base and a candidate set of generations.",
  params: CompareParams,
  row: CompareRow,
  sql: compareSql(false, false),
});

const scopedCompare = new Map<string, EvidenceQuery<any, any>>();

/**
 * The comparison with one side or both narrowed to some tracks (threads, processes, profiles):
 * `base_tracks` / `candidate_tracks` are the track keys of each side, read through the same track
 * views scopeToTracks uses, so the table agrees with each side's flame tree on those tracks.
 */
export function compareOnTracksQuery(base: boolean, candidate: boolean): EvidenceQuery<any, typeof CompareRow> {
  if (!base && !candidate) return compareQuery;
  const name = `compare_of_tracks_${base ? "b" : ""}${candidate ? "c" : ""}`;
  let query = scopedCompare.get(name);
  if (!query) {
    query = defineQuery({
      name,
      description: "Differential per frame between a base and a candidate set of generations, each side on its chosen tracks.",
      params: CompareParams.extend({ ...(base ? { base_tracks: TrackKeyList } : {}), ...(candidate ? { candidate_tracks: TrackKeyList } : {}) }),
      row: CompareRow,
      sql: compareSql(base, candidate),
    });
    scopedCompare.set(name, query);
  }
  return query;
}

