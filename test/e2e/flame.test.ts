import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatPercent, formatValue } from "../../analysis/flame/format";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { analyzeHotspots, callService, flameTree, frameCallers, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, screenshotPath, newWatchedPage } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

// A profile whose shape is known: tokenize is called from parse and from measureText.
const FOLDED = `main;parse;tokenize 30
main;parse 5
main;render;layout;measureText 40
main;render;layout;measureText;tokenize 4
main;render;paint 15
main;render 3
main;gc 7
idle 6
`;

/**
 * A Chrome CPU profile with one sample per millisecond, in this order: tokenize ×3, parse,
 * paint ×4, render ×2 (tokenize under parse, paint under render, both under main).
 */
const TIMED = {
  nodes: [
    { id: 1, callFrame: { functionName: "(root)", scriptId: "0", url: "", lineNumber: -1, columnNumber: -1 }, hitCount: 0, children: [2] },
    { id: 2, callFrame: { functionName: "main", scriptId: "1", url: "file:///app/main.js", lineNumber: 0, columnNumber: 0 }, hitCount: 0, children: [3, 5] },
    { id: 3, callFrame: { functionName: "parse", scriptId: "1", url: "file:///app/parse.js", lineNumber: 4, columnNumber: 0 }, hitCount: 0, children: [4] },
    { id: 4, callFrame: { functionName: "tokenize", scriptId: "1", url: "file:///app/parse.js", lineNumber: 20, columnNumber: 0 }, hitCount: 0, children: [] },
    { id: 5, callFrame: { functionName: "render", scriptId: "1", url: "file:///app/render.js", lineNumber: 2, columnNumber: 0 }, hitCount: 0, children: [6] },
    { id: 6, callFrame: { functionName: "paint", scriptId: "1", url: "file:///app/render.js", lineNumber: 40, columnNumber: 0 }, hitCount: 0, children: [] },
  ],
  startTime: 0,
  endTime: 10_000,
  samples: [4, 4, 4, 3, 6, 6, 6, 6, 5, 5],
  timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
};

/** Page coordinates of the centre of a node in the icicle drawing, for the current viewport. */
async function nodeCentre(page: Page, depth: number, fx: number): Promise<{ x: number; y: number }> {
  const box = (await page.locator("[data-testid=flame-canvas]").first().boundingBox())!;
  return { x: box.x + fx * box.width, y: box.y + depth * ROW_HEIGHT + ROW_HEIGHT / 2 };
}

async function pixel(page: Page, at: { x: number; y: number }): Promise<number[]> {
  return page.evaluate(({ x, y }) => {
    const canvas = document.querySelector<HTMLCanvasElement>("[data-testid=flame-canvas]")!;
    const r = canvas.getBoundingClientRect();
    const dpr = canvas.width / r.width;
    return Array.from(canvas.getContext("2d")!.getImageData(Math.round((x - r.left) * dpr), Math.round((y - r.top) * dpr), 1, 1).data);
  }, at);
}

