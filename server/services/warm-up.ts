import { promises as fsp } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { closeReadersOf } from "../evidence/engine";
import { ParquetGenerationWriter } from "../evidence/parquet-writer";
import { layoutFor } from "../store/layout";
import { syncPath } from "../store/object-store";
import { initWorkspace } from "../store/workspace";
import { flameTree, runViewFacts } from "./evidence";
import { importUploadedFile } from "./imports";
import { callService, type ServiceContext } from "./service";
import { warmUpSlot, type WarmUpState } from "./warm-up-state";

export { warmUpState, type WarmUpState } from "./warm-up-state";

/**
 * A server's first drop used to pay for cold code: in a fresh process the import's parse and
 * totals, and the run page's first flame tree (reader, track totals, flame tree, row decoding),
 * took about twice what they take the second time. So `serve`, once it listens, has the upload
 * route run them once for real on a profile made here, in a throwaway workspace under the OS temp
 * folder, through the same services a drop uses — never the person's workspace — and then closes
 * and deletes it. Nothing it does can fail the server: its failure is recorded and dropped.
 */

/**
 * The profile warmed on: shaped as a dropped one (a V8 cpuprofile, a call tree, a hot function),
 * a third of the 1 MB one the daily benchmark drops. Smaller warmed less: at 6,000 samples over 400
 * nodes the next 1 MB drop's first flame tree took more CPU than with no warm-up (160 ms against
 * 120; 95 ms after this one), its import 335 ms against 520.
 */
export const WARM_UP_PROFILE = { samples: 20_000, nodes: 1_500 } as const;

/** The throwaway workspaces' folder names under the OS temp folder. */
const WARM_UP_PREFIX = "emberscope-warm-up-";

/** A warm-up takes seconds: a throwaway workspace older than this was left by a server that died in its warm-up. */
const LEFT_AFTER_MS = 10 * 60_000;

/**
 * Removes the throwaway workspaces of warm-ups that never ended (a server killed or crashed during
 * its warm-up leaves its folder), the folders of this prefix last changed over LEFT_AFTER_MS ago:
 * another server's warm-up under way is younger. Best effort.
 */
export async function removeLeftWarmUps(tempRoot: string, now = Date.now()): Promise<void> {
  const names = await fsp.readdir(tempRoot).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(WARM_UP_PREFIX)) continue;
    const dir = path.join(tempRoot, name);
    const info = await fsp.lstat(dir).catch(() => null);
    if (!info?.isDirectory() || now - info.mtimeMs < LEFT_AFTER_MS) continue;
    await fsp.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The made profile's file name (the warm-up run's title). */
const WARM_UP_FILE_NAME = "warm-up.cpuprofile";

/** A V8 .cpuprofile of `samples` samples over `nodes` call-tree nodes, made from a fixed seed. */
export function warmUpProfile(samples: number, nodes: number): string {
  let seed = 0x2545f491;
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const children: number[][] = Array.from({ length: nodes }, () => []);
  for (let id = 1; id < nodes; id++) children[Math.floor(random() * id)].push(id);
  const nodeList = children.map((kids, id) => {
    const name = id === 0 ? "(root)" : id === nodes - 1 ? "hotFunction" : `module${id % 13}.function_${id}`;
    const url = id === 0 ? "" : `file:///warm-up/module${id % 13}.js`;
    return { id: id + 1, callFrame: { functionName: name, scriptId: "1", url, lineNumber: id % 300, columnNumber: 4 }, hitCount: 0, children: kids.map((k) => k + 1) };
  });
  const ids: number[] = [];
  const deltas: number[] = [];
  for (let i = 0; i < samples; i++) {
    ids.push(random() < 0.33 ? nodes : 2 + Math.floor(random() * (nodes - 2)));
    deltas.push(80 + Math.floor(random() * 40));
  }
  return JSON.stringify({ nodes: nodeList, startTime: 1_000_000, endTime: 1_000_000 + samples * 100, samples: ids, timeDeltas: deltas });
}

/**
 * Imports a made profile into a new workspace under `tempRoot` as the upload route does, reads its
 * first flame tree as the run page does (the route's prepareRunView, then the page's own questions
 * at HEAD), then closes its reader and deletes the workspace. The spare writer DuckDB the import
 * took is made again before it returns.
 */
export async function warmUpImportAndOpen(tempRoot = tmpdir()): Promise<void> {
  await removeLeftWarmUps(tempRoot);
  const root = await fsp.mkdtemp(path.join(tempRoot, WARM_UP_PREFIX));
  const layout = layoutFor(root);
  try {
    initWorkspace(root).close();
    const staged = path.join(layout.tmp, WARM_UP_FILE_NAME);
    await fsp.writeFile(staged, warmUpProfile(WARM_UP_PROFILE.samples, WARM_UP_PROFILE.nodes), { mode: 0o600 });
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "web", person: false };
    const imported = await importUploadedFile(ctx, staged, {});
    await callService(flameTree, ctx, { run_id: imported.run_id, commit_id: imported.commit_id, tracks: "busiest" });
    await callService(runViewFacts, ctx, { run_id: imported.run_id, commit_id: "HEAD" });
    await callService(flameTree, ctx, { run_id: imported.run_id, commit_id: "HEAD", tracks: "busiest" });
  } finally {
    await closeReadersOf(layout.dir);
    await fsp.rm(root, { recursive: true, force: true });
    // Its files written and removed are committed to disk now, not by the drop's first fsync. The
    // drop's write phase was 190-310 ms after a warm-up against 90-120 without; with this sync it is
    // still 120-250 against 70-125 (daily benchmark, a loaded machine): the rest is not explained yet.
    await syncPath(tempRoot).catch(() => undefined);
    // The writer that took the spare makes the next one as it closes: ready before the first drop.
    await ParquetGenerationWriter.spareMade();
  }
}

/**
 * Starts the warm-up once per process, in the background, and returns its end; a failure is
 * recorded in its state, never thrown. `run` is the work (warmUpImportAndOpen unless a test
 * gives another).
 */
export function startWarmUp(run: () => Promise<void> = () => warmUpImportAndOpen()): Promise<WarmUpState> {
  const slot = warmUpSlot();
  if (slot.done) return slot.done;
  const started = performance.now();
  slot.state = { state: "running", ms: null, error: null };
  const ended = (state: "done" | "failed", error: string | null) => (slot.state = { state, ms: Math.round(performance.now() - started), error });
  slot.done = Promise.resolve()
    .then(run)
    .then(
      () => ended("done", null),
      (error: unknown) => ended("failed", (error instanceof Error ? error.message : String(error)).replaceAll(tmpdir(), "<tmp>").slice(0, 500)),
    );
  return slot.done;
}
