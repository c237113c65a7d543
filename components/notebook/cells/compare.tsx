"use client";

import { CompareCell } from "../../compare/CompareCell";
import { useCompareRows, useCompareTrees } from "../../evidence/use-evidence";
import type { TrackSelection } from "../../flame/TrackSelector";
import { CompareTracks } from "../../compare/CompareTracks";
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
  // Each side's tracks, picked in the cell as on the compare page and kept in its content (absent: every track merged).
  const sideOf = (next: TrackSelection) => (next === "all" ? undefined : next);
  const pickers = trees.baseTracks.choices.length > 1 || trees.candidateTracks.choices.length > 1;
  return (
    <>
    {pickers ? (
      <div className="flame-toolbar" data-testid="compare-cell-tracks">
        <CompareTracks
          trees={trees}
          base={baseTracks}
          candidate={candidateTracks}
          onBase={(next) => onContent({ ...content, base_tracks: sideOf(next), zoom: null })}
          onCandidate={(next) => onContent({ ...content, candidate_tracks: sideOf(next), zoom: null })}
          totals={{ base: table.base_total, candidate: table.candidate_total }}
        />
      </div>
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
