"use client";

import { CallTreeCell } from "../../calltree/CallTreeCell";
import { useFlameTree } from "../../evidence/use-evidence";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";

/** A run's call tree at the cell's commit. */
export function CalltreeCellView({ cell, content }: CellViewProps<"calltree">) {
  const flame = useFlameTree({ runId: content.run_id, commitId: cell.server.commit_id!, metric: content.metric ?? null, tracks: content.tracks ?? "all" });
  const pending = evidencePending(flame, `the call tree of ${content.run_id}`);
  if (pending || !flame || !("nodes" in flame)) return pending;
  return <CallTreeCell nodes={flame.nodes} unit={flame.unit} metric={flame.metric} maxRows={400} />;
}
