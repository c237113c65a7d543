import { addCell, addNoteCell, addQueryCell, changeCell, deleteCell, listCellRevisions, listCells, moveCell, restoreCell, showCell } from "../services/cells";
import { procedureFor, router } from "./init";

export const cellsRouter = router({
  add: procedureFor(addCell),
  add_note: procedureFor(addNoteCell),
  add_query: procedureFor(addQueryCell),
  get: procedureFor(showCell),
  update: procedureFor(changeCell),
  move: procedureFor(moveCell),
  delete: procedureFor(deleteCell),
  restore: procedureFor(restoreCell),
  list: procedureFor(listCells),
  revisions: procedureFor(listCellRevisions),
});