describe("run page: flame graph, sandwich and call tree in a real browser", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let runId: string;
  let ctx: ServiceContext;

  beforeAll(async () => {
    // One project for the whole file (tempProject() is removed after each test).
    root = mkdtempSync(path.join(tmpdir(), "emberscope-flame-"));
    initWorkspace(root).close();
    const file = path.join(root, "ui.folded");
    writeFileSync(file, FOLDED);
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    runId = (await callService(importArtifact, ctx, { path: file })).run_id;
    server = await startServer(root);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("zooms into a known function: breadcrumb, URL and tooltip values equal the server's hotspots", async () => {
    const tree = await callService(flameTree, ctx, { run_id: runId });
    const hot = await callService(analyzeHotspots, ctx, { run_id: runId, limit: 50 });
    const built = buildFlameTree(tree.nodes);
    const layout = layoutFlame(built);
    const target = built.names.indexOf("measureText");
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/runs/${runId}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    expect(await page.locator("[data-testid=pinned-commit]").innerText()).toContain(tree.commit_id);
    expect(await page.locator("[data-testid=view-commit]").innerText()).toBe(tree.commit_id);
    await page.screenshot({ path: screenshotPath("flame-overview") });

    const centre = await nodeCentre(page, built.depth[target], layout.x[target] + layout.w[target] / 2);
    await page.mouse.click(centre.x, centre.y);
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).toMatch(/all\s*›\s*main\s*›\s*render\s*›\s*layout\s*›\s*measureText/);
    await expect.poll(() => new URL(page.url()).searchParams.get("zoom")).toBe(built.ids[target]);

    // Zoomed, the node spans the full width: hover its row.
    const zoomed = await nodeCentre(page, built.depth[target], 0.3);
    await page.mouse.move(zoomed.x, zoomed.y);
    const tip = page.locator("[data-testid=flame-tooltip]");
    await tip.waitFor();
    const row = hot.rows.find((r) => r.name === "measureText")!;
    expect(await tip.locator("[data-testid=tooltip-name]").innerText()).toBe("measureText");
    // The function list is asked once the tree is drawn: its rows join the tooltip when they come.
    await expect.poll(() => tip.locator("[data-testid=tooltip-fn-self]").innerText()).toBe(formatValue(row.self, hot.unit, hot.metric));
    expect(await tip.locator("[data-testid=tooltip-fn-total]").innerText()).toBe(formatValue(row.total, hot.unit, hot.metric));
    // measureText has one call path, so the node's own values are the function's.
    expect(await tip.locator("[data-testid=tooltip-self]").innerText()).toBe(formatValue(row.self, hot.unit, hot.metric));
    expect(await tip.locator("[data-testid=tooltip-total]").innerText()).toBe("44 samples");
    await page.screenshot({ path: screenshotPath("flame-zoomed-tooltip") });

    // A copied link reproduces the zoom.
    const again = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await again.goto(page.url());
    await expect.poll(() => again.locator("[data-testid=flame-breadcrumb]").innerText()).toContain("measureText");
    await again.close();

    await page.mouse.move(5, 5);
    await page.keyboard.press("Escape");
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).not.toContain("main");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("search highlights the matching frames, dims the rest and reports their share", async () => {
    const tree = await callService(flameTree, ctx, { run_id: runId });
    const hot = await callService(analyzeHotspots, ctx, { run_id: runId, limit: 50 });
    const built = buildFlameTree(tree.nodes);
    const layout = layoutFlame(built);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/runs/${runId}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    await page.waitForTimeout(200);
    const at = (name: string, nth = 0) => {
      const i = built.names.map((n, k) => (n === name ? k : -1)).filter((k) => k >= 0)[nth];
      return nodeCentre(page, built.depth[i], layout.x[i] + layout.w[i] / 2);
    };
    const paintBefore = await pixel(page, await at("paint"));
    const tokenizeBefore = await pixel(page, await at("tokenize"));
    await page.keyboard.press("/");
    await page.keyboard.type("tokenize");
    const status = page.locator("[data-testid=flame-search-status]");
    await expect.poll(() => status.innerText()).toContain("2 frames");
    const tokenize = hot.rows.find((r) => r.name === "tokenize")!;
    expect(await page.locator("[data-testid=flame-search-share]").innerText()).toBe(formatPercent(tokenize.total, hot.grand_total));
    expect(new URL(page.url()).searchParams.get("q")).toBe("tokenize");
    await page.waitForTimeout(200);
    const paintAfter = await pixel(page, await at("paint"));
    const gcAfter = await pixel(page, await at("gc"));
    expect(paintAfter).not.toEqual(paintBefore); // dimmed
    expect(paintAfter).toEqual(gcAfter); // every non-match has the one dimmed colour
    expect(await pixel(page, await at("tokenize"))).toEqual(tokenizeBefore); // matches keep their colour
    expect(await pixel(page, await at("tokenize", 1))).not.toEqual(gcAfter);
    await page.screenshot({ path: screenshotPath("flame-search") });
    await page.locator("[data-testid=flame-cell]").focus();
    await page.keyboard.press("?");
    await page.locator("[data-testid=flame-help]").waitFor();
    expect(await page.locator("[data-testid=flame-help]").innerText()).toContain("Walk the stack");
    await page.screenshot({ path: screenshotPath("flame-help") });
    await page.close();
  });

  it("the sandwich shows the server's callers of the selected function; the call tree expands", async () => {
    const hot = await callService(analyzeHotspots, ctx, { run_id: runId, limit: 50 });
    const tokenize = hot.rows.find((r) => r.name === "tokenize")!;
    const callers = await callService(frameCallers, ctx, { run_id: runId, frame_key: tokenize.frame_key });
    expect(callers.rows.map((r) => r.name).sort()).toEqual(["measureText", "parse"]);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/runs/${runId}?view=sandwich`);
    await page.locator("[data-testid=sandwich-table]").waitFor();
    expect(await page.locator("[data-testid=sandwich-row]").count()).toBe(hot.rows.length);
    await page.locator(`[data-testid=sandwich-row][data-frame-key="${tokenize.frame_key}"] button`).click();
    await expect.poll(() => page.locator("[data-testid=sandwich-callers-row]").count()).toBe(2);
    const shown = await page.locator("[data-testid=sandwich-callers-row]").allInnerTexts();
    callers.rows.forEach((r, i) => {
      expect(shown[i]).toContain(r.name);
      expect(shown[i]).toContain(formatValue(r.value, hot.unit, hot.metric));
    });
    expect(new URL(page.url()).searchParams.get("sel")).toBe(tokenize.frame_key);
    await page.locator("[data-testid=sandwich-callers-flame] [data-testid=flame-canvas]").waitFor();
    // Sorting by total puts main (everything but idle) first.
    await page.locator("[data-testid=sort-total]").click();
    expect(await page.locator("[data-testid=sandwich-row] button").first().innerText()).toBe("main");
    await page.screenshot({ path: screenshotPath("sandwich"), fullPage: true });

    await page.locator("[data-testid=tab-calltree]").click();
    await page.locator("[data-testid=calltree-cell]").waitFor();
    const rows = page.locator("[data-testid=calltree-row]");
    const before = await rows.count();
    await rows.filter({ hasText: "render" }).first().focus();
    // The heaviest path starts expanded: collapse render, then expand it again from the keyboard.
    expect(await rows.filter({ hasText: "measureText" }).count()).toBe(1);
    await page.keyboard.press("ArrowLeft");
    await expect.poll(() => rows.count()).toBeLessThan(before);
    expect(await rows.filter({ hasText: "layout" }).count()).toBe(0);
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => rows.count()).toBeGreaterThan(before - 4);
    expect(await rows.filter({ hasText: "layout" }).count()).toBe(1);
    await page.screenshot({ path: screenshotPath("calltree") });
    await page.close();
  });

  it("time order: x is time, consecutive samples merge into cells; off with a reason for a profile without timestamps", async () => {
    const file = path.join(root, "timed.cpuprofile");
    writeFileSync(file, JSON.stringify(TIMED));
    const timed = (await callService(importArtifact, ctx, { path: file })).run_id;
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 800 } });

    // The folded profile has no timestamps: the toggle is off and says why.
    await page.goto(`${server.url}/runs/${runId}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    expect(await page.locator("[data-testid=mode-time-order]").isDisabled()).toBe(true);
    expect(await page.locator("[data-testid=mode-note]").innerText()).toContain("no timestamps");

    await page.goto(`${server.url}/runs/${timed}`);
    const canvas = page.locator("[data-testid=flame-canvas]");
    await expect.poll(() => canvas.getAttribute("data-mode")).toBe("left-heavy");
    // Layouts are computed in the Web Worker, not on the main thread.
    expect(await page.locator("[data-testid=flame-cell]").getAttribute("data-layout-thread")).toBe("worker");
    await page.locator("[data-testid=mode-time-order]").click();
    await expect.poll(() => canvas.getAttribute("data-mode"), { timeout: 20_000 }).toBe("time-order");
    expect(new URL(page.url()).searchParams.get("mode")).toBe("time-order");
    // Rows: all, main, render, paint. Over 10 ms, paint runs from 4 to 8 ms: its centre is at 60 %.
    const paint = await nodeCentre(page, 3, 0.6);
    await page.mouse.move(paint.x, paint.y);
    const tip = page.locator("[data-testid=flame-tooltip]");
    await tip.waitFor();
    expect(await tip.locator("[data-testid=tooltip-name]").innerText()).toBe("paint");
    expect(await tip.locator("[data-testid=tooltip-duration]").innerText()).toBe("4 ms");
    expect(await tip.locator("[data-testid=tooltip-start]").innerText()).toBe("at 4 ms");
    // The profile's primary metric is time: 4 samples of 1 ms.
    expect(await tip.locator("[data-testid=tooltip-total]").innerText()).toBe("4 ms");
    // In left-heavy order tokenize (3 ms) sits right of paint; in time order it comes first.
    const tokenize = await nodeCentre(page, 3, 0.15);
    await page.mouse.move(tokenize.x, tokenize.y);
    await expect.poll(() => tip.locator("[data-testid=tooltip-name]").innerText()).toBe("tokenize");
    await page.screenshot({ path: screenshotPath("flame-time-order") });

    // Search and zoom work on cells as on frames.
    await page.keyboard.press("/");
    await page.keyboard.type("render");
    // render matches by name and paint by its file (render.js); nested, they count once.
    await expect.poll(() => page.locator("[data-testid=flame-search-status]").innerText()).toContain("2 frames");
    expect(await page.locator("[data-testid=flame-search-share]").innerText()).toBe("60.0%");
    await page.locator("[data-testid=flame-cell]").focus();
    const paintNow = await nodeCentre(page, 3, 0.6); // the search status may have moved the canvas
    await page.mouse.click(paintNow.x, paintNow.y);
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).toMatch(/all\s*›\s*main\s*›\s*render\s*›\s*paint/);
    await page.screenshot({ path: screenshotPath("flame-time-order-zoomed") });

    // A copied link reopens time order with the zoom; the server asked its cells while rendering
    // the page, so the page makes no time-order request of its own.
    const again = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const asked: string[] = [];
    again.on("request", (r) => {
      if (r.url().includes("flame_timeline")) asked.push(r.url());
    });
    await again.goto(page.url());
    await expect.poll(() => again.locator("[data-testid=flame-canvas]").getAttribute("data-mode"), { timeout: 20_000 }).toBe("time-order");
    await expect.poll(() => again.locator("[data-testid=flame-breadcrumb]").innerText()).toContain("paint");
    expect(await again.locator("[data-testid=time-order-note]").innerText()).toContain("10 samples merged");
    expect(asked).toEqual([]);
    await again.close();

    // Transforms in the URL: time order merges along the transformed stacks. Merge parse (its 1 ms
    // goes to main, tokenize becomes main's child) and drop paint (its 4 samples, 4–8 ms, are a gap).
    const plain = await callService(flameTree, ctx, { run_id: timed });
    const key = (name: string) => plain.nodes.find((n) => n.name === name)!.frame_key;
    await page.goto(`${server.url}/runs/${timed}?mode=time-order&tf=mf-${key("parse")}~df-${key("paint")}`);
    await expect.poll(() => canvas.getAttribute("data-mode"), { timeout: 20_000 }).toBe("time-order");
    await expect.poll(() => page.locator("[data-testid=transform-chip]").count()).toBe(2);
    /** The cell drawn at a row and a fraction of the width: its name, start and duration (null: none there). */
    const cellAt = async (depth: number, fx: number) => {
      await page.mouse.move(2, 2);
      const at = await nodeCentre(page, depth, fx);
      await page.mouse.move(at.x, at.y);
      // A miss draws no tooltip: give the hover a frame or two to show one before reading none.
      await page.waitForTimeout(100);
      if ((await tip.count()) === 0) return null;
      return { name: await tip.locator("[data-testid=tooltip-name]").innerText(), start: await tip.locator("[data-testid=tooltip-start]").innerText(), duration: await tip.locator("[data-testid=tooltip-duration]").innerText(), self: await tip.locator("[data-testid=tooltip-self]").innerText() };
    };
    // main runs 0–4 ms (tokenize 3 ms and parse's 1 ms as main's own), a gap 4–8 ms, then main 8–10 ms with render.
    await expect.poll(() => cellAt(1, 0.2), { timeout: 20_000 }).toEqual({ name: "main", start: "at 0 ms", duration: "4 ms", self: "1 ms" });
    expect(await cellAt(2, 0.15)).toMatchObject({ name: "tokenize", start: "at 0 ms", duration: "3 ms" });
    expect(await cellAt(2, 0.35), "parse is merged: its time is main's own").toBeNull();
    expect(await cellAt(1, 0.6), "the dropped samples are a gap").toBeNull();
    expect(await cellAt(2, 0.9)).toMatchObject({ name: "render", start: "at 8 ms", duration: "2 ms" });
    // The note says what the transforms left out, rather than "nothing left out".
    const note = await page.locator("[data-testid=time-order-note]").innerText();
    expect(note).toContain("6 samples merged");
    expect(note).toContain("4 samples dropped by the transforms");
    expect(note).not.toContain("nothing left out");
    await page.mouse.move(2, 2);
    await page.screenshot({ path: screenshotPath("flame-time-order-transforms") });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("time order that fails says so with a retry, keeping the left-heavy graph and the toggle off; the retry draws it", async () => {
    const file = path.join(root, "timed-retry.cpuprofile");
    writeFileSync(file, JSON.stringify(TIMED));
    const timed = (await callService(importArtifact, ctx, { path: file })).run_id;
    // A server of its own, stopped under the page and started again on the same port.
    let own = await startServer(root);
    const port = new URL(own.url).port;
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 800 } });
    try {
      await page.goto(`${own.url}/runs/${timed}`);
      const canvas = page.locator("[data-testid=flame-canvas]");
      await expect.poll(() => canvas.getAttribute("data-mode")).toBe("left-heavy");
      await own.stop();
      await page.locator("[data-testid=mode-time-order]").click();
      await page.locator("[data-testid=time-order-error]").waitFor({ timeout: 20_000 });
      expect(await page.locator("[data-testid=time-order-error]").innerText()).toContain("Time order failed");
      // No empty graph behind a pressed button: the left-heavy graph stays, and the toggle says so.
      expect(await canvas.getAttribute("data-mode")).toBe("left-heavy");
      expect(await page.locator("[data-testid=mode-time-order]").getAttribute("aria-pressed")).toBe("false");
      expect(await page.locator("[data-testid=mode-left-heavy]").getAttribute("aria-pressed")).toBe("true");
      await page.screenshot({ path: screenshotPath("flame-time-order-failed") });

      own = await startServer(root, ["--port", port]);
      await page.locator("[data-testid=time-order-retry]").click();
      await expect.poll(() => canvas.getAttribute("data-mode"), { timeout: 20_000 }).toBe("time-order");
      expect(await page.locator("[data-testid=mode-time-order]").getAttribute("aria-pressed")).toBe("true");
      expect(await page.locator("[data-testid=time-order-error]").count()).toBe(0);
      expect(await page.locator("[data-testid=time-order-note]").innerText()).toContain("10 samples merged");
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await own.stop();
    }
  }, 90_000);

  it("time order of a run with several threads orders the busiest first, and the track selector picks another (with all tracks, the note picks one thread)", async () => {
    // perf script output: thread 101 runs main→compute three times, thread 102 worker→work twice.
    const sample = (tid: number, at: string, frames: string[]) => `app 100/${tid} [000] ${at}:       1000 cpu-clock: \n${frames.map((f) => `\t            1139 ${f}+0x10 (/opt/app/bin/app)\n`).join("")}\n`;
    const text = [
      sample(101, "10.000000", ["compute", "main"]),
      sample(102, "10.000500", ["work", "worker"]),
      sample(101, "10.001000", ["compute", "main"]),
      sample(102, "10.001500", ["work", "worker"]),
      sample(101, "10.002000", ["compute", "main"]),
    ].join("");
    const file = path.join(root, "threads.perf.txt");
    writeFileSync(file, text);
    const run = (await callService(importArtifact, ctx, { path: file, format: "perf-script" })).run_id;
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/runs/${run}?mode=time-order`);
    const canvas = page.locator("[data-testid=flame-canvas]");
    await expect.poll(() => canvas.getAttribute("data-mode"), { timeout: 20_000 }).toBe("time-order");
    // The busiest thread (101: three samples against two) is the one shown.
    const summary = page.locator("[data-testid=track-summary]");
    await expect.poll(async () => ((await summary.textContent()) ?? "").replace(/\s+/g, " ").trim()).toBe("Tracks: app tid 101 · pid 100 (busiest)");
    const tip = page.locator("[data-testid=flame-tooltip]");
    const rootName = async () => {
      const at = await nodeCentre(page, 1, 0.5);
      await page.mouse.move(at.x, at.y);
      await tip.waitFor();
      return tip.locator("[data-testid=tooltip-name]").innerText();
    };
    await expect.poll(rootName).toBe("main");
    await summary.click();
    await page.locator(".track-list .track-name", { hasText: "app tid 102" }).click();
    await expect.poll(rootName, { timeout: 20_000 }).toBe("worker");

    // All tracks merged: time order still orders one thread at a time, and its note picks which.
    await summary.click();
    await page.locator("[data-testid=track-all]").click();
    const picker = page.locator("[data-testid=time-order-thread]");
    await picker.waitFor({ timeout: 20_000 });
    expect(await picker.locator("option").allInnerTexts()).toEqual(["app · thread 101", "app · thread 102"]);
    expect(await picker.locator("option:checked").innerText()).toBe("app · thread 101");
    await expect.poll(rootName, { timeout: 20_000 }).toBe("main");
    const other = await picker.locator("option").nth(1).getAttribute("value");
    await picker.selectOption(other!);
    await expect.poll(rootName, { timeout: 20_000 }).toBe("worker");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("a trace of spans only draws the flame graph of its spans, with the self and total times its spans give", async () => {
    // A [0, 100 µs) holds B [10, 40) and C [50, 70); B holds D [20, 30): self A 50, B 20, C 20, D 10 µs.
    const trace = [
      { name: "A", ph: "B", pid: 1, tid: 1, ts: 0 },
      { name: "B", ph: "X", pid: 1, tid: 1, ts: 10, dur: 30 },
      { name: "D", ph: "X", pid: 1, tid: 1, ts: 20, dur: 10 },
      { name: "C", ph: "X", pid: 1, tid: 1, ts: 50, dur: 20 },
      { name: "A", ph: "E", pid: 1, tid: 1, ts: 100 },
    ];
    const file = path.join(root, "spans-only.json");
    writeFileSync(file, JSON.stringify(trace));
    const spansRun = (await callService(importArtifact, ctx, { path: file })).run_id;
    const tree = await callService(flameTree, ctx, { run_id: spansRun });
    expect(tree.metric).toBe("wall_ns");
    const built = buildFlameTree(tree.nodes);
    const layout = layoutFlame(built);
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/runs/${spansRun}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    const tip = page.locator("[data-testid=flame-tooltip]");
    for (const [name, self, total] of [
      ["A", 50_000, 100_000],
      ["B", 20_000, 30_000],
      ["D", 10_000, 10_000],
    ] as const) {
      const i = built.names.indexOf(name);
      const centre = await nodeCentre(page, built.depth[i], layout.x[i] + layout.w[i] / 2);
      await page.mouse.move(centre.x, centre.y);
      await expect.poll(() => tip.locator("[data-testid=tooltip-name]").innerText()).toBe(name);
      expect(await tip.locator("[data-testid=tooltip-self]").innerText()).toBe(formatValue(self, "ns", "wall_ns"));
      expect(await tip.locator("[data-testid=tooltip-total]").innerText()).toBe(formatValue(total, "ns", "wall_ns"));
    }
    await page.screenshot({ path: screenshotPath("flame-from-spans") });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("an unknown run says so and points at the runs list", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/runs/run_doesnotexist`);
    const panel = page.locator("[data-testid=error-panel]");
    expect(await panel.innerText()).toContain("RUN_NOT_FOUND");
    expect(await panel.innerText()).toContain("npx emberscope runs list");
    await page.close();
  });
});
