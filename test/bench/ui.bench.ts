import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { callService, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { startSettledServer, type RunningServer } from "../helpers/server";
import { cpuprofileFile } from "./generators";
import { summarize } from "./stats";

const NODE_BUDGET = 100_000;

/**
 * Flame graph in headless Chromium over a 1 M-sample / 100 k-node profile (needs `npm run build`):
 * time from the data's arrival to the first painted frame, and input-to-drawn frame times while
 * zooming (Ctrl + wheel) and panning (drag).
 */
export async function uiBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-ui-"));
  const browser = await launchChromium();
  let server: RunningServer | null = null;
  try {
    initWorkspace(dir).close();
    const file = path.join(dir, "big.cpuprofile");
    await cpuprofileFile(file, 1_000_000, 100_000);
    const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "test" };
    const imported = await callService(importArtifact, ctx, { path: file });
    server = await startSettledServer(dir);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const firstPaint: number[] = [];
    const loadLongTasks: number[] = [];
    let drawnNodes = 0;
    let layoutThread = "";
    for (let trial = 0; trial < 3; trial++) {
      await page.goto(`${server.url}/runs/${imported.run_id}?metric=samples&budget=${NODE_BUDGET}`);
      await page.waitForFunction(() => performance.getEntriesByName("emberscope:flame-paint").length > 0, null, { timeout: 120_000 });
      // Scripts run in the page are strings: tsx's name helpers do not exist there.
      const t = (await page.evaluate(`(async () => {
        const data = performance.getEntriesByName("emberscope:flame-data")[0].startTime;
        const paint = performance.getEntriesByName("emberscope:flame-paint")[0].startTime;
        const text = document.querySelector("[data-testid=flame-details]")?.textContent ?? "";
        const m = text.match(/^([\\d,]+) frames/);
        // Main-thread tasks over 50 ms that start after the data arrived (the response's JSON
        // parse ends at the mark) and before the first paint.
        const long = await new Promise((resolve) => {
          const seen = [];
          new PerformanceObserver((list) => list.getEntries().forEach((e) => seen.push(e))).observe({ type: "longtask", buffered: true });
          setTimeout(() => resolve(seen.filter((e) => e.startTime >= data && e.startTime < paint).map((e) => Math.round(e.duration))), 100);
        });
        return { ms: paint - data, frames: m ? Number(m[1].replace(/,/g, "")) : 0, long, thread: document.querySelector("[data-testid=flame-cell]")?.getAttribute("data-layout-thread") };
      })()`)) as { ms: number; frames: number; long: number[]; thread: string };
      firstPaint.push(t.ms);
      loadLongTasks.push(...t.long);
      layoutThread = t.thread;
      drawnNodes = t.frames;
    }
    // Interaction: each step dispatches one input event and waits until that frame is drawn.
    const interaction = (await page.evaluate(`(async () => {
      const box = document.querySelector("[data-testid=flame-canvas-box]");
      const canvas = document.querySelector("[data-testid=flame-canvas]");
      const rect = canvas.getBoundingClientRect();
      const longTasks = [];
      new PerformanceObserver((list) => list.getEntries().forEach((e) => longTasks.push(e.duration))).observe({ type: "longtask", buffered: false });
      const frameDone = () =>
        new Promise((resolve) => {
          const before = performance.getEntriesByName("emberscope:flame-frame").length;
          const poll = () => {
            const all = performance.getEntriesByName("emberscope:flame-frame");
            if (all.length > before) resolve(all[all.length - 1].startTime + all[all.length - 1].duration);
            else requestAnimationFrame(poll);
          };
          requestAnimationFrame(poll);
        });
      const frames = [];
      const draws = [];
      const step = async (fire) => {
        const done = frameDone();
        const t0 = performance.now();
        fire();
        const end = await done;
        frames.push(end - t0);
        const all = performance.getEntriesByName("emberscope:flame-frame");
        draws.push(all[all.length - 1].duration);
      };
      const y = rect.top + 40;
      for (let i = 0; i < 40; i++) {
        const x = rect.left + rect.width * (0.2 + 0.6 * ((i * 37) % 100) / 100);
        await step(() => box.dispatchEvent(new WheelEvent("wheel", { deltaY: i < 20 ? -120 : 90, ctrlKey: true, clientX: x, clientY: y, bubbles: true, cancelable: true })));
      }
      canvas.dispatchEvent(new MouseEvent("mousedown", { button: 0, clientX: rect.left + 600, clientY: y, bubbles: true }));
      for (let i = 1; i <= 40; i++) {
        await step(() => canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: rect.left + 600 + (i % 20 < 10 ? i * 8 : -i * 6), clientY: y, bubbles: true })));
      }
      canvas.dispatchEvent(new MouseEvent("mouseup", { button: 0, clientX: rect.left + 600, clientY: y, bubbles: true }));
      return { frames, draws, longTasks };
    })()`)) as { frames: number[]; draws: number[]; longTasks: number[] };
    return {
      profile: { samples: 1_000_000, nodes: 100_000, node_budget: NODE_BUDGET, drawn_nodes: drawnNodes },
      first_paint_after_data_ms: summarize(firstPaint),
      layout_thread: layoutThread,
      long_tasks_over_50ms_between_data_and_paint_ms: loadLongTasks,
      frame_input_to_drawn_ms: summarize(interaction.frames),
      frame_draw_only_ms: summarize(interaction.draws),
      long_tasks_over_50ms_during_interaction: interaction.longTasks.length,
      goals: { first_paint_ms: 1000, frame_p95_ms: 16 },
    };
  } finally {
    await browser.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
