import { constants as fsConstants, existsSync, promises as fsp, type Stats } from "node:fs";
import path from "node:path";
import { EmberscopeError } from "../domain/errors";
import { WORKSPACE_DIR_NAME } from "../store/layout";
import type { Workspace } from "../store/workspace";
import type { ServiceContext } from "./service";

/**
 * A file a request named, opened once and held open while it is read. `file` names the opened
 * file itself, not the path it was found by: on Linux `/proc/self/fd/N`, which every later open
 * (the kernel's copy into the store, the parse, a range thread) reaches as this same inode, so a
 * link or directory swapped after the checks cannot send any of them elsewhere.
 */
export interface InputFile {
  file: string;
  /** The name the caller gave (its last component): the run's title and a hint for format detection. */
  name: string;
  /** The opened file's own status (fstat). */
  stat: Stats;
  close(): Promise<void>;
}

/** Linux names an open descriptor's file as a path that opens that very inode again. */
const FD_PATHS = process.platform === "linux" && existsSync("/proc/self/fd");

/** O_NOFOLLOW: the resolved path's last component turned into a link fails the open; O_NONBLOCK: a FIFO put there does not hang it. */
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

const denied = (message: string) => new EmberscopeError("POLICY_DENIED", message, { details: { argument: "path" } });
const unreadable = () => new EmberscopeError("INVALID_ARGUMENTS", "No readable file at that path.", { details: { argument: "path" } });
const OUTSIDE_ROOT = "Only files inside the project root can be imported by this caller (links are followed first).";
const IN_WORKSPACE = `Files inside a workspace folder (${WORKSPACE_DIR_NAME}/) are never import inputs.`;

/** Whether `target` lies strictly inside `dir` (both absolute): `..dotdot.folded` does, `../x` does not. */
export function isInside(dir: string, target: string): boolean {
  const rel = path.relative(dir, target);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** Whether a path passes through a folder named `.emberscope` (any project's workspace). */
export function inAnyWorkspace(target: string): boolean {
  return target.split(path.sep).includes(WORKSPACE_DIR_NAME);
}

/**
 * Who may name what: agents (MCP) and the web UI's requests only files inside the project root,
 * after every link is followed; a person at the CLI (and tests) any file they can read. Nobody
 * names a file inside a workspace folder: the control store holds the workspace's secrets, and
 * objects/ and tmp/ are the workspace's own.
 */
function confinedToRoot(ctx: ServiceContext): boolean {
  return ctx.actor === "agent" || ctx.actor === "web";
}

/** Checks a fully resolved (link-free) path against the policy; `root` and `workspace` are real paths too. */
function checkResolved(target: string, confined: boolean, root: string, workspace: string): void {
  if (confined && !isInside(root, target)) throw denied(OUTSIDE_ROOT);
  if (inAnyWorkspace(target) || target === workspace || isInside(workspace, target)) throw denied(IN_WORKSPACE);
}

export async function realpathOr(target: string): Promise<string> {
  return fsp.realpath(target).catch(() => target);
}

/**
 * Opens `resolved` (already link-free) and checks that what was opened is a regular file that
 * still passes `check` where it now is: a directory on its path swapped for a link between the
 * realpath and the open would have moved it.
 */
async function openChecked(resolved: string, name: string, check: (opened: string) => void): Promise<InputFile> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(resolved, OPEN_FLAGS);
  } catch (error) {
    // ELOOP: the last component became a link after it was resolved.
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw denied(OUTSIDE_ROOT);
    throw unreadable();
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw unreadable();
    let file = resolved;
    if (FD_PATHS) {
      file = `/proc/self/fd/${handle.fd}`;
      check(await fsp.readlink(file));
    } else {
      // Without descriptor paths, later opens go by name: it must still be this file.
      const now = await fsp.stat(resolved).catch(() => null);
      if (!now || now.dev !== stat.dev || now.ino !== stat.ino) {
        throw new EmberscopeError("ARTIFACT_CHANGED", "The file was replaced while it was being opened; import it again.", { details: { argument: "path" } });
      }
    }
    return { file, name, stat, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Opens the file a request names for import, as the caller may (see confinedToRoot). */
export async function openRequestedFile(ctx: ServiceContext, ws: Workspace, requested: string): Promise<InputFile> {
  const confined = confinedToRoot(ctx);
  // A confined caller's relative path is relative to the project root (as import_artifact says),
  // whatever directory the server runs in; a person's, to their working directory.
  const lexical = path.resolve(confined ? ws.layout.projectRoot : ctx.locator.cwd, requested);
  // Refused by name first, so a confined caller cannot learn whether a file outside exists.
  if (confined && !isInside(ws.layout.projectRoot, lexical)) throw denied(OUTSIDE_ROOT);
  if (inAnyWorkspace(lexical)) throw denied(IN_WORKSPACE);
  const root = await realpathOr(ws.layout.projectRoot);
  const workspace = await realpathOr(ws.layout.dir);
  let resolved: string;
  try {
    resolved = await fsp.realpath(lexical);
  } catch {
    throw unreadable();
  }
  const check = (target: string) => checkResolved(target, confined, root, workspace);
  check(resolved);
  return openChecked(resolved, path.basename(lexical), check);
}

/**
 * Opens a file the server itself staged in the workspace's tmp/ (the browser's upload): the one
 * import input inside the workspace folder, reachable only in-process, never by a request's path.
 */
export async function openStagedFile(ws: Workspace, staged: string): Promise<InputFile> {
  const tmp = await realpathOr(ws.layout.tmp);
  const check = (target: string) => {
    if (!isInside(tmp, target)) throw denied("Only files the server staged in the workspace's tmp/ can be imported this way.");
  };
  let resolved: string;
  try {
    resolved = await fsp.realpath(staged);
  } catch {
    throw unreadable();
  }
  check(resolved);
  return openChecked(resolved, path.basename(staged), check);
}
