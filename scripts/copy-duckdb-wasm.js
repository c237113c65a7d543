// Copies DuckDB-WASM's bundles into public/duckdb/<version>/ before a build: public/ is fixed at
// build time and the browser must load them from the app itself (no CDN). The directory carries the
// package version, so next.config.ts can serve it as immutable (a new version is a new URL).
// The copies are git-ignored.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = path.join(root, "node_modules", "@duckdb", "duckdb-wasm");
const from = path.join(pkg, "dist");
const { version } = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8"));
const base = path.join(root, "public", "duckdb");
const to = path.join(base, version);
const files = ["duckdb-mvp.wasm", "duckdb-eh.wasm", "duckdb-browser-mvp.worker.js", "duckdb-browser-eh.worker.js"];

mkdirSync(to, { recursive: true });
// Other versions' directories would only be served stale.
for (const entry of readdirSync(base, { withFileTypes: true })) {
  if (entry.isDirectory() && entry.name !== version) rmSync(path.join(base, entry.name), { recursive: true, force: true });
}
for (const file of files) {
  const source = path.join(from, file);
  if (!existsSync(source)) {
    console.error(`copy-duckdb-wasm: ${file} is missing from @duckdb/duckdb-wasm; run npm ci`);
    process.exit(1);
  }
  copyFileSync(source, path.join(to, file));
}
