import { z } from "zod";
import { NO_TRACK, TrackKeyList, TrackTotalRow, storedTrackTotalsQuery, trackFilterOf, trackLabel, trackTotalsQuery } from "../../analysis/queries/tracks";
import { trackSpansQuery, type TrackRow as TrackRowSchema } from "../../analysis/queries/trace-window";
import { EmberscopeError } from "../domain/errors";
import type { RunEvidence } from "./evidence";

type TrackRow = z.infer<typeof TrackRowSchema>;

/**
 * Which threads, processes or profiles an evidence answer reads (the track filter of every
 * sample view, in the UI's URL and the agent's tools), and the coverage it reports back.
 */

/** Most tracks an answer lists (a system-wide perf capture has hundreds of threads). */
const LISTED_TRACKS = 50;
/** Most tracks a selector is offered. */
const TRACK_CHOICES = 1000;

/** "all", "busiest" or track keys. */
export const TrackSelection = z.union([z.enum(["all", "busiest"]), TrackKeyList.min(1)]);

export const TracksArg = TrackSelection.default("all")
  .describe('Which threads/processes/profiles to read: "all" (default, merged), "busiest" (the track with the most of the metric), or a list of track_key values from summarize_run\'s sampled_tracks.');
export type TracksArg = z.infer<typeof TracksArg>;

export const TrackEntry = TrackTotalRow.extend({ label: z.string().describe("Thread (or profile) name and id, and its process.") });
export type TrackEntry = z.infer<typeof TrackEntry>;

export const TrackCoverage = z
  .object({
    selection: z.enum(["all", "busiest", "chosen"]),
    covered: z.array(TrackEntry).describe(`The tracks whose samples the answer reads, heaviest first (at most ${LISTED_TRACKS}).`),
    covered_count: z.number().int().describe("How many tracks the answer reads."),
    sampled_tracks: z.number().int().describe("How many tracks of the run have samples of the metric."),
    value: z.number().describe("The metric's value on the covered tracks."),
  })
  .describe("Which tracks (threads, processes, profiles) the answer covers.");
export type TrackCoverage = z.infer<typeof TrackCoverage>;

export interface ResolvedTracks {
  /** Track keys to scope the queries to, or null to read the whole run (the derived totals). */
  filter: string[] | null;
  coverage: TrackCoverage;
  /** Every sampled track of the metric, heaviest first (for a selector; bounded). */
  choices: TrackEntry[];
}

/**
 * Labelled track lists kept per (generations, metric): a generation's evidence never changes, and
 * every sample answer (each page an agent walks) starts by resolving its tracks.
 */
const trackLists = new Map<string, readonly TrackEntry[]>();
const MAX_TRACK_LISTS = 256;

/** The run's tracks with samples of the metric, heaviest first, labelled (shared: read, never change). */
export async function sampledTracks(evidence: RunEvidence, metric: string): Promise<readonly TrackEntry[]> {
  if (!evidence.generations.length) return [];
  const key = `${evidence.generations.join(",")}\0${metric}`;
  let list = trackLists.get(key);
  if (!list) {
    const query = storesTrackTotals(evidence) ? storedTrackTotalsQuery : trackTotalsQuery;
    const rows = await evidence.reader.runShared(query, { generations: evidence.generations, metric });
    list = rows.map((r) => ({ ...r, label: trackLabel(r) }));
    if (trackLists.size >= MAX_TRACK_LISTS) trackLists.delete(trackLists.keys().next().value!);
    trackLists.set(key, list);
  }
  return list;
}

/**
 * Whether every generation of the run with samples stored its track totals (schema v4 on): then
 * the track list is a few stored rows, else a scan of every sample (about a second at 10 M, which
 * each CLI command, a process of its own, paid again).
 */
export function storesTrackTotals(evidence: RunEvidence): boolean {
  const wanted = new Set(evidence.generations);
  return evidence.reader.commit.generations
    .filter((g) => wanted.has(g.generation_id))
    .every((g) => !g.files.some((f) => f.table === "samples") || g.files.some((f) => f.table === "track_totals"));
}

/**
 * The run's tracks with samples of the metric, by track id (one row per track key): what time
 * order lists to pick a thread from, each with its samples of the metric. The counts are the
 * metric's track totals (kept, and asked by the flame tree too), not a count of every sample of
 * every metric (a pass over all samples: 140–270 ms at 1 M samples, before the merge could start).
 */
export async function sampledTrackRows(evidence: RunEvidence, metric: string): Promise<TrackRow[]> {
  if (!evidence.generations.length) return [];
  const [totals, tracks] = await Promise.all([sampledTracks(evidence, metric), evidence.reader.run(trackSpansQuery, { generations: evidence.generations })]);
  const samples = new Map(totals.map((t) => [t.track_key, t.samples]));
  const rows: TrackRow[] = [];
  for (const t of tracks) {
    const n = samples.get(t.track_key);
    if (!n) continue;
    rows.push({ ...t, samples: n });
    samples.delete(t.track_key);
  }
  return rows;
}

/**
 * The tracks an answer reads. The whole run (no filter: the derived totals answer) when every
 * track is asked for, or the only one there is; else the chosen keys, each of which must be a
 * sampled track of the metric (INVALID_ARGUMENTS names the ones there are).
 */
export async function resolveTracks(evidence: RunEvidence, metric: string | null, requested: TracksArg): Promise<ResolvedTracks> {
  const rows = metric ? await sampledTracks(evidence, metric) : [];
  const real = rows.filter((r) => r.track_key !== NO_TRACK);
  const cover = (selection: TrackCoverage["selection"], covered: readonly TrackEntry[]): TrackCoverage => ({
    selection,
    covered: covered.slice(0, LISTED_TRACKS),
    covered_count: covered.length,
    sampled_tracks: real.length,
    value: covered.reduce((sum, r) => sum + r.value, 0),
  });
  const choices = real.slice(0, TRACK_CHOICES);
  const { filter, chosen, unknown } = trackFilterOf(rows, requested);
  if (unknown.length) {
    throw new EmberscopeError("INVALID_ARGUMENTS", `The run has no track ${unknown[0]} with samples of ${metric ?? "any metric"}.`, {
      details: { argument: "tracks", unknown: unknown.slice(0, 20), available: real.slice(0, 20).map((r) => ({ track_key: r.track_key, label: r.label })) },
    });
  }
  return { filter, coverage: cover(Array.isArray(requested) ? "chosen" : (requested as "all" | "busiest"), chosen), choices };
}

/** One line saying which tracks an answer covers (MCP summaries, CLI). */
export function coverageNote(coverage: TrackCoverage): string {
  if (coverage.sampled_tracks <= 1) return "";
  if (coverage.covered_count >= coverage.sampled_tracks) return ` All ${coverage.sampled_tracks} tracks merged.`;
  const names = coverage.covered.slice(0, 3).map((t) => t.label).join(", ");
  return ` ${coverage.covered_count} of ${coverage.sampled_tracks} tracks: ${names}${coverage.covered_count > 3 ? ", …" : ""}.`;
}
