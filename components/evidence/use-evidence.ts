"use client";

import { useEffect, useState } from "react";
import type { z } from "zod";
import type { FlameInputNode } from "../../analysis/flame/tree";
import type { Transform } from "../../analysis/queries/transforms";
import { FLAME_NODE_KEYS } from "../../analysis/queries/flame-tree";
import { unpackAnswer, type PackedAnswer } from "../../analysis/queries/packed-rows";
import type { ErrorDocument } from "../../server/domain/errors";
import type { CriticalPathAnswer } from "../../server/domain/workflow";
import type { CompareRow } from "../compare/CompareCell";
import { loadCriticalPathRows, type CriticalPathRows } from "../dag/critical-path-rows";
import type { NeighbourRow, SandwichFunction } from "../sandwich/SandwichCell";
import { errorDocumentOf, queryService } from "../trpc-client";
import type { TrackChoice, TrackSelection } from "../flame/TrackSelector";

/** A track selection as a cache key part. */
const tracksKey = (tracks: TrackSelection) => (Array.isArray(tracks) ? tracks.join(",") : tracks);

/**
 * The evidence a view reads, fetched for one run at one pinned commit: the run page, the compare
 * page and notebook cells all read through these, so a cell shows what the page shows.
 */

export interface EvidenceStatus {
  state: string;
  reason: string | null;
  fill_with: string | null;
}

export interface FlameData {
  nodes: FlameInputNode[];
  unit: string | null;
  metric: string | null;
  pruned_total: number;
  time_range: { first_ns: number; last_ns: number } | null;
  commit_id: string;
  status: EvidenceStatus;
  /** The tracks the tree covers, and every sampled track (for the selector). */
  tracks: { selection: string; covered: TrackChoice[]; covered_count: number; sampled_tracks: number; value: number };
  track_choices: TrackChoice[];
}

export interface HotspotData {
  rows: SandwichFunction[];
  grand_total: number;
  truncated: boolean;
}

/** A fetch's answer: null while it is on its way, the typed error when it failed. */
export type Fetched<T> = T | ErrorDocument | null;

export const isError = (x: unknown): x is ErrorDocument => typeof x === "object" && x !== null && "code" in x;

/**
 * Answers by key, shared by every view of the page: a key names a pinned commit, whose evidence
 * never changes, so ten cells over one run ask the server once. Failures are not kept.
 */
const answers = new Map<string, Promise<unknown>>();
const KEPT_ANSWERS = 64;

function shared<T>(key: string, load: () => Promise<T>): Promise<T> {
  let answer = answers.get(key) as Promise<T> | undefined;
  if (answer) {
    // Most recently used last, so the oldest goes first when the map is full.
    answers.delete(key);
  } else {
    answer = load();
    answer.catch(() => answers.delete(key));
    if (answers.size >= KEPT_ANSWERS) answers.delete(answers.keys().next().value!);
  }
  answers.set(key, answer);
  return answer;
}

/** Runs `load` whenever `key` changes; the answer of an outdated key is dropped. */
function useFetched<T>(key: string | null, load: () => Promise<T | ErrorDocument>): Fetched<T> {
  const [answer, setAnswer] = useState<{ key: string; value: T | ErrorDocument } | null>(null);
  useEffect(() => {
    if (key === null) return;
    let live = true;
    shared(key, load)
      .then((value) => live && setAnswer({ key, value }))
      .catch((e: unknown) => live && setAnswer({ key, value: errorDocumentOf(e) }));
    return () => {
      live = false;
    };
    // `load` is a fresh closure every render; the key names everything it reads.
  }, [key]);
  return answer && answer.key === key ? answer.value : null;
}

export interface FlameTreeArgs {
  runId: string | null;
  commitId: string;
  metric: string | null;
  budget?: number;
  tracks?: TrackSelection;
  transforms?: readonly Transform[];
  inverted?: boolean;
}

/** The shared answer's key of a flame tree question, and how to ask it (null `runId`: nothing asked). */
function flameTreeQuestion(args: FlameTreeArgs): { key: string; ask: () => Promise<FlameData> } | null {
  const { runId, commitId, metric, budget = 20_000, tracks = "all", transforms = [], inverted = false } = args;
  if (runId === null) return null;
  const shaped = transforms.length > 0 || inverted ? { transforms: [...transforms], inverted } : {};
  return {
    key: `flame_tree\u0000${runId}\u0000${commitId}\u0000${metric}\u0000${budget}\u0000${tracksKey(tracks)}\u0000${JSON.stringify(shaped)}`,
    ask: () => queryService("evidence.flame_tree", { run_id: runId, metric: metric ?? undefined, commit_id: commitId, budget, tracks, ...shaped }).then((r) => r as FlameData),
  };
}

