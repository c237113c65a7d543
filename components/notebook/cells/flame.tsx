"use client";

import { FlameGraphCell } from "../../flame/FlameGraphCell";
import { TrackSelector } from "../../flame/TrackSelector";
import { useTimeOrder } from "../../flame/use-time-order";
import { useFlameTree } from "../../evidence/use-evidence";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";
import { TransformChips } from "../../transforms/TransformChips";
import { useCellTransformStack } from "../../transforms/use-transforms";
import { useTransformMenu } from "../../transforms/use-transform-menu";
import { useTransformNames } from "../../transforms/use-transform-names";

/** A run's flame graph at the cell's commit; zoom, search, orientation and mode live in the cell. */
export function FlameCellView({ cell, content, onContent }: CellViewProps<"flame">) {
  const commitId = cell.server.commit_id!;
  const tracks = content.tracks ?? "all";
  // The cell's transforms, as the run page's chips: the same stack, kept in the cell.
  const stack = useCellTransformStack(content, (next) => onContent({ ...content, ...next }));
  const menu = useTransformMenu(stack);
  const { transforms, inverted } = stack;
  const flame = useFlameTree({ runId: content.run_id, commitId, metric: content.metric ?? null, tracks, transforms, inverted });
  const mode = content.mode ?? "left-heavy";
  const timeOrder = useTimeOrder({ runId: content.run_id, commitId, metric: content.metric ?? null, timeRange: flame && "nodes" in flame ? flame.time_range : undefined, enabled: mode === "time-order", tracks, transforms });
  const nameOf = useTransformNames({ runId: content.run_id, commitId, metric: content.metric ?? null, tracks, transforms, shown: flame && "nodes" in flame ? flame.nodes : null });
  const pending = evidencePending(flame, `the flame graph of ${content.run_id}`);
  if (pending || !flame || !("nodes" in flame)) return pending;
  // A compact flame cell has no toolbar: the track selector stands above it, when there are tracks to choose.
  return (
    <>
      {flame.track_choices.length > 1 ? (
        <div className="flame-toolbar">
          <TrackSelector
            choices={flame.track_choices}
            covered={flame.tracks.covered.map((t) => t.track_key)}
            selection={tracks}
            onChange={(next) => onContent({ ...content, tracks: next, zoom: null })}
            unit={flame.unit}
            metric={flame.metric}
          />
        </div>
      ) : null}
      <TransformChips stack={stack} nameOf={nameOf} />
      <FlameGraphCell
        nodes={flame.nodes}
        unit={flame.unit}
        metric={flame.metric}
        zoom={content.zoom ?? null}
        onZoomChange={(zoom) => onContent({ ...content, zoom })}
        search={content.search ?? ""}
        onSearchChange={(search) => onContent({ ...content, search: search || undefined })}
        orientation={content.orientation ?? "icicle"}
        onOrientationChange={(orientation) => onContent({ ...content, orientation })}
        mode={mode}
        onModeChange={(next) => onContent({ ...content, mode: next, zoom: null })}
        timeOrder={timeOrder}
        compact
        maxHeight={360}
        testId={`flame-${cell.server.cell_id}`}
        onFrameContextMenu={mode === "time-order" ? undefined : menu.onTreeContextMenu}
        onFrameKey={mode === "time-order" ? undefined : menu.onTreeKey}
      />
      {menu.menu}
    </>
  );
}
