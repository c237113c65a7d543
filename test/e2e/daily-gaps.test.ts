import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Locator, Page } from "playwright-core";
import { formatValue } from "../../analysis/flame/format";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import type { Transform } from "../../analysis/queries/transforms";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { callService, createInvestigation, flameTree, importArtifact, listCells, summarizeRun, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { addToInvestigation, launchChromium, newWatchedPage, rowShape, screenshotPath } from "../helpers/browser";
import { startServer } from "../helpers/server";

/**
 * Issue 21's gaps after the last sitting: the trace window's labels, critical-path note, track
 * selector and history; one-line toolbars at 1024 px; the track selectors on compare; /runs live;
 * transforms and tracks together. Screenshots at 1440 and 1024 px under test-results/daily-gaps-*.
 */

const WIDTHS = [1440, 1024] as const;
const LONG_PROCESS = "renderer process for https://app.example.com/dashboard/reports/quarterly";

/** A Chrome trace with no flows: a renderer whose name is far longer than the label column, two threads, and a GPU process. Times in µs. */
const TRACE = {
  traceEvents: [
    { ph: "M", name: "process_name", pid: 1, tid: 1, args: { name: LONG_PROCESS } },
    { ph: "M", name: "thread_name", pid: 1, tid: 1, args: { name: "CrRendererMain" } },
    { ph: "M", name: "thread_name", pid: 1, tid: 2, args: { name: "DedicatedWorker thread" } },
    { ph: "M", name: "process_name", pid: 2, tid: 7, args: { name: "gpu" } },
    { ph: "M", name: "thread_name", pid: 2, tid: 7, args: { name: "CrGpuMain" } },
    ...Array.from({ length: 40 }, (_, i) => ({ ph: "X", name: i % 2 ? "layout" : "paint", cat: "app", pid: 1, tid: 1, ts: 1000 + i * 500, dur: 400 })),
    ...Array.from({ length: 20 }, (_, i) => ({ ph: "X", name: "parseChunk", cat: "work", pid: 1, tid: 2, ts: 1200 + i * 900, dur: 700 })),
    ...Array.from({ length: 10 }, (_, i) => ({ ph: "X", name: "swapBuffers", cat: "gpu", pid: 2, tid: 7, ts: 1500 + i * 2000, dur: 300 })),
  ],
};

/** A speedscope file with two sampled profiles (unit none: weights are sample counts), stacks root first. */
function twoProfiles(mainWeights: number[]) {
  return {
    $schema: "https://www.speedscope.app/file-format-schema.json",
    shared: { frames: [{ name: "main" }, { name: "run" }, { name: "parse" }, { name: "step" }, { name: "alloc" }] },
    profiles: [
      { type: "sampled", name: "Main thread", unit: "none", startValue: 0, endValue: 100, samples: [[0, 1, 3], [0, 1], [0, 2], [0, 3]], weights: mainWeights },
      { type: "sampled", name: "Worker", unit: "none", startValue: 0, endValue: 100, samples: [[0, 1, 4], [0, 1], [0, 3]], weights: [40, 11, 90] },
    ],
  };
}
const FRAME_NAMES = ["main", "run", "parse", "step", "alloc"];

/** By hand, from a profile's samples: with `merged` removed from every stack (its time charged to its caller), each function's self and total. */
function fold(profile: { samples: number[][]; weights: number[] }, merged: string | null): Map<string, { self: number; total: number }> {
  const out = new Map<string, { self: number; total: number }>();
  profile.samples.forEach((stack, i) => {
    const names = stack.map((f) => FRAME_NAMES[f]).filter((n) => n !== merged);
    const w = profile.weights[i];
    for (const name of new Set(names)) {
      const v = out.get(name) ?? { self: 0, total: 0 };
      v.total += w;
      out.set(name, v);
    }
    out.get(names[names.length - 1])!.self += w;
  });
  return out;
}

async function shoot(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshotPath(`daily-gaps-${name}-${width}`), fullPage: true });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

