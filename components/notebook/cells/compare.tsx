"use client";

import { CompareCell } from "../../compare/CompareCell";
import { useCompareRows, useCompareTrees } from "../../evidence/use-evidence";
import type { TrackChoice } from "../../flame/TrackSelector";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";

/** Two runs' differential flame graph and largest changes, at the cell's commit. */
export function CompareCellView({ cell, content, onContent }: CellViewProps<"compare">) {
  const commitId = cell.server.commit_id!;
  const metric = content.metric ?? null;
  const baseTracks = content.base_tracks ?? "all";
  const candidateTracks = content.candidate_tracks ?? "all";
  const trees = useCompareTrees({ base: content.base_run_id, candidate: content.candidate_run_id, commitId, metric, baseTracks, candidateTracks });
  const table = useCompareRows({ base: content.base_run_id, candidate: content.candidate_run_id, commitId, metric, normalize: content.normalize ?? false, baseTracks, candidateTracks });
  const pending = evidencePending(trees, "both runs") ?? evidencePending(table, "the comparison");
  if (pending || !trees || !("base" in trees) || !table || !("rows" in table)) return pending;
  // Each side's tracks, when the cell chose some, are said above the graph (the compare page changes them).
  const said = (side: string, tracks: typeof baseTracks, covered: readonly string[], choices: readonly TrackChoice[]) =>
    tracks === "all" ? null : `${side}: ${covered.map((k) => choices.find((t) => t.track_key === k)?.label ?? k).join(", ")}`;
  const trackNote = [said("base", baseTracks, trees.baseTracks.covered, trees.baseTracks.choices), said("candidate", candidateTracks, trees.candidateTracks.covered, trees.candidateTracks.choices)].filter(Boolean);
  return (
    <>
    {trackNote.length ? (
      <p className="tip-muted" data-testid="compare-cell-tracks">
        Tracks — {trackNote.join("; ")}
      </p>
    ) : null}
    <CompareCell
      baseNodes={trees.base}
      candidateNodes={trees.candidate}
      rows={table.rows}
      unit={trees.unit}
      metric={trees.metric}
      from={content.from ?? "candidate"}
      onFromChange={(from) => onContent({ ...content, from, zoom: null })}
      normalized={content.normalize ?? false}
      onNormalizedChange={(normalize) => onContent({ ...content, normalize })}
      zoom={content.zoom ?? null}
      onZoomChange={(zoom) => onContent({ ...content, zoom })}
      search={content.search ?? ""}
      onSearchChange={(search) => onContent({ ...content, search: search || undefined })}
    />
    </>
  );
}
