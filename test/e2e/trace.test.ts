import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { callService, importArtifact, summarizeRun } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { cpuprofileFile } from "../bench/generators";
import { launchChromium, screenshotPath, newWatchedPage } from "../helpers/browser";
import { tempProject } from "../helpers/project";
import { startServer } from "../helpers/server";

const ctxFor = (root: string) => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });

/** A small Chrome trace: two named threads, nested complete slices, one B/E pair and one flow between threads (times in µs). */
const FIXTURE = {
  traceEvents: [
    { ph: "M", name: "process_name", pid: 1, tid: 1, args: { name: "renderer" } },
    { ph: "M", name: "thread_name", pid: 1, tid: 1, args: { name: "main" } },
    { ph: "M", name: "thread_name", pid: 1, tid: 2, args: { name: "worker" } },
    { ph: "X", name: "frame", cat: "app", pid: 1, tid: 1, ts: 1000, dur: 1000 },
    { ph: "X", name: "layout", cat: "app", pid: 1, tid: 1, ts: 1100, dur: 300 },
    { ph: "X", name: "paint", cat: "app", pid: 1, tid: 1, ts: 1500, dur: 400 },
    { ph: "X", name: "raster", cat: "app", pid: 1, tid: 1, ts: 1600, dur: 100 },
    { ph: "B", name: "idle", cat: "app", pid: 1, tid: 1, ts: 2200 },
    { ph: "E", name: "idle", cat: "app", pid: 1, tid: 1, ts: 2500 },
    { ph: "X", name: "job", cat: "work", pid: 1, tid: 2, ts: 1200, dur: 600 },
    { ph: "X", name: "parse", cat: "work", pid: 1, tid: 2, ts: 1250, dur: 150 },
    { ph: "X", name: "compile", cat: "work", pid: 1, tid: 2, ts: 1450, dur: 250 },
    { ph: "s", name: "post", cat: "flow", id: 7, pid: 1, tid: 1, ts: 1150 },
    { ph: "f", name: "post", cat: "flow", id: 7, pid: 1, tid: 2, ts: 1500, bp: "e" },
  ],
};
const SLICES = 8;

/** A new project whose workspace holds one import of the file `write` makes. */
async function projectWithImport(name: string, write: (file: string) => unknown) {
  const root = tempProject();
  initWorkspace(root).close();
  const file = path.join(root, name);
  await write(file);
  const imported = await callService(importArtifact, ctxFor(root), { path: file });
  return { root, imported };
}

