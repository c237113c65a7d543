import { z } from "zod";
import { GenerationList } from "./columns";
import { defineQuery, type EvidenceQuery } from "./define";

/**
 * Threads, processes and profiles: which tracks a run's samples sit on, and the evidence queries
 * narrowed to some of them (speedscope's profile picker, Perfetto's thread tracks, Firefox
 * Profiler's thread selection).
 *
 * A track is named across generations by its `track_key`: 12 hex digits of the md5 of its process
 * id, thread id and kind — the identity the importers intern tracks by (names are learned late, as
 * Chrome's M events, and a perf thread's comm changes at exec). Dense track ids restart in each
 * generation; the key does not, so a URL or an agent's filter names the same thread at every commit.
 */

/** A track key: what the UI's URL, the services and the MCP tools name a track by. */
export const TrackKey = z.string().regex(/^[0-9a-f]{12}$/, "expected a 12-hex track_key");
export const TrackKeyList = z.array(TrackKey).max(1000);

/** Each track of the generations with its key. */
export const TRACK_KEYS = `track_keys AS (
  SELECT generation_id, track_id,
         substr(md5(coalesce(process_id, chr(1)) || chr(0) || coalesce(thread_id, chr(1)) || chr(0) || kind), 1, 12) AS track_key
  FROM tracks WHERE list_contains($generations, generation_id)
)`;

export const TrackTotalRow = z.object({
  track_key: z.string(),
  process_id: z.string().nullable(),
  process_name: z.string().nullable(),
  thread_id: z.string().nullable(),
  thread_name: z.string().nullable(),
  kind: z.string(),
  /** Sample rows of the metric on the track, and their summed value. */
  samples: z.number().int(),
  value: z.number(),
});
export type TrackTotalRow = z.infer<typeof TrackTotalRow>;

/**
 * Per track key: the metric's sample rows and summed value, heaviest first — what a track
 * selector lists and what "the busiest track" means. Tracks without samples of the metric (span
 * tracks, counters) are left out; samples on no track are a row of their own (null key parts,
 * track_key '(none)'), so the rows always add up to the metric's total.
 */
export const trackTotalsQuery = defineQuery({
  name: "track_totals",
  description: "Per thread/process/profile track: sample rows and summed value of one metric, heaviest first.",
  params: z.object({ generations: GenerationList, metric: z.string().min(1).max(128) }),
  row: TrackTotalRow,
  sql: trackTotalsSql(`per_track AS (
  SELECT s.generation_id, s.track_id, count(*) AS samples, sum(s.value)::DOUBLE AS value
  FROM samples s
  JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
  WHERE m.name = $metric AND list_contains($generations, s.generation_id)
  GROUP BY s.generation_id, s.track_id
)`),
});

/**
 * trackTotalsQuery's rows as extraction stored them (the track_totals table, schema v4): a few
 * rows instead of a scan of every sample. Generations written before v4 have no such table: for
 * them the scan answers (see storesTrackTotals).
 */
export const storedTrackTotalsQuery = defineQuery({
  name: "stored_track_totals",
  description: "Per thread/process/profile track: sample rows and summed value of one metric as extraction stored them, heaviest first.",
  params: z.object({ generations: GenerationList, metric: z.string().min(1).max(128) }),
  row: TrackTotalRow,
  sql: trackTotalsSql(`per_track AS (
  SELECT s.generation_id, s.track_id, s.samples, s.value
  FROM track_totals s
  JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
  WHERE m.name = $metric AND list_contains($generations, s.generation_id)
)`),
});

/** Labels and orders per-track rows (`per_track`: generation, track id, samples, value) by track key. */
function trackTotalsSql(perTrack: string): string {
  return `WITH ${TRACK_KEYS},
${perTrack}
SELECT coalesce(k.track_key, '(none)') AS track_key, any_value(t.process_id) AS process_id, any_value(t.process_name) AS process_name,
       any_value(t.thread_id) AS thread_id, any_value(t.thread_name) AS thread_name, coalesce(any_value(t.kind), 'none') AS kind,
       sum(p.samples)::INTEGER AS samples, sum(p.value)::DOUBLE AS value
FROM per_track p
LEFT JOIN track_keys k ON k.generation_id = p.generation_id AND k.track_id = p.track_id
LEFT JOIN tracks t ON t.generation_id = p.generation_id AND t.track_id = p.track_id
GROUP BY 1
ORDER BY value DESC, samples DESC, track_key`;
}

