"use client";

import { TraceWindowCell } from "../../run-views/TraceWindowCell";
import type { CellViewProps } from "../context";

const window = (r: readonly [number, number] | undefined) => (r ? { start: r[0], end: r[1] } : undefined);
const tuple = (r: { start: number; end: number } | null): [number, number] | undefined => (r ? [Math.round(r.start), Math.round(r.end)] : undefined);

/** A trace window at the cell's commit; the visible window and the selected range live in the cell. */
export function TraceCellView({ cell, content, onContent }: CellViewProps<"trace">) {
  return (
    <TraceWindowCell
      runId={content.run_id}
      commitId={cell.server.commit_id!}
      initialView={window(content.window)}
      initialSelection={window(content.range)}
      onViewChange={(visible, selection) => onContent({ run_id: content.run_id, window: tuple(visible), range: tuple(selection) })}
    />
  );
}