/** Each row's children sit on one line (no wrap), and the page has no sideways scroll. */
async function oneLineRows(page: Page, rows: Locator): Promise<void> {
  const lines = await rows.evaluateAll((els) =>
    els.map((row) => {
      const tops = [...row.children].filter((c) => (c as HTMLElement).offsetWidth > 0).map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2));
      const box = row.getBoundingClientRect();
      // Controls side by side, none drawn over the next, none whose content spills out of it.
      const shown = [...row.children].filter((c) => (c as HTMLElement).offsetWidth > 0).map((c) => c.getBoundingClientRect());
      const overlap = Math.max(0, ...shown.slice(1).map((r, i) => shown[i].right - r.left));
      // (A control that clips its own text with an ellipsis does not spill.)
      const spill = Math.max(0, ...[...row.children].filter((c) => getComputedStyle(c).overflowX === "visible").map((c) => c.scrollWidth - c.clientWidth));
      return { spread: Math.max(...tops) - Math.min(...tops), overflow: row.scrollWidth - row.clientWidth, right: box.right, overlap, spill };
    }),
  );
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(line.spread, JSON.stringify(lines)).toBeLessThanOrEqual(4);
    expect(line.overflow, JSON.stringify(lines)).toBeLessThanOrEqual(1);
    expect(line.overlap, JSON.stringify(lines)).toBeLessThanOrEqual(1);
    expect(line.spill, JSON.stringify(lines)).toBeLessThanOrEqual(1);
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
}

