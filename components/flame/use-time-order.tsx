"use client";

import { useCallback, useEffect, useState } from "react";
import type { z } from "zod";
import { formatValue } from "../../analysis/flame/format";
import type { ErrorDocument } from "../../server/domain/errors";
import type { flameTimeline } from "../../server/services/evidence";
import { usableSeed } from "../evidence/use-evidence";
import { callQuery, errorDocumentOf } from "../home/trpc-client";
import type { TimeOrderInput } from "./FlameGraphCell";
import { TIME_ORDER_CELL_BUDGET as CELL_BUDGET, timeOrderQuestion } from "./time-order-question";
import type { TrackSelection } from "./TrackSelector";
import { formatTransforms, type Transform } from "../../analysis/queries/transforms";
import { TIMELINE_ROW_KEYS } from "../../analysis/queries/flame-timeline";
import { unpackAnswer, type PackedAnswer } from "../../analysis/queries/packed-rows";

export type TimelineAnswer = z.output<typeof flameTimeline.output>;

/** The time order the server asked while it rendered the page, by the key of the page's first question. */
const seeds = new Map<string, Promise<TimelineAnswer | null>>();

/**
 * Hands the page the time order its server asked while rendering it (`?mode=time-order`): the
 * first frame then waits for no request made after hydration. An answer for another commit or
 * metric than the page's (a commit published meanwhile), or none (it failed), is not used and
 * the page asks again. It comes packed (`packAnswer`): a fifth of the bytes in the HTML.
 */
export function seedTimeOrder(args: { runId: string; commitId: string; metric: string | null; tracks?: TrackSelection; transforms?: readonly Transform[] }, first: Promise<PackedAnswer<TimelineAnswer, "cells"> | null>): void {
  if (typeof window === "undefined") return;
  const unpacked = Promise.resolve(first).then((r) => (r === null ? null : unpackAnswer<TimelineAnswer, "cells">(r, "cells", TIMELINE_ROW_KEYS)));
  seeds.set(questionKey(args.runId, args.commitId, args.metric, null, tracksKeyOf(args.tracks, args.transforms), 0), usableSeed(unpacked, args));
}

/** The tracks and transforms of a question, as a key part. */
function tracksKeyOf(selection: TrackSelection | undefined, transforms: readonly Transform[] = []): string {
  const tracks = selection === undefined || selection === "all" ? undefined : selection;
  return `${tracks === undefined ? "" : Array.isArray(tracks) ? tracks.join(",") : tracks}\u0000${formatTransforms(transforms) ?? ""}`;
}

function questionKey(runId: string, commitId: string, metric: string | null, trackId: number | null, tracksKey: string, attempt: number): string {
  return `${runId}\u0000${commitId}\u0000${metric}\u0000${trackId}\u0000${tracksKey}\u0000${attempt}`;
}

const NO_TRANSFORMS: readonly Transform[] = [];

/** How long after its cells arrive what waits for time order's first frame waits at most. */
const PAINT_WAIT_MS = 1_500;

type Loaded = { key: string; cells: NonNullable<TimeOrderInput["cells"]>; note: TimeOrderInput["note"] } | { key: string; error: ErrorDocument };

/**
 * The time-order mode's input for a run: disabled with the reason when the metric's samples have
 * no timestamps, else the cells of `evidence.flame_timeline`, fetched once the mode is chosen (and,
 * when the page opens in time order, while the run's flame tree is still loading). A run
 * with several sampled threads orders one (the busiest first); the note lets the user pick another.
 * A failed fetch is an error with a retry, never an empty graph.
 */
