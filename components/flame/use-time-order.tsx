"use client";

import { useEffect, useState } from "react";
import { formatValue } from "../../analysis/flame/format";
import type { flameTimeline } from "../../server/services/evidence";
import { callQuery, errorDocumentOf } from "../home/trpc-client";
import type { TimeOrderInput } from "./FlameGraphCell";

const CELL_BUDGET = 20_000;

/**
 * The time-order mode's input for a run: disabled with the reason when the metric's samples have
 * no timestamps, else the cells of `evidence.flame_timeline`, fetched once the mode is chosen. A run
 * with several sampled threads orders one (the busiest first); the note lets the user pick another.
 */
export function useTimeOrder(args: { runId: string; commitId: string; metric: string | null; timeRange: { first_ns: number; last_ns: number } | null | undefined; enabled: boolean }): TimeOrderInput {
  const { runId, commitId, metric, timeRange, enabled } = args;
  const available = timeRange !== null && timeRange !== undefined;
  const [result, setResult] = useState<{ key: string; cells: TimeOrderInput["cells"]; note: TimeOrderInput["note"] } | null>(null);
  // The thread ordered: null lets the service choose the busiest.
  const [trackId, setTrackId] = useState<number | null>(null);
  const key = `${runId}\u0000${commitId}\u0000${metric}\u0000${trackId}`;
  useEffect(() => {
    if (!enabled || !available || result?.key === key) return;
    let live = true;
    callQuery<typeof flameTimeline>("evidence.flame_timeline", { run_id: runId, commit_id: commitId, metric: metric ?? undefined, budget: CELL_BUDGET, track_id: trackId ?? undefined })
      .then((r) => {
        if (!live) return;
        const dropped =
          r.dropped_cells > 0
            ? `${r.dropped_cells.toLocaleString("en-US")} cells shorter than ${formatValue(r.min_width_ns, "ns")} (or past the ${CELL_BUDGET.toLocaleString("en-US")}-cell budget) are left out with everything under them: ${formatValue(r.dropped_total, r.unit, r.metric)} not drawn.`
            : null;
        const reason = r.status.state === "partial" || r.status.state === "empty" ? r.status.reason : null;
        const threadPicker =
          r.sampled_tracks.length > 1 ? (
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
        const text = [reason, dropped].filter(Boolean).join(" ") || `${r.cells.length.toLocaleString("en-US")} cells, nothing left out.`;
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
        if (!live) return;
        const doc = errorDocumentOf(e);
        setResult({ key, cells: [], note: <span className="error-inline" data-testid="time-order-error">{`${doc.code}: ${doc.message}`}</span> });
      });
    return () => {
      live = false;
    };
  }, [enabled, available, key, runId, commitId, metric, trackId, result?.key]);
  if (!available) return { disabledReason: "the samples of this metric carry no timestamps (an aggregate profile)", cells: null };
  return { disabledReason: null, cells: result?.key === key ? result.cells : null, note: result?.key === key ? result.note : null };
}
