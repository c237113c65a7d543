import type { DuckDBConnection } from "@duckdb/node-api";
import { TABLES, TABLE_NAMES, type ColumnSpec } from "../../analysis/evidence/schema";
import { renderSql } from "../../analysis/queries/define";
import { addPrunedRemainders, type FlameNode } from "../../analysis/queries/flame-tree";
import { metricTotalsQuery } from "../../analysis/queries/summary";
import { scopeToTracks, trackFilterOf, trackTotalsQuery, type TrackChoice } from "../../analysis/queries/tracks";
import { wholeRunTreeQuery, type Transform } from "../../analysis/queries/transforms";
import { sqlString } from "../evidence/duckdb";

/**
 * The flame summaries an export carries (its `summaries.json` part): for each flame cell, the
 * heaviest call paths of its run at its commit (on the cell's tracks, with its transforms), computed from the export's own redacted Parquet
 * (never the workspace's files, so a summary holds nothing the evidence parts do not). The viewer
 * draws them at once and replaces them by the live tree when DuckDB-WASM is ready.
 */

/** Call paths kept per summary: enough for the flame graph at a glance, small next to the evidence. */
export const SUMMARY_BUDGET = 1500;

/** The services' metric preference (server/services/evidence.ts). */
const METRIC_PREFERENCE = ["cpu_ns", "wall_ns", "samples", "alloc_bytes", "instructions", "Ir"];

export interface SummaryRequest {
  cell_id: string;
  generations: string[];
  metric: string | null;
  /** The cell's view (absent: every track, no transform): the summary is of the graph the cell draws. */
  tracks?: TrackChoice;
  transforms?: readonly Transform[];
  inverted?: boolean;
}

export interface FlameSummary {
  metric: string;
  unit: string | null;
  nodes: FlameNode[];
}

/** Views of the redacted files (by table, each row with its generation), as the viewer builds them. */
async function createViews(connection: DuckDBConnection, files: readonly { generation_id: string; table: string; path: string }[]): Promise<void> {
  for (const table of TABLE_NAMES) {
    const mine = files.filter((f) => f.table === table);
    const spec = TABLES[table] as readonly ColumnSpec[];
    const selects: string[] = [];
    for (const f of mine) {
      // Evidence files carry their generation_id; a file that does not gets it here.
      const columns = (await connection.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(${sqlString(f.path)}))`)).getRowObjectsJS() as { column_name: string }[];
      const has = columns.some((c) => c.column_name === "generation_id");
      selects.push(has ? `SELECT * FROM read_parquet(${sqlString(f.path)})` : `SELECT ${sqlString(f.generation_id)} AS generation_id, * FROM read_parquet(${sqlString(f.path)})`);
    }
    const body = mine.length
      ? selects.join(" UNION ALL BY NAME ")
      : `SELECT ${["NULL::VARCHAR AS generation_id", ...spec.map((c) => `NULL::${c.type} AS "${c.name}"`)].join(", ")} WHERE FALSE`;
    await connection.run(`CREATE OR REPLACE TEMP VIEW "${table}" AS ${body}`);
  }
}

export async function flameSummaries(connection: DuckDBConnection, files: readonly { generation_id: string; table: string; path: string }[], requests: readonly SummaryRequest[]): Promise<Record<string, FlameSummary>> {
  const out: Record<string, FlameSummary> = {};
  if (!requests.length) return out;
  await createViews(connection, files);
  for (const request of requests) {
    if (!request.generations.length) continue;
    const metrics = (await connection.runAndReadAll(renderSql(metricTotalsQuery.sql, { generations: request.generations }))).getRowObjectsJS() as { name: string; unit: string; samples: number }[];
    const present = metrics.filter((m) => Number(m.samples) > 0);
    const metric = request.metric ? metrics.find((m) => m.name === request.metric) : (METRIC_PREFERENCE.map((n) => present.find((m) => m.name === n)).find(Boolean) ?? present[0]);
    if (!metric) continue;
    const params: Record<string, unknown> = { generations: request.generations, metric: metric.name, budget: SUMMARY_BUDGET };
    const ask = async (sql: string, extra: Record<string, unknown> = {}) => (await connection.runAndReadAll(renderSql(sql, { ...params, ...extra }))).getRowObjectsJS() as Record<string, unknown>[];
    // The tracks the services would read for this choice (the same trackFilterOf); a key the export lacks: no summary (the viewer says why).
    const choice = request.tracks ?? "all";
    const picked = choice === "all" ? { filter: null, unknown: [] } : trackFilterOf((await ask(trackTotalsQuery.sql)) as { track_key: string }[], choice);
    if (picked.unknown.length) continue;
    const transforms = request.transforms ?? [];
    const query = wholeRunTreeQuery(transforms, request.inverted === true);
    const rows = picked.filter ? await ask(scopeToTracks(query).sql, { tracks: picked.filter }) : await ask(query.sql);
    const nodes = rows.map((r) => ({ ...r, line: r.line === null ? null : Number(r.line), depth: Number(r.depth), self: Number(r.self), total: Number(r.total) }) as FlameNode);
    out[request.cell_id] = { metric: metric.name, unit: metric.unit, nodes: addPrunedRemainders(nodes).nodes };
  }
  for (const table of TABLE_NAMES) await connection.run(`DROP VIEW IF EXISTS "${table}"`);
  return out;
}