export function useTimeOrder(args: {
  runId: string;
  commitId: string;
  metric: string | null;
  timeRange: { first_ns: number; last_ns: number } | null | undefined;
  enabled: boolean;
  /** The page's track selection; "all" (or none) orders one thread at a time, with its own picker. */
  tracks?: TrackSelection;
  /** The view's transforms (the flame graph's chips): cells merge along the transformed stacks. */
  transforms?: readonly Transform[];
}): TimeOrderInput & { painted: boolean } {
  const { runId, commitId, metric, timeRange, enabled } = args;
  const tracks = args.tracks === undefined || args.tracks === "all" ? undefined : args.tracks;
  const transforms = args.transforms ?? NO_TRANSFORMS;
  const tracksKey = tracksKeyOf(args.tracks, transforms);
  const available = timeRange !== null && timeRange !== undefined;
  // Not known to be impossible (the run's flame tree, which says, may still be on its way): the
  // cells are asked for at once, beside the flame tree rather than after it.
  const possible = timeRange !== null;
  const [result, setResult] = useState<Loaded | null>(null);
  // The thread ordered: null lets the service choose the busiest.
  const [trackId, setTrackId] = useState<number | null>(null);
  // Bumped by a retry: the same question asked again.
  const [attempt, setAttempt] = useState(0);
  const key = questionKey(runId, commitId, metric, trackId, tracksKey, attempt);
  // The question whose cells were last drawn: what waits for the first frame (the run page's
  // function ranking) waits for this one's.
  const [paintedKey, setPaintedKey] = useState<string | null>(null);
  const onPaint = useCallback(() => setPaintedKey(key), [key]);
  const painted = paintedKey === key;
  // The wait for the first frame is bounded: cells that draw nothing (none, a canvas of no width, a
  // layout that failed) release what waits at once when there are none, else after PAINT_WAIT_MS.
  const arrived = result?.key === key && "cells" in result ? result.cells : null;
  useEffect(() => {
    if (!arrived || painted) return;
    const timer = setTimeout(() => setPaintedKey(key), arrived.length === 0 ? 0 : PAINT_WAIT_MS);
    return () => clearTimeout(timer);
  }, [arrived, painted, key]);
  useEffect(() => {
    if (!enabled || !possible || result?.key === key) return;
    let live = true;
    // Marks for the benchmark: when the cells were asked for and when they arrived.
    performance.mark("emberscope:time-order-request");
    const ask = () => callQuery<typeof flameTimeline>("evidence.flame_timeline", timeOrderQuestion({ runId, commitId, metric, trackId, tracks, transforms }));
    // The server's own answer, when it asked this question while rendering the page (kept: an
    // effect run again before it arrived takes the same answer; a commit's answer does not change).
    const seeded = seeds.get(key);
    (seeded ? seeded.then((r) => r ?? ask()) : ask())
      .then((r) => {
        if (!live) return;
        performance.mark("emberscope:time-order-data");
        const dropped =
          r.dropped_cells > 0
            ? `${r.dropped_cells.toLocaleString("en-US")} cells shorter than ${formatValue(r.min_width_ns, "ns")} (or past the ${CELL_BUDGET.toLocaleString("en-US")}-cell budget) are left out with everything under them: ${formatValue(r.dropped_total, r.unit, r.metric)} not drawn.`
            : null;
        const reason = r.status.state === "partial" || r.status.state === "empty" ? r.status.reason : null;
        const threadPicker =
          r.tracks === null && r.sampled_tracks.length > 1 ? (
            <label>
              Time order of one thread:{" "}
              <select value={r.track_id ?? ""} onChange={(e) => setTrackId(Number(e.target.value))} data-testid="time-order-thread">
                {r.sampled_tracks.map((t) => (
                  <option key={t.track_id} value={t.track_id}>
                    {[t.thread_name, t.thread_id === null ? null : `thread ${t.thread_id}`].filter(Boolean).join(" · ") || `track ${t.track_id}`}
                  </option>
                ))}
              </select>{" "}
            </label>
          ) : null;
        const merged = `${r.samples.toLocaleString("en-US")} samples merged into ${r.cells.length.toLocaleString("en-US")} cells`;
        // Samples a transform dropped are gaps: said, so that "nothing left out" is never claimed of them.
        const gaps = r.gap_samples > 0 ? `${merged}; ${r.gap_samples.toLocaleString("en-US")} sample${r.gap_samples === 1 ? "" : "s"} dropped by the transforms, shown as gaps.` : null;
        const text = [reason, gaps, dropped].filter(Boolean).join(" ") || `${merged}, nothing left out.`;
        setResult({
          key,
          cells: r.cells,
          note: (
            <span data-testid="time-order-note">
              {threadPicker}
              {text}
            </span>
          ),
        });
      })
      .catch((e: unknown) => {
        if (live) setResult({ key, error: errorDocumentOf(e) });
      });
    return () => {
      live = false;
    };
  }, [enabled, possible, key, runId, commitId, metric, trackId, tracks, transforms, result?.key]);
  const retry = useCallback(() => setAttempt((a) => a + 1), []);
  if (!available) return { disabledReason: "the samples of this metric carry no timestamps (an aggregate profile)", cells: null, painted };
  const current = result?.key === key ? result : null;
  if (current && "error" in current) {
    return {
      disabledReason: null,
      cells: null,
      painted,
      retry,
      failed: (
        <span className="error-inline" data-testid="time-order-error">
          Time order failed: <code>{current.error.code}</code> {current.error.message}{" "}
          <button type="button" className="plain-button" onClick={retry} data-testid="time-order-retry">
            Retry
          </button>
        </span>
      ),
    };
  }
  return { disabledReason: null, cells: current ? current.cells : null, note: current ? current.note : null, painted, onPaint };
}
