// Keeps analysis/ pure: no React, Next or Node-only imports, so it runs in server, workers and browser.
// Tests beside the code (*.test.ts) run in Node and may use it (child processes, real profilers).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { root } from "./build-state.js";

const FORBIDDEN = [/^node:/, /^(fs|path|os|child_process|crypto|stream|zlib|worker_threads|http|https|net|url|util)(\/|$)/, /^react(-dom)?(\/|$)/, /^next(\/|$)/, /^better-sqlite3$/, /^@duckdb\/node-api$/, /\/server\//, /\/components\//, /\/app\//];
const IMPORT = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|require\(\s*["']([^"']+)["']\s*\)/g;

function* files(dir) {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) yield* files(full);
    else if (/\.(ts|tsx)$/.test(entry) && !/\.test\.tsx?$/.test(entry)) yield full;
  }
}

const problems = [];
for (const file of files(path.join(root, "analysis"))) {
  const text = readFileSync(file, "utf8");
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (FORBIDDEN.some((re) => re.test(spec))) problems.push(`${path.relative(root, file)}: imports ${spec}`);
  }
}
if (problems.length) {
  console.error(`analysis/ must stay pure (see analysis/README.md):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log("check-boundaries: analysis/ imports nothing Node-, React- or Next-specific.");
