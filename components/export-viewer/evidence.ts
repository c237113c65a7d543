import { renderSql } from "../../analysis/queries/define";
import { addPrunedRemainders, flameTreeQuery, flameTreeRangeQuery, type FlameNode } from "../../analysis/queries/flame-tree";
import { hotspotsQuery, type HotspotRow } from "../../analysis/queries/hotspots";
import { calleesQuery, callersQuery, type NeighbourRow } from "../../analysis/queries/callers";
import { compareQuery, type CompareRow } from "../../analysis/queries/compare";
import { metricTotalsQuery } from "../../analysis/queries/summary";
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
}

/** evidence.flame_tree offline: the whole run's tree, or a time range's, pruned to the budget with remainders. */
export async function flameTree(manifest: Manifest, commitId: string, runId: string, opts: { metric?: string | null; budget?: number; start_ns?: number; end_ns?: number } = {}): Promise<OfflineTree | null> {
  const generations = runGenerations(manifest, commitId, runId);
  const metric = await chooseMetric(manifest, commitId, generations, opts.metric);
  if (!metric) return null;
  const ranged = opts.start_ns !== undefined || opts.end_ns !== undefined;
  const common = { generations, metric: metric.name, budget: opts.budget ?? 20_000 };
  const raw = ranged
    ? await ask<FlameNode>(manifest, commitId, flameTreeRangeQuery, { ...common, start_ns: opts.start_ns ?? null, end_ns: opts.end_ns ?? null })
    : await ask<FlameNode>(manifest, commitId, flameTreeQuery, common);
  return { nodes: addPrunedRemainders(raw).nodes, metric };
}

/** evidence.hotspots offline: the function ranking (self, total) with the grand total. */
export async function hotspots(manifest: Manifest, commitId: string, runId: string, metric: string, limit = 5000): Promise<{ rows: HotspotRow[]; grand_total: number; truncated: boolean }> {
  const generations = runGenerations(manifest, commitId, runId);
  const rows = await ask<HotspotRow>(manifest, commitId, hotspotsQuery, { generations, metric, after_self: null, after_key: null, frame_key: null, limit: limit + 1 });
  return { rows: rows.slice(0, limit), grand_total: rows[0]?.grand_total ?? 0, truncated: rows.length > limit };
}

/** evidence.callers / evidence.callees offline, for the sandwich. */
export async function neighbours(manifest: Manifest, commitId: string, runId: string, metric: string, frameKey: string): Promise<{ callers: NeighbourRow[]; callees: NeighbourRow[] }> {
  const generations = runGenerations(manifest, commitId, runId);
  const params = { generations, metric, frame_key: frameKey, limit: 30 };
  const callers = await ask<NeighbourRow>(manifest, commitId, callersQuery, params);
  const callees = await ask<NeighbourRow>(manifest, commitId, calleesQuery, params);
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
