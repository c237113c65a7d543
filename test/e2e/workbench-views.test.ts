import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { callService, createInvestigation, flameTree, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { appRoutes } from "../helpers/http-boundary";
import { startServer, type RunningServer } from "../helpers/server";

// A profile whose shape is known, deep enough on one path that the call tree must not open all of it.
const DEEP = Array.from({ length: 40 }, (_, i) => `f${i}`).join(";");
const FOLDED = `main;parse;tokenize 30
main;render;layout;measureText 40
main;render;paint 15
main;${DEEP} 200
idle 6
`;

/** A Chrome trace: two threads of a renderer, nested slices, a long-named one (times in µs). */
const TRACE = {
  traceEvents: [
    { ph: "M", name: "process_name", pid: 1, tid: 1, args: { name: "renderer process with a very long name that cannot fit in the gutter" } },
    { ph: "M", name: "thread_name", pid: 1, tid: 1, args: { name: "main" } },
    { ph: "M", name: "thread_name", pid: 1, tid: 2, args: { name: "worker" } },
    { ph: "X", name: "frame", cat: "app", pid: 1, tid: 1, ts: 1000, dur: 1000 },
    { ph: "X", name: "layout", cat: "app", pid: 1, tid: 1, ts: 1100, dur: 300 },
    { ph: "X", name: "paint", cat: "app", pid: 1, tid: 1, ts: 1500, dur: 400 },
    { ph: "X", name: "frame", cat: "app", pid: 1, tid: 1, ts: 3000, dur: 800 },
    { ph: "X", name: "paint", cat: "app", pid: 1, tid: 1, ts: 3100, dur: 200 },
    { ph: "X", name: "job", cat: "work", pid: 1, tid: 2, ts: 1200, dur: 600 },
    { ph: "X", name: "paint offscreen", cat: "work", pid: 1, tid: 2, ts: 2500, dur: 300 },
  ],
};
/** A trace of 30 threads, each with one 2 ms task: more tracks than the track area shows at once. */
const MANY_THREADS = {
  traceEvents: Array.from({ length: 30 }, (_, i) => [
    { ph: "M", name: "thread_name", pid: 7, tid: i + 1, args: { name: `thread-${String(i).padStart(2, "0")}` } },
    { ph: "X", name: `task-${String(i).padStart(2, "0")}`, cat: "work", pid: 7, tid: i + 1, ts: 1000, dur: 2000 },
  ]).flat(),
};
const GUTTER = 260;
const AXIS = 24;
const TRACK_HEADER = 20;

function view(attr: string | null): { start: number; end: number } {
  const [start, end] = (attr ?? "").split("..").map(Number);
  return { start, end };
}

describe("workbench views: history, layout, theme and the trace window", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  let profileRun: string;
  let traceRun: string;
  let investigationId: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-views-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    writeFileSync(path.join(root, "ui.folded"), FOLDED);
    profileRun = (await callService(importArtifact, ctx, { path: path.join(root, "ui.folded") })).run_id;
    writeFileSync(path.join(root, "app.trace.json"), JSON.stringify(TRACE));
    traceRun = (await callService(importArtifact, ctx, { path: path.join(root, "app.trace.json") })).run_id;
    investigationId = (await callService(createInvestigation, ctx, { title: "Why is paint slow?", question: "Which frames pay for paint?" })).investigation_id;
    server = await startServer(root);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("Back and Forward step through zoom and view changes; the commit picker offers only commits holding the run; the call tree opens only what fits", async () => {
    const tree = await callService(flameTree, ctx, { run_id: profileRun });
    const built = buildFlameTree(tree.nodes);
    const layout = layoutFlame(built);
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/runs/${profileRun}`);
    const canvas = page.locator("[data-testid=flame-canvas]").first();
    await canvas.waitFor();
    const click = async (name: string) => {
      const i = built.names.indexOf(name);
      const box = (await canvas.boundingBox())!;
      // The nodes' places in the current zoom: relative to the zoomed node's span.
      const zoomId = new URL(page.url()).searchParams.get("zoom");
      const z = zoomId ? built.ids.indexOf(zoomId) : 0;
      const fx = (layout.x[i] + layout.w[i] / 2 - layout.x[z]) / layout.w[z];
      await page.mouse.click(box.x + fx * box.width, box.y + built.depth[i] * ROW_HEIGHT + ROW_HEIGHT / 2);
    };
    const zoomParam = () => new URL(page.url()).searchParams.get("zoom");
    await click("render");
    await expect.poll(zoomParam).toBe(built.ids[built.names.indexOf("render")]);
    await click("layout");
    await expect.poll(zoomParam).toBe(built.ids[built.names.indexOf("layout")]);
    await page.locator("[data-testid=tab-sandwich]").click();
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBe("sandwich");

    await page.goBack();
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBe(null);
    await canvas.waitFor();
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).toMatch(/main\s*›\s*render\s*›\s*layout/);
    await page.goBack();
    await expect.poll(zoomParam).toBe(built.ids[built.names.indexOf("render")]);
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).not.toMatch(/layout/);
    expect(await page.locator("[data-testid=flame-breadcrumb]").innerText()).toMatch(/main\s*›\s*render/);
    await page.goForward();
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).toMatch(/render\s*›\s*layout/);

    // The run is in the newer commit too (the trace's import made it), not in the empty first one.
    const options = await page.locator("[data-testid=commit-picker] option").allInnerTexts();
    expect(options.length).toBe(2);
    expect(options[0]).toMatch(/^#2 HEAD · /);
    expect(options[1]).toMatch(/^#1 · /);
    expect(options[0]).not.toBe(options[1].replace("#1 ·", "#2 HEAD ·"));

    // The call tree opens the hot path (main → f0 → … → f39) only as deep as the window has room for.
    await page.goto(`${server.url}/runs/${profileRun}?view=calltree`);
    await page.locator("[data-testid=calltree-cell]").waitFor();
    const rows = await page.locator("[data-testid=calltree-row]").count();
    expect(rows).toBeGreaterThan(5);
    expect(rows).toBeLessThan(30);
    const table = (await page.locator("[data-testid=calltree-cell] table").boundingBox())!;
    const lastHeader = (await page.locator("[data-testid=calltree-cell] th").last().boundingBox())!;
    expect(lastHeader.x + lastHeader.width).toBeLessThanOrEqual(table.x + table.width + 1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("at 1024 px no page scrolls sideways (every page of app/, screenshots at 1440 and 1024); the sidebar and the theme switch and are remembered", async () => {
    const pages = appRoutes()
      .filter((r) => r.kind === "page")
      .map((r) =>
        r.pattern
          .replace("[runId]", profileRun)
          .replace("[id]", investigationId),
      );
    // Every run view too (the run page is many pages in one).
    const all = [...pages, ...["sandwich", "calltree", "sql"].map((v) => `/runs/${profileRun}?view=${v}`), `/runs/${traceRun}?view=trace`, `/runs/${traceRun}?view=dag`];
    expect(pages.length).toBeGreaterThanOrEqual(8);
    const overflow: string[] = [];
    // Both widths at once: most of a page's time is the wait for its network to go quiet.
    const sweep = async (width: number) => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      for (const url of all) {
        await page.goto(`${server.url}${url}`);
        // A live page polls: quiet for 500 ms may never come, so it is waited for 3 s at most.
        await page.waitForLoadState("networkidle", { timeout: 3000 }).catch(() => undefined);
        const [scrollWidth, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        if (scrollWidth > inner) overflow.push(`${url} at ${width}: ${scrollWidth} > ${inner}`);
        const name = url === "/" ? "home" : url.slice(1).replace(profileRun, "run").replace(traceRun, "trace-run").replace(investigationId, "inv").replace(/[^a-z0-9]+/gi, "-");
        await page.screenshot({ path: screenshotPath(`page-${name}-${width}`), fullPage: true });
      }
      await context.close();
    };
    await Promise.all([sweep(1440), sweep(1024)]);
    expect(overflow).toEqual([]);

    const context = await browser.newContext({ viewport: { width: 1024, height: 800 }, colorScheme: "light" });
    const page = await context.newPage();
    await page.goto(`${server.url}/runs`);
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await bg();
    await page.locator("[data-testid=theme-picker]").selectOption("dark");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    const dark = await bg();
    expect(dark).not.toBe(light);
    const railWidth = () => page.evaluate(() => document.querySelector(".rail")!.getBoundingClientRect().width);
    expect(await railWidth()).toBeGreaterThan(100);
    await page.locator("[data-testid=rail-toggle]").click();
    await expect.poll(railWidth).toBeLessThan(2);
    // Another page of the same browser: both remembered, applied before the first paint.
    await page.goto(`${server.url}/sql`);
    expect(await page.evaluate(() => [document.documentElement.dataset.theme, document.documentElement.dataset.rail])).toEqual(["dark", "collapsed"]);
    expect(await bg()).toBe(dark);
    expect(await railWidth()).toBeLessThan(2);
    await page.screenshot({ path: screenshotPath("sql-dark-rail-collapsed-1024") });
    await page.locator("[data-testid=theme-picker]").selectOption("system");
    await page.locator("[data-testid=rail-toggle]").click();
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.dataset.theme ?? null)).toBe(null);
    expect(await bg()).toBe(light);
    expect(await railWidth()).toBeGreaterThan(100);

    // Typing a search does not move the flame toolbar's controls.
    await page.goto(`${server.url}/runs/${profileRun}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    const after = page.locator("[data-testid=mode-left-heavy], .flame-toolbar button").first();
    const before = await after.boundingBox();
    await page.locator("[data-testid=flame-search]").fill("paint");
    await page.locator("[data-testid=flame-search-status]").waitFor();
    expect(await after.boundingBox()).toEqual(before);
    await context.close();
  }, 300_000);

  it("trace window: W zooms around the pointer, A/D pan; search steps through matches; tracks collapse and pin; details dock beside the timeline", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${traceRun}?view=trace`);
    const win = page.locator("[data-testid=trace-window][data-state=ready]");
    await win.waitFor({ timeout: 30_000 });
    const canvas = page.locator("[data-testid=trace-canvas]");
    const box = (await canvas.boundingBox())!;
    const before = view(await win.getAttribute("data-view"));
    // The time under the pointer, at 30 % of the timeline.
    const px = GUTTER + 0.3 * (box.width - GUTTER);
    const timeAt = (v: { start: number; end: number }) => v.start + ((px - GUTTER) / (box.width - GUTTER)) * (v.end - v.start);
    await page.mouse.move(box.x + px, box.y + AXIS + TRACK_HEADER + 5);
    await canvas.focus();
    await page.keyboard.press("w");
    await expect.poll(async () => view(await win.getAttribute("data-view")).end - view(await win.getAttribute("data-view")).start).toBeLessThan(before.end - before.start);
    const zoomed = view(await win.getAttribute("data-view"));
    expect(zoomed.end - zoomed.start).toBeCloseTo((before.end - before.start) * 0.7, -1);
    // The point under the pointer stayed where it was (within a fraction of a pixel; a middle zoom would move it by 9 % of the range).
    expect(Math.abs(timeAt(zoomed) - timeAt(before))).toBeLessThan((before.end - before.start) / 1000);
    await page.keyboard.press("d");
    await expect.poll(async () => view(await win.getAttribute("data-view")).start).toBeGreaterThan(zoomed.start);
    const panned = view(await win.getAttribute("data-view"));
    expect(panned.end - panned.start).toBeCloseTo(zoomed.end - zoomed.start, -1);

    // Search: three spans are called paint-something, in time order; next and previous move the selection.
    await page.locator("[data-testid=trace-search]").fill("paint");
    await expect.poll(() => page.locator("[data-testid=trace-search-count]").innerText()).toBe("0 / 3");
    const picked = () => win.getAttribute("data-picked");
    await page.locator("[data-testid=trace-search-next]").click();
    await expect.poll(() => page.locator("[data-testid=trace-search-count]").innerText()).toBe("1 / 3");
    const first = await picked();
    expect(await page.locator("[data-testid=trace-picked]").innerText()).toMatch(/^paint/);
    await page.locator("[data-testid=trace-search-next]").click();
    const second = await picked();
    expect(second).not.toBe(first);
    expect(await page.locator("[data-testid=trace-picked]").innerText()).toMatch(/^paint offscreen/);
    await page.locator("[data-testid=trace-search]").press("Enter");
    expect(await page.locator("[data-testid=trace-search-count]").innerText()).toBe("3 / 3");
    // The third paint (3,100–3,300 µs; the run's time starts at its first event, 1,000 µs) was outside the view: the view moved to it.
    await expect.poll(async () => view(await win.getAttribute("data-view")).end).toBeGreaterThanOrEqual(2_300_000);
    expect(view(await win.getAttribute("data-view")).start).toBeLessThanOrEqual(2_100_000);
    await page.locator("[data-testid=trace-search-prev]").click();
    expect(await picked()).toBe(second);
    // A track's name matches too.
    await page.locator("[data-testid=trace-search]").fill("worker");
    await expect.poll(() => page.locator("[data-testid=trace-search-count]").innerText()).toBe("0 / 0 · 1 track");

    // The details dock sits beside the timeline, not below all the tracks.
    const details = (await page.locator("[data-testid=trace-details]").boundingBox())!;
    const timeline = (await page.locator(".trace-scroll").boundingBox())!;
    expect(details.x).toBeGreaterThanOrEqual(timeline.x + timeline.width - 1);
    expect(details.y).toBeLessThan(timeline.y + timeline.height);
    await page.screenshot({ path: screenshotPath("trace-search-dock-1440"), fullPage: true });

    // Collapse the first track (click its header), then pin the second: it comes first.
    const tracksBefore = Number(await canvas.getAttribute("height"));
    await page.mouse.click(box.x + 40, box.y + AXIS + 5);
    await expect.poll(() => win.getAttribute("data-collapsed")).not.toBe(null);
    await expect.poll(async () => Number(await canvas.getAttribute("height"))).toBeLessThan(tracksBefore);
    const collapsedId = await win.getAttribute("data-collapsed");
    // The second track's header is now right below the collapsed one's (header + 2 px).
    await page.mouse.click(box.x + GUTTER - 20, box.y + AXIS + TRACK_HEADER + 2 + 5);
    await expect.poll(() => win.getAttribute("data-pinned")).not.toBe(null);
    expect(await win.getAttribute("data-pinned")).not.toBe(collapsedId);
    await page.screenshot({ path: screenshotPath("trace-collapsed-pinned"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
  it("trace window: a pinned track stays at the top of the track area while the other tracks scroll under it (as Perfetto's)", async () => {
    writeFileSync(path.join(root, "many.trace.json"), JSON.stringify(MANY_THREADS));
    const run = (await callService(importArtifact, ctx, { path: path.join(root, "many.trace.json") })).run_id;
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${run}?view=trace`);
    const win = page.locator("[data-testid=trace-window][data-state=ready]");
    await win.waitFor({ timeout: 30_000 });
    const canvas = page.locator("[data-testid=trace-canvas]");
    const scroller = page.locator("[data-testid=trace-scroll]");
    const TRACK = TRACK_HEADER + 17 + 6;
    const hoverName = async (y: number) => {
      const box = (await scroller.boundingBox())!;
      await page.mouse.move(box.x + 5, box.y + 5);
      await page.mouse.move(box.x + GUTTER + (box.width - GUTTER) / 2, box.y + y);
      const tip = page.locator("[data-testid=trace-tooltip] .tt-name");
      await tip.waitFor();
      return tip.innerText();
    };
    // The sixth track (busiest first, then by name: thread-05), pinned by its header's pin, comes first.
    const box = (await canvas.boundingBox())!;
    expect(await hoverName(AXIS + 5 * TRACK + TRACK_HEADER + 6)).toBe("task-05");
    await page.mouse.click(box.x + GUTTER - 20, box.y + AXIS + 5 * TRACK + 5);
    await expect.poll(() => win.getAttribute("data-pinned")).not.toBe(null);
    expect(await hoverName(AXIS + TRACK_HEADER + 6)).toBe("task-05");
    // Scrolled by 400 px, the pinned track is still drawn at the top of the track area (under the axis), over the tracks that scrolled there.
    const overflow = await scroller.evaluate((el) => el.scrollHeight - el.clientHeight);
    expect(overflow).toBeGreaterThan(400);
    await scroller.evaluate((el) => (el.scrollTop = 400));
    await expect.poll(() => canvas.getAttribute("data-sticky-top")).toBe("400");
    expect(await hoverName(AXIS + TRACK_HEADER + 6)).toBe("task-05");
    // Below the pinned band, the scrolled tracks: the one whose row is there now, not the pinned one.
    // (82 px: 400 + 82 − the band's 67 px is 415 = 9 tracks of 43 px + 28, a span row.)
    const below = await hoverName(82);
    expect(below).toMatch(/^task-\d\d$/);
    expect(below).not.toBe("task-05");
    await page.mouse.move(2, 2);
    await page.screenshot({ path: screenshotPath("trace-pinned-sticky-1440"), fullPage: true });
    // Unpinned from the band (its pin is drawn there too), the track goes back to its place.
    const scrolled = (await scroller.boundingBox())!;
    await page.mouse.click(scrolled.x + GUTTER - 20, scrolled.y + AXIS + 5);
    await expect.poll(() => win.getAttribute("data-pinned")).toBe(null);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