describe("trace window in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("draws every span of a fixture Chrome trace on its thread's track, the flow as an arrow, and lists the spans of a selected range", async () => {
    const { root, imported } = await projectWithImport("fixture.trace.json", (file) => writeFileSync(file, JSON.stringify(FIXTURE)));
    const summary = await callService(summarizeRun, ctxFor(root), { run_id: imported.run_id });
    expect(summary.spans?.spans).toBe(SLICES);

    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
      await page.goto(`${server.url}/runs/${imported.run_id}?view=trace`);
      const win = page.locator("[data-testid=trace-window][data-state=ready]");
      await win.waitFor({ timeout: 30_000 });
      expect(await win.getAttribute("data-span-count")).toBe(String(SLICES));
      expect(await win.getAttribute("data-track-count")).toBe("2");
      expect(await page.locator("[data-testid=trace-counts]").innerText()).toContain(`${SLICES} of ${SLICES} spans loaded · 2 tracks`);
      expect(await page.locator("[data-testid=trace-commit]").innerText()).toBe(imported.commit_id);
      const canvas = page.locator("[data-testid=trace-canvas]");
      await expect.poll(() => canvas.getAttribute("data-drawn")).toBe(String(SLICES));
      await expect.poll(() => canvas.getAttribute("data-arrows")).toBe("1");

      // Hover the outermost slice of the main thread (depth 0, just after its start).
      const box = (await canvas.boundingBox())!;
      const gutter = Number(await canvas.getAttribute("data-gutter"));
      const span = 2500 - 1000;
      const xAt = (us: number) => box.x + gutter + ((us - 1000) / span) * (box.width - gutter);
      await page.mouse.move(xAt(1050), box.y + 24 + 20 + 8);
      expect(await page.locator("[data-testid=trace-tooltip]").innerText()).toContain("frame");
      await page.screenshot({ path: screenshotPath("trace-window"), fullPage: true });

      // Select 1050–1180 µs: frame, layout (from 1100) and nothing on the worker (job starts at 1200).
      await page.mouse.move(xAt(1050), box.y + 60);
      await page.mouse.down();
      await page.mouse.move(xAt(1120), box.y + 60, { steps: 4 });
      await page.mouse.move(xAt(1180), box.y + 60, { steps: 4 });
      await page.mouse.up();
      await page.locator("[data-testid=trace-selection]").waitFor();
      expect(await page.locator("[data-testid=trace-selection-count]").innerText()).toBe("(2)");
      const listed = await page.locator("[data-testid=trace-selection] tbody tr td:first-child").allInnerTexts();
      expect(listed.sort()).toEqual(["frame", "layout"]);
      // Spans carry no samples: the range's flame graph says so instead of drawing nothing.
      await page.locator("[data-testid=range-flame-empty]").waitFor();

      // Zoom to the selection with the keyboard: only the overlapping spans remain in view.
      await canvas.focus();
      await page.keyboard.press("z");
      await expect.poll(async () => Number(await canvas.getAttribute("data-drawn"))).toBeLessThan(SLICES);
      await page.screenshot({ path: screenshotPath("trace-window-selection"), fullPage: true });
      await page.keyboard.press("Escape");
      await page.keyboard.press("Escape");
      await expect.poll(() => canvas.getAttribute("data-drawn")).toBe(String(SLICES));
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 90_000);

  it("keeps the zoom and the selected range in the URL: the copied link opens the same range and span list", async () => {
    const { root, imported } = await projectWithImport("fixture.trace.json", (file) => writeFileSync(file, JSON.stringify(FIXTURE)));
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
      await page.goto(`${server.url}/runs/${imported.run_id}?view=trace`);
      const win = page.locator("[data-testid=trace-window][data-state=ready]");
      await win.waitFor({ timeout: 30_000 });
      // The whole run (1.5 ms) is the default view: nothing about it in the URL yet. Times are in ns
      // from the importer's origin; t(µs) converts a fixture timestamp.
      const [f0, f1] = (await win.getAttribute("data-view"))!.split("..").map(Number);
      expect(f1 - f0).toBe(1_500_000);
      const t = (us: number) => f0 + (us - 1000) * 1000;
      expect(new URL(page.url()).searchParams.get("window")).toBeNull();

      // Zoom in twice around the centre (W), then drag a selection from 1460 to 1690 µs.
      const canvas = page.locator("[data-testid=trace-canvas]");
      await canvas.focus();
      await page.keyboard.press("w");
      await page.keyboard.press("w");
      await expect.poll(() => new URL(page.url()).searchParams.get("window")).toMatch(/^\d+\.\.\d+$/);
      const zoomed = (await win.getAttribute("data-view"))!;
      expect(new URL(page.url()).searchParams.get("window")).toBe(zoomed);
      const [v0, v1] = zoomed.split("..").map(Number);
      expect(v1 - v0).toBeLessThan(1_500_000 * 0.5);
      const box = (await canvas.boundingBox())!;
      const gutter = Number(await canvas.getAttribute("data-gutter"));
      const xAt = (us: number) => box.x + gutter + ((t(us) - v0) / (v1 - v0)) * (box.width - gutter);
      await page.mouse.move(xAt(1460), box.y + 60);
      await page.mouse.down();
      await page.mouse.move(xAt(1600), box.y + 60, { steps: 4 });
      await page.mouse.move(xAt(1690), box.y + 60, { steps: 4 });
      await page.mouse.up();
      await page.locator("[data-testid=trace-selection]").waitFor();
      await expect.poll(() => new URL(page.url()).searchParams.get("range")).toMatch(/^\d+\.\.\d+$/);
      const selected = (await win.getAttribute("data-selection"))!;
      expect(new URL(page.url()).searchParams.get("range")).toBe(selected);
      const [s0, s1] = selected.split("..").map(Number);
      expect(Math.abs(s0 - t(1460))).toBeLessThan(5_000);
      expect(Math.abs(s1 - t(1690))).toBeLessThan(5_000);
      const heading = await page.locator("[data-testid=trace-selection] h3").innerText();
      const rows = await page.locator("[data-testid=trace-selection] tbody tr").allInnerTexts();
      // Spans overlapping 1460–1690 µs: frame, paint, raster (main), job and compile (worker).
      expect(
        (await page.locator("[data-testid=trace-selection] tbody tr td:first-child").allInnerTexts()).sort(),
      ).toEqual(["compile", "frame", "job", "paint", "raster"]);
      const drawn = await canvas.getAttribute("data-drawn");
      const link = page.url();
      expect(link).toContain("view=trace");

      // The copied link in a fresh browser context: same visible range, selection, heading and span list.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const again = await context.newPage();
      again.on("pageerror", (e) => errors.push(String(e)));
      await again.goto(link);
      const win2 = again.locator("[data-testid=trace-window][data-state=ready]");
      await win2.waitFor({ timeout: 30_000 });
      await again.locator("[data-testid=trace-selection]").waitFor();
      expect(await win2.getAttribute("data-view")).toBe(zoomed);
      expect(await win2.getAttribute("data-selection")).toBe(selected);
      expect(await again.locator("[data-testid=trace-selection] h3").innerText()).toBe(heading);
      expect(await again.locator("[data-testid=trace-selection] tbody tr").allInnerTexts()).toEqual(rows);
      await expect.poll(() => again.locator("[data-testid=trace-canvas]").getAttribute("data-drawn")).toBe(drawn);
      await again.screenshot({ path: screenshotPath("trace-window-from-link"), fullPage: true });
      // Opening it must not rewrite the link.
      await again.waitForTimeout(300);
      expect(again.url()).toBe(link);

      // Esc twice: selection cleared, whole run shown, and the URL says so.
      const canvas2 = again.locator("[data-testid=trace-canvas]");
      await canvas2.focus();
      await again.keyboard.press("Escape");
      await again.keyboard.press("Escape");
      await expect.poll(() => new URL(again.url()).searchParams.get("range")).toBeNull();
      await expect.poll(() => new URL(again.url()).searchParams.get("window")).toBeNull();
      expect(errors).toEqual([]);
      await context.close();
      await page.close();
    } finally {
      await server.stop();
    }
  }, 90_000);

  it("a run without spans says what to open or import instead", async () => {
    const { root, imported } = await projectWithImport("cpu.cpuprofile", (file) => cpuprofileFile(file, 2000, 50));
    const server = await startServer(root);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
      await page.goto(`${server.url}/runs/${imported.run_id}?view=trace`);
      const empty = page.locator("[data-testid=trace-empty]");
      await empty.waitFor({ timeout: 30_000 });
      expect(await empty.innerText()).toContain("npx emberscope import trace.json");
      await page.close();
    } finally {
      await server.stop();
    }
  }, 60_000);
});
