import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { EmberscopeError, RECOVER_BY_INIT } from "../domain/errors";

export const WORKSPACE_DIR_NAME = ".emberscope";
export const DATABASE_FILE = "emberscope.sqlite";
export const CONFIG_FILE = "emberscope.toml";

/** Where a workspace lives: `<projectRoot>/.emberscope/` and its fixed sub-folders. */
export interface WorkspaceLayout {
  projectRoot: string;
  dir: string;
  database: string;
  objects: string;
  tmp: string;
  trash: string;
}

export function layoutFor(projectRoot: string): WorkspaceLayout {
  const root = path.resolve(projectRoot);
  const dir = path.join(root, WORKSPACE_DIR_NAME);
  return {
    projectRoot: root,
    dir,
    database: path.join(dir, DATABASE_FILE),
    objects: path.join(dir, "objects"),
    tmp: path.join(dir, "tmp"),
    trash: path.join(dir, "trash"),
  };
}

/** How a caller names its workspace: explicitly, or by walking up from a directory. */
export interface WorkspaceLocator {
  cwd: string;
  projectRoot?: string;
  workspaceDir?: string;
}

/** The project root a new workspace would be created in (no walking up). */
export function projectRootForInit(locator: WorkspaceLocator): string {
  if (locator.workspaceDir) return path.dirname(path.resolve(locator.cwd, locator.workspaceDir));
  return path.resolve(locator.cwd, locator.projectRoot ?? ".");
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Finds an existing workspace; fails with WORKSPACE_NOT_FOUND naming `init` as the recovery. */
export function locateWorkspace(locator: WorkspaceLocator): WorkspaceLayout {
  const notFound = (where: string) =>
    new EmberscopeError("WORKSPACE_NOT_FOUND", `No Emberscope workspace found ${where}.`, {
      details: { searched: where },
      recovery: RECOVER_BY_INIT,
    });

  if (locator.workspaceDir) {
    const dir = path.resolve(locator.cwd, locator.workspaceDir);
    if (path.basename(dir) !== WORKSPACE_DIR_NAME || !isDirectory(dir)) {
      throw notFound(`at the given --workspace (it must be an existing ${WORKSPACE_DIR_NAME} folder)`);
    }
    return layoutFor(path.dirname(dir));
  }
  if (locator.projectRoot) {
    const layout = layoutFor(path.resolve(locator.cwd, locator.projectRoot));
    if (!isDirectory(layout.dir)) throw notFound("in the given project root");
    return layout;
  }
  let current = path.resolve(locator.cwd);
  for (;;) {
    const candidate = path.join(current, WORKSPACE_DIR_NAME);
    if (isDirectory(candidate) && existsSync(path.join(candidate, DATABASE_FILE))) return layoutFor(current);
    const parent = path.dirname(current);
    if (parent === current) throw notFound("in this directory or any parent");
    current = parent;
  }
}

/** A path as shown to users and agents: relative to `from`, never absolute. */
export function displayPath(target: string, from: string): string {
  const rel = path.relative(from, target);
  if (rel === "") return ".";
  return rel.split(path.sep).join("/");
}
