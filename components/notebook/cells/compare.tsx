"use client";

import { CompareCell } from "../../compare/CompareCell";
import { useCompareRows, useCompareTrees } from "../../evidence/use-evidence";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";

/** Two runs' differential flame graph and largest changes, at the cell's commit. */
export function CompareCellView({ cell, content, onContent }: CellViewProps<"compare">) {
  const commitId = cell.server.commit_id!;
  const metric = content.metric ?? null;
  const trees = useCompareTrees({ base: content.base_run_id, candidate: content.candidate_run_id, commitId, metric });
  const table = useCompareRows({ base: content.base_run_id, candidate: content.candidate_run_id, commitId, metric, normalize: content.normalize ?? false });
  const pending = evidencePending(trees, "both runs") ?? evidencePending(table, "the comparison");
  if (pending || !trees || !("base" in trees) || !table || !("rows" in table)) return pending;
  return (
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
  );
}
