import { createRoot } from "react-dom/client";
import { partBytes, readManifest, type FlameSummaries } from "./bundle";
import { loadEngine } from "./engine";
import { ExportViewer } from "./ExportViewer";

/**
 * The export viewer's entry: bundled by esbuild into the file's viewer.js part
 * (server/services/export-viewer.ts). It paints the notebook and the flame summaries first; the
 * engine starts right after, so the page never waits on it.
 */
async function main() {
  const root = document.getElementById("emberscope-export")!;
  performance.mark("emberscope:viewer-start");
  try {
    const manifest = readManifest();
    const json = async (name: string) => JSON.parse(new TextDecoder().decode(await partBytes(manifest, name))) as unknown;
    const doc = await json("notebook.json");
    const summaries = (manifest.parts.some((p) => p.name === "summaries.json") ? await json("summaries.json") : {}) as FlameSummaries;
    createRoot(root).render(<ExportViewer manifest={manifest} doc={doc as never} summaries={summaries} />);
    // The engine starts after the first paint (it waits for it): its wasm is decoded and compiled while the page is shown.
    void loadEngine(manifest).catch(() => undefined);
  } catch (error) {
    root.textContent = `This export cannot be shown: ${error instanceof Error ? error.message : String(error)}`;
  }
}

void main();
