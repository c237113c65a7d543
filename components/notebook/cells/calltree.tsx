"use client";

import { CallTreeCell } from "../../calltree/CallTreeCell";
import { useFlameTree } from "../../evidence/use-evidence";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";
import { TransformChips } from "../../transforms/TransformChips";
import { useCellTransformStack } from "../../transforms/use-transforms";
import { useTransformMenu } from "../../transforms/use-transform-menu";
import { useTransformNames } from "../../transforms/use-transform-names";

/** A run's call tree at the cell's commit. */
export function CalltreeCellView({ cell, content, onContent }: CellViewProps<"calltree">) {
  const stack = useCellTransformStack(content, ({ transforms, inverted }) => onContent({ ...content, transforms, inverted }));
  const menu = useTransformMenu(stack);
  const flame = useFlameTree({ runId: content.run_id, commitId: cell.server.commit_id!, metric: content.metric ?? null, tracks: content.tracks ?? "all", transforms: content.transforms, inverted: content.inverted });
  const nameOf = useTransformNames({ runId: content.run_id, commitId: cell.server.commit_id!, metric: content.metric ?? null, tracks: content.tracks ?? "all", transforms: content.transforms ?? [], shown: flame && "nodes" in flame ? flame.nodes : null });
  const pending = evidencePending(flame, `the call tree of ${content.run_id}`);
  if (pending || !flame || !("nodes" in flame)) return pending;
  return (
    <>
      <TransformChips stack={stack} nameOf={nameOf} />
      <CallTreeCell key={JSON.stringify(content.transforms ?? [])} nodes={flame.nodes} unit={flame.unit} metric={flame.metric} maxRows={400} onNodeContextMenu={menu.onTreeContextMenu} onNodeKey={menu.onTreeKey} />
      {menu.menu}
    </>
  );
}
