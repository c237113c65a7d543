import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The Emberscope installation (package.json, .next/, node_modules/), found from this module's location. */
function findPackageRoot(): string {
  // bin/emberscope.js says where it is: its bundle runs from node_modules/.cache, which in a git
  // worktree sharing node_modules (a symlink) lies under another checkout.
  const given = process.env.EMBERSCOPE_PACKAGE_ROOT;
  if (given && existsSync(path.join(given, "package.json"))) return given;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "emberscope") return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("Emberscope's package.json was not found above the CLI module.");
    dir = parent;
  }
}

export const PACKAGE_ROOT = findPackageRoot();

/** The CLI's entry: pool workers run it as a process, extraction writers as a thread (workerData.role). */
export const CLI_ENTRY = path.join(PACKAGE_ROOT, "bin", "emberscope.js");

export function isAppBuilt(): boolean {
  return existsSync(path.join(PACKAGE_ROOT, ".next", "BUILD_ID"));
}
