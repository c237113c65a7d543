import { previewExport } from "../services/exports";
import { procedureFor, router } from "./init";

/** Exports over tRPC: only the preview (the file itself goes through app/api/exports, as bytes). */
export const exportsRouter = router({
  preview: procedureFor(previewExport),
});
