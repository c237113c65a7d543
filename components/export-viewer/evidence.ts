import { renderSql } from "../../analysis/queries/define";
import { addPrunedRemainders, flameTreeRangeQuery, type FlameNode } from "../../analysis/queries/flame-tree";
import { hotspotsQuery, type HotspotRow } from "../../analysis/queries/hotspots";
import { calleesQuery, callersQuery, type NeighbourRow } from "../../analysis/queries/callers";
import { compareQuery, type CompareRow } from "../../analysis/queries/compare";
import { metricTotalsQuery } from "../../analysis/queries/summary";
import { scopeToTracks, trackFilterOf, trackLabel, trackTotalsQuery, type TrackChoice, type TrackTotalRow } from "../../analysis/queries/tracks";
import { transformedCalleesQuery, transformedCallersQuery, transformedHotspotsQuery, wholeRunTreeQuery, type Transform } from "../../analysis/queries/transforms";
import type { Manifest } from "./bundle";
import { openSession } from "./engine";

/**
 * The server's evidence questions asked offline: the same pure queries (analysis/queries/) run by
 * DuckDB-WASM over the export's own Parquet, scoped to a run's generations at a commit as the
 * services scope them. What the server adds around them (metric choice, pruned remainders) is
 * repeated here from the same helpers.
 */

/** Preferred metric when a cell names none: the services' order (server/services/evidence.ts). */
export const METRIC_PREFERENCE = ["cpu_ns", "wall_ns", "samples", "alloc_bytes", "instructions", "Ir"];

export function runGenerations(manifest: Manifest, commitId: string, runId: string): string[] {
  return manifest.generations.filter((g) => g.run_id === runId && g.commit_ids.includes(commitId)).map((g) => g.generation_id);
}

export async function ask<R>(manifest: Manifest, commitId: string, query: { sql: string }, params: Record<string, unknown>): Promise<R[]> {
  const session = await openSession(manifest, commitId);
  return (await session.query(renderSql(query.sql, params))).rows as R[];
}

export interface Metric {
  name: string;
  unit: string;
  total: number;
  first_ns: number | null;
  last_ns: number | null;
}

/** The run's metric: the one named if it has it, else the services' preference among those with samples. */
export async function chooseMetric(manifest: Manifest, commitId: string, generations: string[], requested?: string | null): Promise<Metric | null> {
  if (!generations.length) return null;
  const rows = await ask<Metric & { samples: number }>(manifest, commitId, metricTotalsQuery, { generations });
  if (requested) return rows.find((m) => m.name === requested) ?? null;
  const present = rows.filter((m) => m.samples > 0);
  return METRIC_PREFERENCE.map((n) => present.find((m) => m.name === n)).find(Boolean) ?? present[0] ?? null;
}

export interface OfflineTree {
  nodes: FlameNode[];
  metric: Metric;
  /** The tracks the tree covers, labelled, when the cell chose some (null: every track merged). */
  tracks: string[] | null;
}

/** What a flame, sandwich or call-tree cell keeps of its view: its tracks and transforms (absent: all tracks, none). */
export interface SampleView {
  tracks?: TrackChoice;
  transforms?: readonly Transform[];
  inverted?: boolean;
}

/** The cell's view as its content keeps it (analysis/notebook/cells: tracks, transforms, inverted). */
export function sampleViewOf(content: Record<string, unknown>): SampleView {
  return { tracks: content.tracks as TrackChoice | undefined, transforms: content.transforms as Transform[] | undefined, inverted: content.inverted === true };
}

/**
 * The track keys the services would scope this run's answers to (resolveTracks, by the same
 * trackFilterOf), or null for the whole run. A key the export has no sampled track for fails, as
 * the service's INVALID_ARGUMENTS does.
 */
async function trackFilter(manifest: Manifest, commitId: string, generations: string[], metric: string, choice: TrackChoice | undefined): Promise<string[] | null> {
  return (await tracksOf(manifest, commitId, generations, metric, choice)).filter;
}

async function tracksOf(manifest: Manifest, commitId: string, generations: string[], metric: string, choice: TrackChoice | undefined): Promise<{ filter: string[] | null; labels: string[] | null }> {
  if (!choice || choice === "all") return { filter: null, labels: null };
  const rows = await ask<TrackTotalRow>(manifest, commitId, trackTotalsQuery, { generations, metric });
  const { filter, chosen, unknown } = trackFilterOf(rows, choice);
  if (unknown.length) throw new Error(`The export has no track ${unknown[0]} with samples of ${metric} for this run.`);
  return { filter, labels: chosen.map(trackLabel) };
}

