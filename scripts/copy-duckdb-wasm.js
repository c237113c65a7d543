// Copies DuckDB-WASM's bundles into public/duckdb/ before a build: public/ is fixed at build time
// and the browser must load them from the app itself (no CDN). The copies are git-ignored.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const from = path.join(root, "node_modules", "@duckdb", "duckdb-wasm", "dist");
const to = path.join(root, "public", "duckdb");
const files = ["duckdb-mvp.wasm", "duckdb-eh.wasm", "duckdb-browser-mvp.worker.js", "duckdb-browser-eh.worker.js"];

mkdirSync(to, { recursive: true });
for (const file of files) {
  const source = path.join(from, file);
  if (!existsSync(source)) {
    console.error(`copy-duckdb-wasm: ${file} is missing from @duckdb/duckdb-wasm; run npm ci`);
    process.exit(1);
  }
  copyFileSync(source, path.join(to, file));
}