/**
 * The views a track filter stands in for, each computed from the samples of the chosen tracks as
 * extraction derives the whole run's: `track_samples` (samples), `track_metrics` (metrics, with
 * totals, counts and time span), `track_stack_totals` and `track_frame_totals` (the derived
 * totals; a frame's total counts each sample once under recursion). With a `$metric` parameter
 * only that metric's samples are walked.
 */
function trackViews(byMetric: boolean): string {
  return `${TRACK_KEYS},
track_samples AS (
  SELECT s.* FROM samples s
  JOIN track_keys k ON k.generation_id = s.generation_id AND k.track_id = s.track_id
  WHERE list_contains($tracks, k.track_key)${byMetric ? `
    AND s.metric_id IN (SELECT metric_id FROM metrics m WHERE m.name = $metric AND m.generation_id = s.generation_id)` : ""}
),
track_metrics AS (
  SELECT m.generation_id, m.metric_id, m.name, m.unit, m.kind,
         coalesce(t.total, 0)::DOUBLE AS total, coalesce(t.sample_count, 0)::BIGINT AS sample_count, t.first_ns, t.last_ns
  FROM metrics m
  LEFT JOIN (
    SELECT generation_id, metric_id, sum(value)::DOUBLE AS total, count(*) AS sample_count, min(time_ns) AS first_ns, max(time_ns) AS last_ns
    FROM track_samples GROUP BY generation_id, metric_id
  ) t ON t.generation_id = m.generation_id AND t.metric_id = m.metric_id
  WHERE list_contains($generations, m.generation_id)
),
track_leaf AS (
  SELECT generation_id, metric_id, stack_id, sum(value)::DOUBLE AS value FROM track_samples GROUP BY generation_id, metric_id, stack_id
),
track_up AS (
  SELECT DISTINCT generation_id, stack_id AS leaf_id, stack_id FROM track_leaf
  UNION ALL
  SELECT u.generation_id, u.leaf_id, st.parent_stack_id
  FROM track_up u
  JOIN stacks st ON st.generation_id = u.generation_id AND st.stack_id = u.stack_id
  WHERE st.parent_stack_id IS NOT NULL
),
track_stack_totals AS (
  SELECT u.generation_id, u.stack_id, l.metric_id,
         sum(CASE WHEN u.stack_id = u.leaf_id THEN l.value ELSE 0 END)::DOUBLE AS self, sum(l.value)::DOUBLE AS total
  FROM track_up u JOIN track_leaf l ON l.generation_id = u.generation_id AND l.stack_id = u.leaf_id
  GROUP BY u.generation_id, u.stack_id, l.metric_id
),
track_leaf_frames AS (
  SELECT u.generation_id, u.leaf_id, st.frame_id, bool_or(u.stack_id = u.leaf_id) AS is_leaf
  FROM track_up u JOIN stacks st ON st.generation_id = u.generation_id AND st.stack_id = u.stack_id
  GROUP BY u.generation_id, u.leaf_id, st.frame_id
),
track_frame_totals AS (
  SELECT lf.generation_id, lf.frame_id, l.metric_id,
         sum(CASE WHEN lf.is_leaf THEN l.value ELSE 0 END)::DOUBLE AS self, sum(l.value)::DOUBLE AS total
  FROM track_leaf_frames lf JOIN track_leaf l ON l.generation_id = lf.generation_id AND l.stack_id = lf.leaf_id
  GROUP BY lf.generation_id, lf.frame_id, l.metric_id
)`;
}

/**
 * The track views under other names, for a query that scopes two sets of generations to their own
 * tracks (compare: `b_` and `c_`): every view is prefixed, and it reads `tracksParam` and
 * `generationsParam` instead of `$tracks` and `$generations`.
 */
export function trackViewsFor(prefix: string, tracksParam: string, generationsParam: string): string {
  return trackViews(true)
    .replace(/\btrack_(keys|samples|metrics|leaf_frames|leaf|up|stack_totals|frame_totals)\b/g, `${prefix}track_$1`)
    .replace(/\$tracks\b/g, tracksParam)
    .replace(/\$generations\b/g, generationsParam);
}