/** Asks a query over the chosen tracks' samples only (the whole run's when no filter), as the services' runOnTracks. */
function askOnTracks<R>(manifest: Manifest, commitId: string, query: Parameters<typeof scopeToTracks>[0], params: Record<string, unknown>, filter: string[] | null): Promise<R[]> {
  return filter ? ask<R>(manifest, commitId, scopeToTracks(query), { ...params, tracks: filter }) : ask<R>(manifest, commitId, query, params);
}

/**
 * evidence.flame_tree offline: the whole run's tree (on the cell's tracks, with its transforms,
 * inverted if asked), or a time range's, pruned to the budget with remainders.
 */
export async function flameTree(
  manifest: Manifest,
  commitId: string,
  runId: string,
  opts: { metric?: string | null; budget?: number; start_ns?: number; end_ns?: number } & SampleView = {},
): Promise<OfflineTree | null> {
  const generations = runGenerations(manifest, commitId, runId);
  const metric = await chooseMetric(manifest, commitId, generations, opts.metric);
  if (!metric) return null;
  const { filter, labels } = await tracksOf(manifest, commitId, generations, metric.name, opts.tracks);
  const ranged = opts.start_ns !== undefined || opts.end_ns !== undefined;
  const transforms = opts.transforms ?? [];
  const common = { generations, metric: metric.name, budget: opts.budget ?? 20_000 };
  // A range is the untransformed tree of its samples (as the service's flame_tree).
  const raw =
    ranged && !transforms.length && !opts.inverted
      ? await askOnTracks<FlameNode>(manifest, commitId, flameTreeRangeQuery, { ...common, start_ns: opts.start_ns ?? null, end_ns: opts.end_ns ?? null }, filter)
      : await askOnTracks<FlameNode>(manifest, commitId, wholeRunTreeQuery(transforms, opts.inverted === true), common, filter);
  return { nodes: addPrunedRemainders(raw).nodes, metric, tracks: labels };
}

/** evidence.hotspots offline: the function ranking (self, total) with the grand total, on the view's tracks and transforms. */
export async function hotspots(manifest: Manifest, commitId: string, runId: string, metric: string, view: SampleView = {}, limit = 5000): Promise<{ rows: HotspotRow[]; grand_total: number; truncated: boolean }> {
  const generations = runGenerations(manifest, commitId, runId);
  const filter = await trackFilter(manifest, commitId, generations, metric, view.tracks);
  const query = view.transforms?.length ? transformedHotspotsQuery(view.transforms) : hotspotsQuery;
  const rows = await askOnTracks<HotspotRow>(manifest, commitId, query, { generations, metric, after_self: null, after_key: null, frame_key: null, limit: limit + 1 }, filter);
  return { rows: rows.slice(0, limit), grand_total: rows[0]?.grand_total ?? 0, truncated: rows.length > limit };
}

/** evidence.callers / evidence.callees offline, for the sandwich (on the view's tracks and transforms). */
export async function neighbours(manifest: Manifest, commitId: string, runId: string, metric: string, frameKey: string, view: SampleView = {}): Promise<{ callers: NeighbourRow[]; callees: NeighbourRow[] }> {
  const generations = runGenerations(manifest, commitId, runId);
  const filter = await trackFilter(manifest, commitId, generations, metric, view.tracks);
  const transforms = view.transforms ?? [];
  const params = { generations, metric, frame_key: frameKey, limit: 30 };
  const callers = await askOnTracks<NeighbourRow>(manifest, commitId, transforms.length ? transformedCallersQuery(transforms) : callersQuery, params, filter);
  const callees = await askOnTracks<NeighbourRow>(manifest, commitId, transforms.length ? transformedCalleesQuery(transforms) : calleesQuery, params, filter);
  return { callers, callees };
}

/** evidence.compare offline: the largest changes between two runs' functions. */
export async function compareRows(manifest: Manifest, commitId: string, base: string, candidate: string, metric: string, normalize: boolean): Promise<CompareRow[]> {
  return ask<CompareRow>(manifest, commitId, compareQuery, {
    base_generations: runGenerations(manifest, commitId, base),
    candidate_generations: runGenerations(manifest, commitId, candidate),
    metric,
    normalize,
    collection: "changed",
    limit: 50,
  });
}
