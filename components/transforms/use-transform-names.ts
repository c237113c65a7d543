"use client";

import { useMemo } from "react";
import type { Transform } from "../../analysis/queries/transforms";
import { useHotspots } from "../evidence/use-evidence";
import type { TrackSelection } from "../flame/TrackSelector";

/**
 * Names for a transform stack's chips: the frames a view draws, and (when transforms are applied)
 * the untransformed functions of the run, since a merged or dropped function is gone from the view.
 */
export function useTransformNames(args: { runId: string; commitId: string; metric: string | null; tracks: TrackSelection; transforms: readonly Transform[]; shown: readonly { frame_key: string; name: string }[] | null }): (frameKey: string) => string | undefined {
  const plain = useHotspots({ runId: args.transforms.length ? args.runId : null, commitId: args.commitId, metric: args.metric, tracks: args.tracks });
  return useMemo(() => {
    const names = new Map<string, string>();
    if (plain && "rows" in plain) for (const r of plain.rows) names.set(r.frame_key, r.name);
    for (const n of args.shown ?? []) if (!names.has(n.frame_key)) names.set(n.frame_key, n.name);
    return (key: string) => names.get(key);
  }, [plain, args.shown]);
}
