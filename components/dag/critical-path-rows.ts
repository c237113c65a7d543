"use client";

import { criticalPathEdgesQuery, criticalPathSpansQuery, renderSql, tracksQuery } from "../../analysis/queries";
import type { TrackRow } from "../../analysis/critical-path/report";
import type { EdgeRow, SpanRow } from "../../analysis/workflow/from-spans";
import type { ErrorDocument } from "../../server/domain/errors";
import { openCommitSession } from "../sql/duckdb-session";

/** What the page computes a run's critical path from, read by DuckDB-WASM from the pinned commit's Parquet. */
export interface CriticalPathRows {
  commitId: string;
  /** The generation read: the run's newest that has spans, as the server's critical_path.get reads. */
  generation: string | null;
  spans: SpanRow[];
  edges: EdgeRow[];
  tracks: TrackRow[];
}

/** The most spans the page reads: as many as the server computes a critical path for (MAX_CRITICAL_PATH_SPANS), and the same refusal beyond. */
export const MAX_PAGE_SPANS = 1_000_000;
const MAX_PAGE_EDGES = 8_000_000;

/**
 * The run's spans, causal edges and tracks at the commit, through the same evidence queries the
 * server runs (analysis/queries/critical-path.ts), in the browser over the commit's Parquet files.
 */
export async function loadCriticalPathRows(runId: string, commitId: string): Promise<CriticalPathRows | ErrorDocument> {
  const session = await openCommitSession(commitId, runId, ["spans", "edges", "tracks"]);
  performance.mark("emberscope:dag-session");
  for (const generation of [...session.generations].reverse()) {
    const spans = (await session.query(renderSql(criticalPathSpansQuery.sql, { generation, limit: MAX_PAGE_SPANS + 1 }))).rows as unknown as SpanRow[];
    if (spans.length === 0) continue;
    if (spans.length > MAX_PAGE_SPANS) {
      return {
        code: "QUERY_BUDGET_EXCEEDED",
        message: `The run has more than ${MAX_PAGE_SPANS.toLocaleString("en-US")} spans; its critical path is computed for at most that many.`,
        retryable: false,
        details: { run_id: runId, limit: MAX_PAGE_SPANS },
      };
    }
    const edges = (await session.query(renderSql(criticalPathEdgesQuery.sql, { generation, limit: MAX_PAGE_EDGES }))).rows as unknown as EdgeRow[];
    const tracks = (await session.query(renderSql(tracksQuery.sql, { generations: [generation] }))).rows as unknown as TrackRow[];
    performance.mark("emberscope:dag-rows");
    return { commitId: session.commitId, generation, spans, edges, tracks };
  }
  return { commitId: session.commitId, generation: null, spans: [], edges: [], tracks: [] };
}