/** The views a track filter replaces, as table names after FROM or JOIN (never column names). */
const SCOPED_VIEW = /\b(FROM|JOIN)(\s+)(samples|metrics|stack_totals|frame_totals)\b/g;

const scoped = new WeakMap<EvidenceQuery<any, any>, EvidenceQuery<any, any>>();

/**
 * The query narrowed to the samples of some tracks: a `tracks` parameter (track keys) is added,
 * and its reads of samples, metrics and the derived totals go to the track views above instead.
 * The same definition runs on both engines. The query must read `$generations`.
 */
export function scopeToTracks<P extends z.ZodObject<any>, R extends z.ZodType>(query: EvidenceQuery<P, R>): EvidenceQuery<z.ZodObject<P["shape"] & { tracks: typeof TrackKeyList }>, R> {
  const known = scoped.get(query);
  if (known) return known as never;
  if (!query.sql.includes("$generations")) throw new Error(`${query.name} reads no $generations: it cannot be scoped to tracks`);
  const head = /^\s*WITH(\s+RECURSIVE)?\s+/i.exec(query.sql);
  const body = (head ? query.sql.slice(head[0].length) : query.sql).replace(SCOPED_VIEW, "$1$2track_$3");
  const views = trackViews("metric" in query.params.shape);
  const made = defineQuery({
    name: `${query.name}_of_tracks`,
    description: `${query.description} Only the samples of the tracks named.`,
    params: query.params.extend({ tracks: TrackKeyList }),
    row: query.row,
    sql: `WITH RECURSIVE\n${views},\n${head ? body : `track_result AS (\n${body}\n)\nSELECT * FROM track_result`}`,
  });
  scoped.set(query, made);
  return made as never;
}

/** The track key of samples on no track (track_totals' own row for them). */
export const NO_TRACK = "(none)";

/** A track choice: every track merged, the busiest, or track keys. */
export type TrackChoice = "all" | "busiest" | readonly string[];

/**
 * The track keys a choice scopes a run's answers to, given its track_totals rows (heaviest first):
 * null (no filter: the whole run's derived totals answer) for every track, or when the choice
 * covers them all; else the keys. `chosen` are the rows it covers and `unknown` the keys the run
 * has no sampled track for. The services and the export viewer decide alike.
 */
export function trackFilterOf<R extends Pick<TrackTotalRow, "track_key">>(rows: readonly R[], choice: TrackChoice): { filter: string[] | null; chosen: R[]; unknown: string[] } {
  const real = rows.filter((r) => r.track_key !== NO_TRACK);
  const hasTrackless = real.length < rows.length;
  if (choice === "all") return { filter: null, chosen: [...rows], unknown: [] };
  if (choice === "busiest") {
    if (real.length === 0 || (real.length === 1 && !hasTrackless)) return { filter: null, chosen: [...rows], unknown: [] };
    return { filter: [real[0].track_key], chosen: [real[0]], unknown: [] };
  }
  const known = new Set(real.map((r) => r.track_key));
  const unknown = choice.filter((k) => !known.has(k));
  const chosen = real.filter((r) => choice.includes(r.track_key));
  const filter = chosen.length === real.length && !hasTrackless ? null : chosen.map((r) => r.track_key);
  return { filter, chosen, unknown };
}

/** A track as a person reads it: the thread (or profile) name and id, and its process. */
export function trackLabel(t: Pick<TrackTotalRow, "process_id" | "process_name" | "thread_id" | "thread_name" | "kind">): string {
  if (t.kind === "none") return "(no track)";
  // A speedscope profile: its name is all it has (its thread id is its index in the file).
  if (t.kind === "profile") return t.thread_name ?? `profile ${t.thread_id ?? "?"}`;
  const thread = [t.thread_name, t.thread_id !== null && t.thread_id !== t.process_id ? `tid ${t.thread_id}` : null].filter(Boolean).join(" ");
  const process = [t.process_name && t.process_name !== t.thread_name ? t.process_name : null, t.process_id !== null ? `pid ${t.process_id}` : null].filter(Boolean).join(" ");
  return [thread, process].filter(Boolean).join(" · ") || `${t.kind} track`;
}