const markFlameData = (data: FlameData): FlameData => {
  performance.mark("emberscope:flame-data");
  return data;
};

/** `evidence.flame_tree` of a run (null `runId`: nothing asked). */
export function useFlameTree(args: FlameTreeArgs): Fetched<FlameData> {
  const question = flameTreeQuestion(args);
  return useFetched(question?.key ?? null, () => question!.ask().then(markFlameData));
}

/**
 * Hands the page the flame tree its server asked while rendering it (the first paint then waits
 * for no request of its own), as the answer to `args` — the question the page asks first. The
 * server chose the metric and pinned the commit itself: an answer for another commit or metric
 * (a commit published meanwhile) is not used, and the page asks again.
 */
export function seedFlameTree(args: FlameTreeArgs, first: Promise<PackedAnswer<FlameData, "nodes"> | null>): void {
  const question = flameTreeQuestion(args);
  if (typeof window === "undefined" || question === null || answers.has(question.key)) return;
  // It comes packed (`packAnswer`): a fifth of the bytes in the HTML.
  const unpacked = Promise.resolve(first).then((r) => (r === null ? null : unpackAnswer<FlameData, "nodes">(r, "nodes", FLAME_NODE_KEYS)));
  shared(question.key, () => usableSeed(unpacked, args).then((data) => data ?? question.ask()).then(markFlameData));
}

/**
 * An answer the server asked while rendering the page, when it answers the page's question (the
 * same commit and metric; a commit published meanwhile does not), else null: the page asks itself.
 */
export function usableSeed<T extends { commit_id: string; metric: string | null }>(first: Promise<T | null>, question: { commitId: string; metric: string | null }): Promise<T | null> {
  // React hands a server's promise over as a thenable whose then() returns nothing: made a Promise first.
  return Promise.resolve(first).then((r) => (r !== null && r.commit_id === question.commitId && r.metric === question.metric ? r : null));
}

/** `evidence.hotspots`: every function's self and total (the first 1,000 by total). */
export function useHotspots(args: { runId: string | null; commitId: string; metric: string | null; tracks?: TrackSelection; transforms?: readonly Transform[] }): Fetched<HotspotData> {
  const { runId, commitId, metric, tracks = "all", transforms = [] } = args;
  const shaped = transforms.length > 0 ? { transforms: [...transforms] } : {};
  return useFetched(runId === null ? null : `hotspots\u0000${runId}\u0000${commitId}\u0000${metric}\u0000${tracksKey(tracks)}\u0000${JSON.stringify(shaped)}`, () =>
    queryService("evidence.hotspots", { run_id: runId!, metric: metric ?? undefined, commit_id: commitId, limit: 1000, tracks, ...shaped }).then((r) => ({ rows: r.rows, grand_total: r.grand_total, truncated: r.next_cursor !== null })),
  );
}

/** The selected function's direct callers and callees, under the view's transforms (null `frameKey`: none selected). */
export function useNeighbours(args: { runId: string; commitId: string; metric: string | null; frameKey: string | null; tracks?: TrackSelection; transforms?: readonly Transform[] }): { callers: NeighbourRow[] | null; callees: NeighbourRow[] | null } {
  const { runId, commitId, metric, frameKey, tracks = "all", transforms = [] } = args;
  const valid = frameKey !== null && /^[0-9a-f]{16}$/.test(frameKey);
  const shaped = transforms.length > 0 ? { transforms: [...transforms] } : {};
  const answer = useFetched(valid ? `neighbours\u0000${runId}\u0000${commitId}\u0000${metric}\u0000${frameKey}\u0000${tracksKey(tracks)}\u0000${JSON.stringify(shaped)}` : null, () => {
    const input = { run_id: runId, frame_key: frameKey!, metric: metric ?? undefined, commit_id: commitId, limit: 30, tracks, ...shaped };
    return Promise.all([queryService("evidence.callers", input), queryService("evidence.callees", input)]).then(([callers, callees]) => ({ callers: callers.rows, callees: callees.rows }));
  });
  if (answer === null) return { callers: null, callees: null };
  if (isError(answer)) return { callers: [], callees: [] };
  return answer;
}

