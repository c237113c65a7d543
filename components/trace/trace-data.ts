"use client";

import type { summarizeRun, traceWindow } from "../../server/services/evidence";
import type { traceFlows } from "../../server/services/trace-flows";
import type { z } from "zod";
import { createContext } from "react";
import type { flameTree } from "../../server/services/evidence";
import { callQuery } from "../home/trpc-client";
import type { TrackChoice } from "../flame/TrackSelector";
import type { TrackSelection } from "../flame/track-selection";
import { trackLabel } from "./layout";

export type Summary = z.output<(typeof summarizeRun)["output"]>;
export type WindowResult = z.output<(typeof traceWindow)["output"]>;
export type Span = WindowResult["spans"][number];
export type Track = WindowResult["tracks"][number];
export type Flow = z.output<(typeof traceFlows)["output"]>["flows"][number];
export type RangeFlameResult = Pick<z.output<(typeof flameTree)["output"]>, "nodes" | "metric" | "unit" | "commit_id" | "status">;
/** What the trace window reads of a run's summary: the span totals, the tracks and the commit. */
export type TraceSummary = Pick<Summary, "spans" | "tracks" | "commit_id">;
export type WindowPage = Pick<WindowResult, "spans" | "next_cursor" | "commit_id">;

/**
 * Where the trace window's evidence comes from: the server (evidence.summary, trace_window,
 * trace_flows, flame_tree over tRPC) in the app, DuckDB-WASM over the file's own Parquet in an
 * export (components/export-viewer/trace-source.ts). The window itself is the same either way.
 */
export interface TraceSource {
  summary(runId: string, commitId: string): Promise<TraceSummary>;
  windowPage(args: { runId: string; commitId: string; start_ns: number; end_ns: number; track: number; limit: number; cursor?: string }): Promise<WindowPage>;
  flows(args: { runId: string; commitId: string; start_ns: number; end_ns: number; limit: number }): Promise<{ flows: Flow[]; truncated: boolean }>;
  rangeFlame(args: { runId: string; commitId: string; start_ns: number; end_ns: number; budget: number }): Promise<RangeFlameResult>;
}

export const serverTraceSource: TraceSource = {
  summary: (runId, commitId) => callQuery<typeof summarizeRun>("evidence.summary", { run_id: runId, commit_id: commitId }),
  windowPage: (a) =>
    callQuery<typeof traceWindow>("evidence.trace_window", { run_id: a.runId, commit_id: a.commitId, start_ns: a.start_ns, end_ns: a.end_ns, tracks: [a.track], limit: a.limit, ...(a.cursor ? { cursor: a.cursor } : {}) }),
  flows: (a) => callQuery<typeof traceFlows>("evidence.trace_flows", { run_id: a.runId, commit_id: a.commitId, start_ns: a.start_ns, end_ns: a.end_ns, limit: a.limit }),
  rangeFlame: (a) => callQuery<typeof flameTree>("evidence.flame_tree", { run_id: a.runId, commit_id: a.commitId, start_ns: a.start_ns, end_ns: a.end_ns, budget: a.budget }),
};

/** The trace window's source: the server unless a provider (the export viewer) names another. */
export const TraceSourceContext = createContext<TraceSource>(serverTraceSource);

export interface LoadedWindow {
  start_ns: number;
  end_ns: number;
  spans: Span[];
  /** Tracks whose spans in the window did not all fit the budget. */
  truncatedTracks: number[];
  /** The tracks whose spans were read (the selection's); others' spans were not fetched. */
  trackIds: number[];
  commit_id: string;
}

const PAGE = 5000;

/** The trace window's track selector choices: the tracks with spans, busiest first. */
export function spanTrackChoices(tracks: readonly Track[]): TrackChoice[] {
  return tracks
    .filter((t) => t.spans > 0)
    .map((t) => ({ track_key: t.track_key, label: trackLabel(t), process_id: t.process_id, process_name: t.process_name, thread_id: t.thread_id, thread_name: t.thread_name, kind: t.kind, samples: t.spans, value: t.spans }))
    .sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
}

/** The keys of the tracks a selection leaves shown (null: every track): "busiest" is the track with the most spans; keys the run lacks are ignored (none left: every track). */
export function shownTrackKeys(choices: readonly TrackChoice[], selection: TrackSelection): ReadonlySet<string> | null {
  if (selection === "all" || choices.length < 2) return null;
  if (selection === "busiest") return new Set([choices[0].track_key]);
  const known = selection.filter((k) => choices.some((t) => t.track_key === k));
  return known.length ? new Set(known) : null;
}

/** The tracks with spans a selection shows: the ones the window reads. */
export function tracksToLoad(tracks: readonly Track[], selection: TrackSelection): Track[] {
  const shown = shownTrackKeys(spanTrackChoices(tracks), selection);
  return tracks.filter((t) => t.spans > 0 && (shown === null || shown.has(t.track_key)));
}

/**
 * Spans of a window on the selected tracks, fetched per track in keyset pages (evidence.trace_window)
 * so that every track shows something even when the whole window does not fit the budget. The
 * tracks the selection hides are not read at all.
 */
export async function loadWindow(source: TraceSource, args: { runId: string; commitId: string; tracks: Track[]; selection: TrackSelection; start_ns: number; end_ns: number; budget: number; signal?: { cancelled: boolean } }): Promise<LoadedWindow> {
  const withSpans = tracksToLoad(args.tracks, args.selection);
  const share = Math.max(PAGE, Math.floor(args.budget / Math.max(1, withSpans.length)));
  const spans: Span[] = [];
  const truncated: number[] = [];
  let commit = args.commitId;
  const start_ns = Math.floor(args.start_ns);
  const end_ns = Math.max(start_ns + 1, Math.ceil(args.end_ns));
  const one = async (track: Track) => {
    let cursor: string | undefined;
    let got = 0;
    for (;;) {
      if (args.signal?.cancelled) return;
      const page = await source.windowPage({ runId: args.runId, commitId: args.commitId, start_ns, end_ns, track: track.track_id, limit: Math.min(PAGE, share - got), cursor });
      commit = page.commit_id;
      for (const s of page.spans) spans.push(s);
      got += page.spans.length;
      if (!page.next_cursor) return;
      if (got >= share) {
        truncated.push(track.track_id);
        return;
      }
      cursor = page.next_cursor;
    }
  };
  // A few tracks at a time: the server answers each from the same pinned reader.
  const queue = [...withSpans];
  await Promise.all(
    Array.from({ length: Math.min(3, queue.length) }, async () => {
      for (let t = queue.shift(); t; t = queue.shift()) await one(t);
    }),
  );
  return { start_ns, end_ns, spans, truncatedTracks: truncated, trackIds: withSpans.map((t) => t.track_id), commit_id: commit };
}

export async function loadFlows(source: TraceSource, runId: string, commitId: string, start_ns: number, end_ns: number): Promise<{ flows: Flow[]; truncated: boolean }> {
  const s = Math.floor(start_ns);
  return source.flows({ runId, commitId, start_ns: s, end_ns: Math.max(s + 1, Math.ceil(end_ns)), limit: 2000 });
}
