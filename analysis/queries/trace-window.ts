import { z } from "zod";
import { defineQuery } from "./define";
import { GenerationList } from "./columns";
import { TRACK_KEYS } from "./tracks";

export const WindowSpan = z.object({
  generation_id: z.string(),
  span_id: z.number().int(),
  track_id: z.number().int(),
  parent_span_id: z.number().int().nullable(),
  name: z.string(),
  category: z.string().nullable(),
  start_ns: z.number(),
  dur_ns: z.number(),
  depth: z.number().int(),
  status: z.string().nullable(),
  args: z.string().nullable(),
});
export type WindowSpan = z.infer<typeof WindowSpan>;

/**
 * Spans overlapping [start_ns, end_ns), by track then start; keyset after (track, start, span,
 * generation): span ids restart in each generation, so a run of several can repeat the rest.
 * $tracks is cast because an empty list renders untyped (VARCHAR[]); no tracks then means no spans.
 */
export const traceWindowQuery = defineQuery({
  name: "trace_window",
  description: "Spans that overlap a time window, ordered by track and start.",
  params: z.object({
    generations: GenerationList,
    start_ns: z.number().int(),
    end_ns: z.number().int(),
    /**
     * Spans up to this long are found by a scan bounded below on start_ns (start_ns minus this),
     * which lets row groups before the window be skipped; the few longer ones by a scan on
     * dur_ns. See spanExtentQuery. The default finds every span by the first scan, unbounded.
     */
    long_dur_ns: z.number().int().default(Number.MAX_SAFE_INTEGER),
    tracks: z.array(z.number().int()).max(1000).nullable().default(null),
    after_track: z.number().int().nullable().default(null),
    after_start: z.number().int().nullable().default(null),
    after_span: z.number().int().nullable().default(null),
    after_generation: z.string().nullable().default(null),
    limit: z.number().int().min(1).max(10_000),
  }),
  row: WindowSpan,
  sql: `WITH hits AS (
  SELECT * FROM spans
  WHERE list_contains($generations, generation_id)
    AND start_ns < $end_ns AND start_ns >= $start_ns - $long_dur_ns AND dur_ns <= $long_dur_ns AND start_ns + dur_ns >= $start_ns
  UNION ALL
  SELECT * FROM spans
  WHERE list_contains($generations, generation_id)
    AND start_ns < $end_ns AND dur_ns > $long_dur_ns AND start_ns + dur_ns >= $start_ns
)
SELECT generation_id, span_id::BIGINT AS span_id, track_id, parent_span_id::BIGINT AS parent_span_id, name, category,
       start_ns::DOUBLE AS start_ns, dur_ns::DOUBLE AS dur_ns, depth, status, args
FROM hits
WHERE ($tracks IS NULL OR list_contains($tracks::INTEGER[], track_id))
  AND ($after_track IS NULL OR (track_id, start_ns, span_id, generation_id) > ($after_track, $after_start, $after_span, $after_generation))
ORDER BY track_id, start_ns, span_id, generation_id
LIMIT $limit`,
});

/**
 * Every span of a run, in trace_window's columns and order: what the server's in-memory span index
 * is built from (once per run), so windows need not go back to the Parquet files. The generation
 * comes as its 1-based position in $generations, not its id repeated on every row.
 */
export const spanIndexQuery = defineQuery({
  name: "span_index",
  description: "Every span of a run in trace_window's columns and order (loads the server's span index).",
  params: z.object({ generations: GenerationList }),
  row: WindowSpan.omit({ generation_id: true }).extend({ generation: z.number().int() }),
  sql: `SELECT list_position($generations, generation_id)::INTEGER AS generation, span_id::BIGINT AS span_id, track_id, parent_span_id::BIGINT AS parent_span_id,
       name, category, start_ns::DOUBLE AS start_ns, dur_ns::DOUBLE AS dur_ns, depth, status, args
FROM spans
WHERE list_contains($generations, generation_id)
ORDER BY track_id, start_ns, span_id, generation_id`,
});

/**
 * Where "long" spans start, for trace_window: the 99.9th percentile of span durations. A window
 * then reads the row groups from its start minus that, plus the rare longer spans by duration;
 * one very long span (a process-lifetime slice) no longer widens every window's scan.
 */
export const spanExtentQuery = defineQuery({
  name: "span_extent",
  description: "The span duration beyond which a run's spans count as long (bounds time-window scans).",
  params: z.object({ generations: GenerationList }),
  row: z.object({ long_dur_ns: z.number().nullable() }),
  sql: `SELECT quantile_disc(dur_ns, 0.999)::DOUBLE AS long_dur_ns FROM spans WHERE list_contains($generations, generation_id)`,
});

export const TrackRow = z.object({
  track_id: z.number().int(),
  /** The track's name across generations and commits (analysis/queries/tracks.ts). */
  track_key: z.string(),
  process_id: z.string().nullable(),
  process_name: z.string().nullable(),
  thread_id: z.string().nullable(),
  thread_name: z.string().nullable(),
  kind: z.string(),
  spans: z.number().int(),
  samples: z.number().int(),
});

/**
 * Tracks with their span counts but not their sample counts: a read of the tracks table (and of
 * the spans' two key columns), not of every sample. Time order takes its tracks' sample counts
 * from the metric's track totals instead (kept: the flame tree asks them too).
 */
export const trackSpansQuery = defineQuery({
  name: "track_spans",
  description: "Tracks (processes, threads, services) with their span counts (no sample counts: no pass over the samples).",
  params: z.object({ generations: GenerationList }),
  row: TrackRow.omit({ samples: true }),
  sql: `WITH ${TRACK_KEYS},
span_counts AS (
  SELECT generation_id, track_id, count(*) AS spans FROM spans WHERE list_contains($generations, generation_id) GROUP BY generation_id, track_id
)
SELECT t.track_id, k.track_key, t.process_id, t.process_name, t.thread_id, t.thread_name, t.kind, coalesce(c.spans, 0)::INTEGER AS spans
FROM tracks t
JOIN track_keys k ON k.generation_id = t.generation_id AND k.track_id = t.track_id
LEFT JOIN span_counts c ON c.generation_id = t.generation_id AND c.track_id = t.track_id
ORDER BY t.track_id, t.generation_id`,
});

export const tracksQuery = defineQuery({
  name: "tracks",
  description: "Tracks (processes, threads, services) with their span and sample counts.",
  params: z.object({ generations: GenerationList }),
  row: TrackRow,
  sql: `WITH ${TRACK_KEYS}
SELECT t.track_id, k.track_key, t.process_id, t.process_name, t.thread_id, t.thread_name, t.kind,
       (SELECT count(*) FROM spans s WHERE s.generation_id = t.generation_id AND s.track_id = t.track_id)::INTEGER AS spans,
       (SELECT count(*) FROM samples s WHERE s.generation_id = t.generation_id AND s.track_id = t.track_id)::INTEGER AS samples
FROM tracks t
JOIN track_keys k ON k.generation_id = t.generation_id AND k.track_id = t.track_id
ORDER BY t.track_id`,
});