export interface CompareData {
  base: FlameInputNode[];
  candidate: FlameInputNode[];
  unit: string | null;
  metric: string | null;
  /** Each run's sampled tracks and the ones its tree covers (for the track selectors). */
  baseTracks: { choices: TrackChoice[]; covered: string[] };
  candidateTracks: { choices: TrackChoice[]; covered: string[] };
}

/** Both runs' flame trees at one commit, each on its chosen tracks (default: all merged), for a differential flame graph. */
export function useCompareTrees(args: { base: string; candidate: string; commitId: string; metric: string | null; baseTracks?: TrackSelection; candidateTracks?: TrackSelection }): Fetched<CompareData> {
  const { base, candidate, commitId, metric, baseTracks = "all", candidateTracks = "all" } = args;
  return useFetched(`compare_trees\u0000${base}\u0000${candidate}\u0000${commitId}\u0000${metric}\u0000${tracksKey(baseTracks)}\u0000${tracksKey(candidateTracks)}`, async () => {
    const q = (run: string, tracks: TrackSelection) => queryService("evidence.flame_tree", { run_id: run, metric: metric ?? undefined, commit_id: commitId, budget: 20_000, tracks });
    const [b, c] = await Promise.all([q(base, baseTracks), q(candidate, candidateTracks)]);
    const missing = [b, c].find((r) => r.status.state === "unavailable");
    if (missing) return { code: "INVALID_ARGUMENTS", message: missing.status.reason ?? "A run has no evidence in this commit.", retryable: false, details: {} } satisfies ErrorDocument;
    const side = (r: typeof b) => ({ choices: r.track_choices as TrackChoice[], covered: r.tracks.covered.map((t) => t.track_key) });
    return { base: b.nodes, candidate: c.nodes, unit: c.unit ?? b.unit, metric: c.metric ?? b.metric, baseTracks: side(b), candidateTracks: side(c) };
  });
}

/** `evidence.compare`'s changed functions (the largest 50), each side on its chosen tracks. */
export function useCompareRows(args: { base: string; candidate: string; commitId: string; metric: string | null; normalize: boolean; baseTracks?: TrackSelection; candidateTracks?: TrackSelection }): Fetched<{ rows: CompareRow[]; base_total: number; candidate_total: number }> {
  const { base, candidate, commitId, metric, normalize, baseTracks = "all", candidateTracks = "all" } = args;
  return useFetched(`compare_rows\u0000${base}\u0000${candidate}\u0000${commitId}\u0000${metric}\u0000${normalize}\u0000${tracksKey(baseTracks)}\u0000${tracksKey(candidateTracks)}`, () =>
    queryService("evidence.compare", { base_run_id: base, candidate_run_id: candidate, metric: metric ?? undefined, normalize, collection: "changed", limit: 50, commit_id: commitId, base_tracks: baseTracks, candidate_tracks: candidateTracks }).then((r) => ({
      rows: r.rows,
      base_total: r.base_total,
      candidate_total: r.candidate_total,
    })),
  );
}

export type CriticalPathData = z.output<typeof CriticalPathAnswer>;

/** `critical_path.get` of a run at a pinned commit (a workflow's what-if, a span trace's trace). */
export function useCriticalPath(args: { runId: string; commitId: string; traceId?: string; whatIf?: { node: string; duration_ms: number } }): Fetched<CriticalPathData> {
  const { runId, commitId, traceId, whatIf } = args;
  const key = `critical_path\u0000${runId}\u0000${commitId}\u0000${traceId ?? ""}\u0000${whatIf ? `${whatIf.node}=${whatIf.duration_ms}` : ""}`;
  return useFetched(key, () => queryService("critical_path.get", { run_id: runId, commit_id: commitId, trace_id: traceId, what_if: whatIf, limit: 500 }));
}

/** A run's spans, causal edges and tracks read in the page by DuckDB-WASM, for its critical path (null `runId`: nothing asked). */
export function useCriticalPathRows(args: { runId: string | null; commitId: string }): Fetched<CriticalPathRows> {
  const { runId, commitId } = args;
  return useFetched(runId === null ? null : `critical_path_rows\u0000${runId}\u0000${commitId}`, () => loadCriticalPathRows(runId!, commitId));
}
