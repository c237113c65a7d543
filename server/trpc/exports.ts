import { previewExport, startExport } from "../services/exports";
import { procedureFor, router } from "./init";

/**
 * Exports over tRPC: the preview, and the start of an export as an operation (its progress and
 * cancel through operations.get / operations.cancel). The file itself goes through
 * app/api/exports, as bytes.
 */
export const exportsRouter = router({
  preview: procedureFor(previewExport),
  start: procedureFor(startExport),
});
