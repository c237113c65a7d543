import type { z } from "zod";
import type { flameTimeline } from "../../server/services/evidence";
import type { TrackSelection } from "./track-selection";
import type { Transform } from "../../analysis/queries/transforms";

/** The cell budget the page asks time order for. */
export const TIME_ORDER_CELL_BUDGET = 20_000;

/**
 * The `evidence.flame_timeline` input of the run page's time order: one question, asked the same
 * way by the server while it renders the page (its first answer) and by the page itself (another
 * thread, a retry, another commit). "all" (or no selection) orders one thread at a time: the one
 * `trackId` names, else the busiest. The view's transforms apply as they do to the flame graph.
 */
export function timeOrderQuestion(args: { runId: string; commitId: string; metric: string | null; trackId: number | null; tracks?: TrackSelection; transforms?: readonly Transform[] }): z.input<typeof flameTimeline.input> {
  const tracks = args.tracks === undefined || args.tracks === "all" ? undefined : args.tracks;
  return {
    run_id: args.runId,
    commit_id: args.commitId,
    metric: args.metric ?? undefined,
    budget: TIME_ORDER_CELL_BUDGET,
    ...(tracks === undefined ? { track_id: args.trackId ?? undefined } : { tracks }),
    ...(args.transforms?.length ? { transforms: [...args.transforms] } : {}),
  };
}
