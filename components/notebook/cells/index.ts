import type { ComponentType } from "react";
import type { CellKindName } from "../../../analysis/notebook/cells";
import type { CellViewProps } from "../context";
import { CalltreeCellView } from "./calltree";
import { CompareCellView } from "./compare";
import { CriticalPathCellView } from "./critical-path";
import { ExperimentCellView } from "./experiment";
import { FindingCellView } from "./finding";
import { FlameCellView } from "./flame";
import { HypothesisCellView } from "./hypothesis";
import { NoteCellView } from "./note";
import { SandwichCellView } from "./sandwich";
import { SqlCellView } from "./sql";
import { TraceCellView } from "./trace";

/** Each cell kind's renderer: a kind in analysis/notebook/cells/ has its view here (the type says when one is missing). */
export const CELL_VIEWS: { [K in CellKindName]: ComponentType<CellViewProps<K>> } = {
  note: NoteCellView,
  sql: SqlCellView,
  flame: FlameCellView,
  sandwich: SandwichCellView,
  calltree: CalltreeCellView,
  trace: TraceCellView,
  compare: CompareCellView,
  critical_path: CriticalPathCellView,
  experiment: ExperimentCellView,
  hypothesis: HypothesisCellView,
  finding: FindingCellView,
};
