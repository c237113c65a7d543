// Whether the Next.js build in .next/ is older than the sources it was built from.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SOURCES = ["app", "components", "server", "analysis", "public", "next.config.ts", "package.json", "package-lock.json", "tsconfig.json"];
const SKIP = new Set(["node_modules", ".next", "duckdb"]);

function newestMtime(target) {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) {
    if (SKIP.has(entry)) continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  }
  return newest;
}

export function needsBuild() {
  const marker = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(marker)) return true;
  const builtAt = statSync(marker).mtimeMs;
  return SOURCES.some((source) => newestMtime(path.join(root, source)) > builtAt);
}
