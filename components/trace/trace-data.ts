"use client";

import type { summarizeRun, traceWindow } from "../../server/services/evidence";
import type { traceFlows } from "../../server/services/trace-flows";
import type { z } from "zod";
import { callQuery } from "../home/trpc-client";

export type Summary = z.output<(typeof summarizeRun)["output"]>;
export type WindowResult = z.output<(typeof traceWindow)["output"]>;
export type Span = WindowResult["spans"][number];
export type Track = WindowResult["tracks"][number];
export type Flow = z.output<(typeof traceFlows)["output"]>["flows"][number];

export interface LoadedWindow {
  start_ns: number;
  end_ns: number;
  spans: Span[];
  /** Tracks whose spans in the window did not all fit the budget. */
  truncatedTracks: number[];
  commit_id: string;
}

const PAGE = 5000;

/**
 * Spans of a window, fetched per track in keyset pages (evidence.trace_window) so that every
 * track shows something even when the whole window does not fit the budget.
 */
export async function loadWindow(args: { runId: string; commitId: string; tracks: Track[]; start_ns: number; end_ns: number; budget: number; signal?: { cancelled: boolean } }): Promise<LoadedWindow> {
  const withSpans = args.tracks.filter((t) => t.spans > 0);
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
      const page = await callQuery<typeof traceWindow>("evidence.trace_window", {
        run_id: args.runId,
        commit_id: args.commitId,
        start_ns,
        end_ns,
        tracks: [track.track_id],
        limit: Math.min(PAGE, share - got),
        ...(cursor ? { cursor } : {}),
      });
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
  return { start_ns, end_ns, spans, truncatedTracks: truncated, commit_id: commit };
}

export function loadSummary(runId: string, commitId: string): Promise<Summary> {
  return callQuery<typeof summarizeRun>("evidence.summary", { run_id: runId, commit_id: commitId });
}

export async function loadFlows(runId: string, commitId: string, start_ns: number, end_ns: number): Promise<{ flows: Flow[]; truncated: boolean }> {
  const s = Math.floor(start_ns);
  return callQuery<typeof traceFlows>("evidence.trace_flows", { run_id: runId, commit_id: commitId, start_ns: s, end_ns: Math.max(s + 1, Math.ceil(end_ns)), limit: 2000 });
}
