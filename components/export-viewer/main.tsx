import { createRoot } from "react-dom/client";
import { partBytes, readManifest } from "./bundle";
import { ExportViewer } from "./ExportViewer";

/** The export viewer's entry: bundled by esbuild into the file's viewer.js part (server/services/export-viewer.ts). */
async function main() {
  const root = document.getElementById("emberscope-export")!;
  try {
    const manifest = readManifest();
    const doc = JSON.parse(new TextDecoder().decode(await partBytes(manifest, "notebook.json")));
    createRoot(root).render(<ExportViewer manifest={manifest} doc={doc} />);
  } catch (error) {
    root.textContent = `This export cannot be shown: ${error instanceof Error ? error.message : String(error)}`;
  }
}

void main();
