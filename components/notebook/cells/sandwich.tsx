"use client";

import { SandwichCell } from "../../sandwich/SandwichCell";
import { useFlameTree, useHotspots, useNeighbours } from "../../evidence/use-evidence";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";
import { TransformChips } from "../../transforms/TransformChips";
import { useCellTransformStack } from "../../transforms/use-transforms";
import { useTransformMenu } from "../../transforms/use-transform-menu";
import { useTransformNames } from "../../transforms/use-transform-names";

/** A run's functions with the selected one's callers and callees, at the cell's commit. */
export function SandwichCellView({ cell, content, onContent }: CellViewProps<"sandwich">) {
  const commitId = cell.server.commit_id!;
  const metric = content.metric ?? null;
  const tracks = content.tracks ?? "all";
  const stack = useCellTransformStack(content, ({ transforms }) => onContent({ ...content, transforms }));
  const menu = useTransformMenu(stack);
  const transforms = content.transforms;
  const flame = useFlameTree({ runId: content.run_id, commitId, metric, tracks, transforms });
  const hot = useHotspots({ runId: content.run_id, commitId, metric, tracks, transforms });
  const selected = content.selected ?? null;
  const neighbours = useNeighbours({ runId: content.run_id, commitId, metric, frameKey: selected, tracks, transforms });
  const nameOf = useTransformNames({ runId: content.run_id, commitId, metric, tracks, transforms: transforms ?? [], shown: hot && "rows" in hot ? hot.rows : null });
  const pending = evidencePending(flame, `the functions of ${content.run_id}`) ?? evidencePending(hot, "the function table");
  if (pending || !flame || !("nodes" in flame) || !hot || !("rows" in hot)) return pending;
  return (
    <>
    <TransformChips stack={stack} nameOf={nameOf} />
    <SandwichCell
      functions={hot.rows}
      grandTotal={hot.grand_total}
      unit={flame.unit}
      metric={flame.metric}
      nodes={flame.nodes}
      selected={selected}
      onSelect={(frameKey) => onContent({ ...content, selected: frameKey })}
      callers={neighbours.callers}
      callees={neighbours.callees}
      truncated={hot.truncated}
      onFunctionContextMenu={menu.onFunctionContextMenu}
      onFunctionKey={menu.onFunctionKey}
    />
    {menu.menu}
    </>
  );
}
