import path from "node:path";
import { PACKAGE_ROOT } from "../package-root";

/**
 * The export viewer's code (components/export-viewer/main.tsx and the components it reuses),
 * bundled by esbuild into one script with its CSS inlined and the Parquet decoder's worker code
 * (`parquet-worker.ts`, built first) as a string: the file must hold all it runs.
 * Built once per process (about a second).
 */
let built: Promise<Uint8Array> | null = null;

export function buildViewer(): Promise<Uint8Array> {
  built ??= (async () => {
    const esbuild = await import("esbuild");
    const common = {
      absWorkingDir: PACKAGE_ROOT,
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      target: "es2022",
      minify: true,
      logLevel: "silent",
      legalComments: "none",
    } as const;
    const define = { "process.env.NODE_ENV": '"production"', "import.meta.url": "undefined" };
    // The Parquet decoder's worker first: the viewer carries its code as a string and starts it from a Blob URL.
    const worker = await esbuild.build({ ...common, entryPoints: [path.join(PACKAGE_ROOT, "components", "export-viewer", "parquet-worker.ts")], define });
    const workerJs = worker.outputFiles[0].text;
    const result = await esbuild.build({
      ...common,
      entryPoints: [path.join(PACKAGE_ROOT, "components", "export-viewer", "main.tsx")],
      jsx: "automatic",
      outdir: "out",
      define: { ...define, __EMBERSCOPE_PARQUET_WORKER__: JSON.stringify(workerJs) },
    });
    const js = result.outputFiles.find((f) => f.path.endsWith(".js"))!.text;
    const css = result.outputFiles.filter((f) => f.path.endsWith(".css")).map((f) => f.text).join("\n");
    // The CSS goes in with the script: one part, applied before the first render.
    const withCss = `(function(){var s=document.createElement("style");s.textContent=${JSON.stringify(css)};document.head.appendChild(s);})();\n${js}`;
    return new TextEncoder().encode(withCss);
  })();
  built.catch(() => {
    built = null;
  });
  return built;
}