describe("daily gaps (issue 21): trace window, toolbars, tracks on compare, live runs, transforms with tracks", () => {
  let browser: Browser;
  let root: string;
  let ctx: ServiceContext;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-daily-gaps-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("trace window: labels ellipsize with the full name as the header's title and the column resizes; no edges says no critical path; tracks chosen in the URL; Back restores the zoom; toolbars on one line at 1024 px", { timeout: 180_000 }, async () => {
    writeFileSync(path.join(root, "long-names.trace.json"), JSON.stringify(TRACE));
    const imported = await callService(importArtifact, ctx, { path: "long-names.trace.json" });
    const summary = await callService(summarizeRun, ctx, { run_id: imported.run_id });
    expect(summary.spans?.edges).toBe(0);
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(`${server.url}/runs/${imported.run_id}?view=trace`);
      const win = page.locator("[data-testid=trace-window][data-state=ready]");
      await win.waitFor({ timeout: 60_000 });
      expect(await win.getAttribute("data-track-count")).toBe("3");

      // No causal edges: the toggle says there is no critical path at once (it never stays "computing").
      const cp = page.locator("[data-testid=trace-cp-toggle]");
      await expect.poll(() => cp.getAttribute("data-state"), { timeout: 10_000 }).toBe("no-edges");
      expect(await cp.innerText()).toMatch(/no edges/);
      expect(await cp.getAttribute("title")).toMatch(/no causal edges .* no critical path/);
      expect(await cp.locator("input").isDisabled()).toBe(true);

      // The renderer's label is cut with an ellipsis; its header's title is the full name.
      const canvas = page.locator("[data-testid=trace-canvas]");
      await expect.poll(async () => Number(await canvas.getAttribute("data-cut-labels"))).toBeGreaterThan(0);
      const box = (await canvas.boundingBox())!;
      // Tracks are ordered by id: the renderer's main thread first, its header under the 24 px axis.
      await page.mouse.move(box.x + 60, box.y + 24 + 10);
      await expect.poll(() => canvas.getAttribute("title")).toContain(`${LONG_PROCESS} · CrRendererMain`);
      await shoot(page, "trace-labels");

      // Dragging the label column's edge widens it until no label is cut; the spans keep their place on the time axis.
      const handle = page.locator("[data-testid=trace-gutter-handle]");
      const gutter = Number(await canvas.getAttribute("data-gutter"));
      const h = (await handle.boundingBox())!;
      await page.mouse.move(h.x + 3, h.y + 40);
      await page.mouse.down();
      await page.mouse.move(h.x + 3 + 300, h.y + 40, { steps: 5 });
      await page.mouse.up();
      await expect.poll(async () => Number(await canvas.getAttribute("data-gutter"))).toBeGreaterThan(gutter + 200);
      // A double-click on the edge fits the longest label: none is cut.
      await handle.dblclick();
      await expect.poll(() => canvas.getAttribute("data-cut-labels")).toBe("0");
      expect(await canvas.getAttribute("data-drawn")).toBe("70");

      // The track selector: one thread alone, in the URL, kept across a reload.
      const selector = page.locator("[data-testid=trace-window] [data-testid=track-selector]");
      await selector.locator("summary").click();
      const gpu = summary.tracks.find((t) => t.thread_name === "CrGpuMain")!;
      await selector.locator(`[data-testid=track-only-${gpu.track_key}]`).click();
      await expect.poll(() => win.getAttribute("data-track-count")).toBe("1");
      expect(new URL(page.url()).searchParams.get("tracks")).toBe(gpu.track_key);
      await expect.poll(() => canvas.getAttribute("data-drawn")).toBe("10");
      expect(await page.locator("[data-testid=trace-counts]").innerText()).toContain("1 of 3 tracks");
      await page.reload();
      await win.waitFor({ timeout: 60_000 });
      expect(await win.getAttribute("data-track-count")).toBe("1");
      await selector.locator("summary").click();
      await selector.locator("[data-testid=track-all]").click();
      await expect.poll(() => win.getAttribute("data-track-count")).toBe("3");

      // Zoom twice, then Back: each Back restores the zoom before (history entries, as the flame view's zoom).
      const whole = await win.getAttribute("data-view");
      await page.getByRole("button", { name: "Zoom in" }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get("window")).not.toBeNull();
      const first = await win.getAttribute("data-view");
      const firstUrl = new URL(page.url()).searchParams.get("window");
      await page.getByRole("button", { name: "Zoom in" }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get("window")).not.toBe(firstUrl);
      const second = await win.getAttribute("data-view");
      expect(second).not.toBe(first);
      await page.goBack();
      await expect.poll(() => win.getAttribute("data-view")).toBe(first);
      expect(new URL(page.url()).searchParams.get("window")).toBe(firstUrl);
      await page.goBack();
      await expect.poll(() => win.getAttribute("data-view")).toBe(whole);
      await page.goForward();
      await expect.poll(() => win.getAttribute("data-view")).toBe(first);

      // At 1024 px: the trace window's two toolbar rows each on one line, no sideways scroll; a search typed moves nothing.
      await page.setViewportSize({ width: 1024, height: 900 });
      await page.waitForTimeout(300);
      await oneLineRows(page, page.locator(".trace-toolbar"));
      expect((await page.locator("[data-testid=trace-search]").boundingBox())!.width).toBeGreaterThanOrEqual(100);
      const before = await page.locator(".trace-controls").boundingBox();
      await page.locator("[data-testid=trace-search]").fill("parseChunk");
      await expect.poll(() => page.locator("[data-testid=trace-search-count]").innerText()).toMatch(/\/ 20/);
      expect(await page.locator(".trace-controls").boundingBox()).toEqual(before);
      await oneLineRows(page, page.locator(".trace-toolbar"));
      await page.locator("[data-testid=trace-search]").fill("");
      await shoot(page, "trace-window");
      expect(errors).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("the run page's flame toolbar stays on its rows at 1024 px (no wrap, no sideways scroll), also while a search is typed", { timeout: 120_000 }, async () => {
    writeFileSync(path.join(root, "profiles-a.speedscope.json"), JSON.stringify(twoProfiles([5, 7, 30, 3])));
    const imported = await callService(importArtifact, ctx, { path: "profiles-a.speedscope.json" });
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1024, height: 900 } });
      await page.goto(`${server.url}/runs/${imported.run_id}`);
      await page.locator("[data-testid=flame-canvas]").waitFor({ timeout: 60_000 });
      const rows = page.locator(".flame-toolbar");
      await oneLineRows(page, rows);
      const view = page.locator("[data-testid=flame-toolbar-view]");
      const before = await view.boundingBox();
      await page.locator("[data-testid=flame-search]").fill("step");
      await expect.poll(() => page.locator("[data-testid=flame-search-status]").innerText()).toMatch(/frame/);
      expect(await view.boundingBox()).toEqual(before);
      await oneLineRows(page, rows);
      await page.locator("[data-testid=flame-search]").fill("");
      await shoot(page, "flame-toolbar");
      expect(errors).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("compare: each run's track selector; one profile on each side, and the totals are that profile's samples, in the URL", { timeout: 120_000 }, async () => {
    const baseDoc = twoProfiles([5, 7, 30, 3]);
    const candidateDoc = twoProfiles([5, 19, 30, 9]);
    writeFileSync(path.join(root, "cmp-base.speedscope.json"), JSON.stringify(baseDoc));
    writeFileSync(path.join(root, "cmp-candidate.speedscope.json"), JSON.stringify(candidateDoc));
    const base = await callService(importArtifact, ctx, { path: "cmp-base.speedscope.json" });
    const candidate = await callService(importArtifact, ctx, { path: "cmp-candidate.speedscope.json" });
    const key = (await callService(flameTree, ctx, { run_id: base.run_id, tracks: "all" })).track_choices.find((t) => t.label === "Main thread")!.track_key;
    const sum = (w: number[]) => w.reduce((a, b) => a + b, 0);
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(`${server.url}/compare?base=${base.run_id}&candidate=${candidate.run_id}`);
      const baseSide = page.locator("[data-testid=compare-base-tracks]");
      const candidateSide = page.locator("[data-testid=compare-candidate-tracks]");
      await baseSide.waitFor({ timeout: 60_000 });
      // Absent from the URL: every profile merged, as the comparison always read.
      expect(Number(await baseSide.getAttribute("data-total"))).toBe(sum(baseDoc.profiles[0].weights) + sum(baseDoc.profiles[1].weights));
      for (const side of [baseSide, candidateSide]) {
        await side.locator("summary").click();
        await side.locator(`[data-testid=track-only-${key}]`).click();
      }
      await expect.poll(async () => Number(await baseSide.getAttribute("data-total"))).toBe(sum(baseDoc.profiles[0].weights));
      await expect.poll(async () => Number(await candidateSide.getAttribute("data-total"))).toBe(sum(candidateDoc.profiles[0].weights));
      const url = new URL(page.url());
      expect([url.searchParams.get("btracks"), url.searchParams.get("ctracks")]).toEqual([key, key]);
      // The table compares the main threads alone: step's self, by hand 5+3 → 5+9, is a change of +6 samples (the workers' 90 are not in it).
      expect(fold(candidateDoc.profiles[0], null).get("step")!.self - fold(baseDoc.profiles[0], null).get("step")!.self).toBe(6);
      await expect.poll(() => page.locator("table").first().innerText()).toMatch(/step[\s\S]*\+6/);
      await shoot(page, "compare-tracks");

      // At 1024 px the largest-changes table fits its column: nothing it sits in scrolls sideways, and the function column ellipsizes with the whole name in its title.
      await page.setViewportSize({ width: 1024, height: 900 });
      // The run pickers (long file titles) and the toolbar each stay one row: the titles ellipsize.
      for (const row of ["form.compare-form", "[data-testid=compare-toolbar]"]) expect(await rowShape(page.locator(row)), row).toMatchObject({ spread: expect.toSatisfy((x: number) => x <= 4), overflow: expect.toSatisfy((x: number) => x <= 0) });
      const fit = await page.locator("[data-testid=compare-table]").evaluate((table) => {
        const spills: string[] = [];
        for (let el: HTMLElement | null = table.parentElement; el; el = el.parentElement) if (el.scrollWidth - el.clientWidth > 1) spills.push(`${el.tagName}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`);
        return { right: table.getBoundingClientRect().right, container: table.parentElement!.getBoundingClientRect().right, spills };
      });
      expect(fit.spills).toEqual([]);
      expect(fit.right).toBeLessThanOrEqual(fit.container + 1);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      const stepRow = page.locator('[data-testid=compare-row][data-name="step"]');
      expect(await stepRow.locator("td.fn").getAttribute("title")).toMatch(/^step/);
      expect(await stepRow.locator("td.fn").evaluate((td) => getComputedStyle(td).textOverflow)).toBe("ellipsis");
      // Self and total side by side, each labelled, each with its change and relative change.
      expect(await page.locator("[data-testid=compare-table] thead").innerText()).toMatch(/Self[\s\S]*Total \(inclusive\)/i);
      expect(await stepRow.locator("[data-testid=compare-self-change]").innerText()).toBe("+6 samples");
      expect(await stepRow.locator("[data-testid=compare-self-relative]").isVisible()).toBe(true);
      await page.screenshot({ path: screenshotPath("daily-gaps-compare-table-1024"), fullPage: true });

      // "Add to investigation" carries both sides' tracks into the cell, and the cell reads them: step's +6, not the merged profiles' change.
      const investigation = await callService(createInvestigation, ctx, { title: "Main threads compared" });
      await addToInvestigation(page, investigation.investigation_id);
      const [cell] = (await callService(listCells, ctx, { investigation_id: investigation.investigation_id })).items;
      expect(cell.kind).toBe("compare");
      expect(cell.content).toMatchObject({ base_run_id: base.run_id, candidate_run_id: candidate.run_id, base_tracks: [key], candidate_tracks: [key] });
      // The workers' step (90 samples on each side) is not in the cell: step's base self is the main thread's alone.
      const mainStep = fold(baseDoc.profiles[0], null).get("step")!.self;
      expect(mainStep).toBe(8);
      await page.goto(`${server.url}/investigations/${investigation.investigation_id}`);
      const notebookCell = page.locator("[data-testid=notebook-cell]").first();
      await notebookCell.locator('[data-testid=compare-row][data-name="step"]').waitFor({ timeout: 60_000 });
      expect(await notebookCell.locator('[data-testid=compare-row][data-name="step"] [data-testid=compare-self-change]').innerText()).toBe("+6 samples");
      expect(await notebookCell.locator('[data-testid=compare-row][data-name="step"] [data-testid=compare-self-base]').innerText()).toBe(`${mainStep} samples`);
      // The cell has each side's track picker, showing the sides it keeps.
      const cellTracks = notebookCell.locator("[data-testid=compare-cell-tracks]");
      expect(await cellTracks.locator("[data-testid=compare-base-tracks] [data-testid=track-summary]").innerText()).toMatch(/Main thread/);
      expect(await cellTracks.locator("[data-testid=compare-candidate-tracks] [data-testid=track-summary]").innerText()).toMatch(/Main thread/);
      // Its "open" link goes back to the compare page on the same tracks.
      const open = new URL((await notebookCell.locator("[data-testid=cell-open]").getAttribute("href"))!, server.url);
      expect([open.searchParams.get("btracks"), open.searchParams.get("ctracks")]).toEqual([key, key]);
      await page.screenshot({ path: screenshotPath("daily-gaps-compare-cell-tracks-1024"), fullPage: true });
      // Picking every profile for the candidate in the cell is kept in the cell (absent: all merged) and read: the candidate's total is both profiles'.
      const cellCandidate = cellTracks.locator("[data-testid=compare-candidate-tracks]");
      await cellCandidate.locator("summary").click();
      await cellCandidate.locator("[data-testid=track-all]").click();
      await expect.poll(async () => Number(await cellCandidate.getAttribute("data-total")), { timeout: 30_000 }).toBe(sum(candidateDoc.profiles[0].weights) + sum(candidateDoc.profiles[1].weights));
      expect(Number(await cellTracks.locator("[data-testid=compare-base-tracks]").getAttribute("data-total"))).toBe(sum(baseDoc.profiles[0].weights));
      const saved = async () => (await callService(listCells, ctx, { investigation_id: investigation.investigation_id })).items[0].content as Record<string, unknown>;
      await expect.poll(async () => "candidate_tracks" in (await saved()), { timeout: 15_000 }).toBe(false);
      expect(await saved()).toMatchObject({ base_tracks: [key] });
      await page.screenshot({ path: screenshotPath("daily-gaps-compare-cell-picker-1024"), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("/runs is live: a run imported while the page is open appears without a reload", { timeout: 120_000 }, async () => {
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(`${server.url}/runs`);
      const matching = page.locator("[data-testid=runs-matching]");
      await matching.waitFor({ timeout: 30_000 });
      const before = Number((await matching.innerText()).match(/^[\d,]+/)![0].replace(/,/g, ""));
      writeFileSync(path.join(root, "live.speedscope.json"), JSON.stringify(twoProfiles([1, 2, 3, 4])));
      const live = await callService(importArtifact, ctx, { path: "live.speedscope.json" });
      await expect.poll(async () => Number((await matching.innerText()).match(/^[\d,]+/)![0].replace(/,/g, "")), { timeout: 15_000 }).toBe(before + 1);
      await expect.poll(() => page.locator(`a[href="/runs/${live.run_id}"]`).count()).toBeGreaterThan(0);
      await shoot(page, "runs-live");
      expect(errors).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("transforms and tracks together: the non-busiest profile alone with merge-function; main's self and total equal a hand fold of that profile's samples", { timeout: 120_000 }, async () => {
    const doc = twoProfiles([5, 7, 30, 3]);
    writeFileSync(path.join(root, "tt.speedscope.json"), JSON.stringify(doc));
    const run = (await callService(importArtifact, ctx, { path: "tt.speedscope.json" })).run_id;
    const plain = await callService(flameTree, ctx, { run_id: run, tracks: "all" });
    const mainThread = plain.track_choices.find((t) => t.label === "Main thread")!.track_key;
    const runKey = plain.nodes.find((n) => n.name === "run")!.frame_key;
    const transforms: Transform[] = [{ type: "merge-function", frame_key: runKey }];
    const byHand = fold(doc.profiles[0], "run");
    // The main thread is not the busiest (45 vs 141 samples): it is shown only because the URL names it.
    expect(byHand.get("main")).toEqual({ self: 7, total: 45 });
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(`${server.url}/runs/${run}?tracks=${mainThread}&tf=mf-${runKey}`);
      const flameCanvas = page.locator("[data-testid=flame-canvas]").first();
      await flameCanvas.waitFor({ timeout: 60_000 });
      expect(await page.locator("[data-testid=track-summary]").innerText()).toContain("Main thread");
      // The merged function is not in the transformed tree: its name comes with the function list, which follows the tree.
      await expect.poll(() => page.locator("[data-testid=transform-chip]").allInnerTexts()).toEqual([expect.stringContaining("Merge: run")]);
      // Where main is drawn: from the same tree the page reads (tracks + transform); the values asserted come from the hand fold.
      const tree = buildFlameTree((await callService(flameTree, ctx, { run_id: run, tracks: [mainThread], transforms })).nodes);
      const layout = layoutFlame(tree);
      const unit = (n: number) => formatValue(n, plain.unit, plain.metric);
      for (const name of ["main", "step"]) {
        const i = tree.names.indexOf(name);
        expect(i, name).toBeGreaterThan(0);
        const b = (await flameCanvas.boundingBox())!;
        await page.mouse.move(5, 5);
        await page.mouse.move(b.x + (layout.x[i] + layout.w[i] / 2) * b.width, b.y + tree.depth[i] * ROW_HEIGHT + ROW_HEIGHT / 2);
        const tip = page.locator("[data-testid=flame-tooltip]");
        await tip.waitFor();
        expect(await tip.locator("[data-testid=tooltip-name]").innerText()).toBe(name);
        expect(await tip.locator("[data-testid=tooltip-self]").innerText()).toBe(unit(name === "main" ? byHand.get("main")!.self : byHand.get("step")!.self));
        expect(await tip.locator("[data-testid=tooltip-total]").innerText()).toBe(unit(name === "main" ? byHand.get("main")!.total : byHand.get("step")!.total));
      }
      await page.mouse.move(5, 5);
      await shoot(page, "transforms-with-tracks");
      expect(errors).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
