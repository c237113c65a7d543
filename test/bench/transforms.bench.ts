import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import type { Transform } from "../../analysis/queries/transforms";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { analyzeHotspots, callService, flameTree, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { startSettledServer } from "../helpers/server";
import { walkingCpuprofileFile } from "./generators";
import { summarize } from "./stats";

const SAMPLES = 1_000_000;
const NODES = 20_000;

/**
 * Transforms over a V8 profile of 1 M samples (walkingCpuprofileFile, ~20 k stack nodes, 5–40
 * deep): the server's evidence.flame_tree with each kind of transform (each call a transform not
 * asked before, so the engine's result cache cannot answer it), and, in headless Chromium (needs
 * `npm run build`), the time from pressing `m` (merge function) on a hovered frame of the drawn
 * graph to the repaint of the transformed graph (the query over HTTP, the layout in the worker,
 * the frame), and from navigation with a transform in the URL to the first paint.
 */
export async function transformsBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-transforms-"));
  try {
    initWorkspace(dir).close();
    const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "test" };
    const file = path.join(dir, "walk.cpuprofile");
    await walkingCpuprofileFile(file, SAMPLES, NODES);
    const bytes = statSync(file).size;
    const imported = await callService(importArtifact, ctx, { path: file });
    rmSync(file);
    const runId = imported.run_id;
    const timed = async (transforms: Transform[], inverted = false) => {
      const start = performance.now();
      const r = await callService(flameTree, ctx, { run_id: runId, transforms, inverted });
      return { ms: performance.now() - start, nodes: r.nodes.length, total: r.nodes.filter((n) => n.parent_id === null).reduce((s, n) => s + n.total, 0) };
    };
    const plainFirst = await timed([]);
    const hot = await callService(analyzeHotspots, ctx, { run_id: runId, limit: 40 });
    const fns = hot.rows.filter((r) => r.self > 0);
    const modules = [...new Set(hot.rows.map((r) => r.module).filter((m): m is string => Boolean(m)))];
    const kinds: Record<string, (i: number) => Transform[]> = {
      "merge-function": (i) => [{ type: "merge-function", frame_key: fns[i].frame_key }],
      "focus-function": (i) => [{ type: "focus-function", frame_key: fns[i].frame_key }],
      "drop-function": (i) => [{ type: "drop-function", frame_key: fns[i].frame_key }],
      "collapse-recursion": (i) => [{ type: "collapse-recursion", frame_key: fns[i].frame_key }],
      "collapse-module": (i) => [{ type: "collapse-module", module: modules[i % modules.length] }],
      "three-stacked": (i) => [
        { type: "merge-function", frame_key: fns[i].frame_key },
        { type: "collapse-recursion", frame_key: fns[i + 1].frame_key },
        { type: "drop-function", frame_key: fns[i + 2].frame_key },
      ],
    };
    const server: Record<string, unknown> = {};
    let round = 0;
    for (const [kind, make] of Object.entries(kinds)) {
      const ms: number[] = [];
      let nodes = 0;
      for (let i = 0; i < 3; i++) {
        const r = await timed(make(round++ % (fns.length - 3)));
        ms.push(r.ms);
        nodes = r.nodes;
      }
      server[kind] = { ms: summarize(ms), nodes_last: nodes };
    }
    const invertedMs: number[] = [];
    for (let i = 0; i < 3; i++) invertedMs.push((await timed([{ type: "merge-function", frame_key: fns[30 + i].frame_key }], true)).ms);
    server.inverted_after_merge = { ms: summarize(invertedMs) };

    // The page: press m on the heaviest self function's widest frame, time to the repaint.
    const plainTree = await callService(flameTree, ctx, { run_id: runId });
    const built = buildFlameTree(plainTree.nodes);
    const layout = layoutFlame(built);
    const app = await startSettledServer(dir);
    const browser = await launchChromium();
    const repaint: number[] = [];
    const loadWithTransform: number[] = [];
    const load: number[] = [];
    try {
      await fetch(`${app.url}/runs/${runId}`).then((r) => r.text());
      for (let i = 0; i < 3; i++) {
        // A function not merged before (the server would answer from its cache): the i-th widest frame at depth 3.
        const candidates = [...built.ids.keys()].filter((k) => built.depth[k] === 3).sort((a, b) => layout.w[b] - layout.w[a]);
        const target = candidates[i];
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        const page = await context.newPage();
        await page.goto(`${app.url}/runs/${runId}`);
        await page.waitForFunction(() => performance.getEntriesByName("emberscope:flame-paint").length > 0, null, { timeout: 120_000 });
        load.push((await page.evaluate(`performance.getEntriesByName("emberscope:flame-paint")[0].startTime`)) as number);
        const box = (await page.locator("[data-testid=flame-canvas]").first().boundingBox())!;
        await page.mouse.move(box.x + (layout.x[target] + layout.w[target] / 2) * box.width, box.y + built.depth[target] * ROW_HEIGHT + ROW_HEIGHT / 2);
        await page.locator("[data-testid=flame-tooltip]").waitFor();
        const t0 = (await page.evaluate("performance.now()")) as number;
        await page.keyboard.press("m");
        await page.waitForFunction((from) => performance.getEntriesByName("emberscope:flame-repaint").some((e) => e.startTime > from), t0, { timeout: 120_000 });
        const at = (await page.evaluate(`performance.getEntriesByName("emberscope:flame-repaint").map((e) => e.startTime)`)) as number[];
        repaint.push(Math.max(...at) - t0);
        const url = page.url();
        if (!new URL(url).searchParams.get("tf")) throw new Error("the key applied no transform");
        await context.close();
        // The same link opened afresh: the transformed graph from navigation.
        const again = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        const fresh = await again.newPage();
        await fresh.goto(url);
        await fresh.waitForFunction(() => performance.getEntriesByName("emberscope:flame-paint").length > 0, null, { timeout: 120_000 });
        loadWithTransform.push((await fresh.evaluate(`performance.getEntriesByName("emberscope:flame-paint")[0].startTime`)) as number);
        await again.close();
      }
    } finally {
      await browser.close();
      await app.stop();
    }
    return {
      samples: SAMPLES,
      file_bytes: bytes,
      stack_nodes: imported.rows.stacks,
      server_flame_tree_ms: { untransformed_first_call: Math.round(plainFirst.ms), nodes: plainFirst.nodes, ...server },
      page: {
        key_to_repaint_ms: summarize(repaint),
        navigation_to_first_paint_ms: summarize(load),
        navigation_with_transform_in_url_to_first_paint_ms: summarize(loadWithTransform),
        note: "merge function by key on a hovered frame: the flame_tree call over HTTP (a transform not asked before), the layout in the worker, the frame; fresh browser context each round",
      },
      load_average_1m: Math.round(loadavg()[0] * 10) / 10,
      note: "2 cores shared with other work: figures are noisy; see the load average",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
