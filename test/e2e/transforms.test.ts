import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatValue } from "../../analysis/flame/format";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import { parseTransforms, type Transform } from "../../analysis/queries/transforms";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { callService, createInvestigation, flameTree, importArtifact, listCells, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { addToInvestigation, launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

/** By hand: main self 3, main;run self 7 (its callees 5 + 25 + 20 below), 108 samples in all. */
const FOLDED = `main 3
main;parse;lex 30
main;parse;libc\`malloc;libc\`brk 10
main;run 7
main;run;libc\`malloc 20
main;run;loop;step 5
main;run;loop;step;loop;step 25
main;fib;fib;fib 8
`;

describe("transforms in the run page (headless Chromium)", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let runId: string;
  let ctx: ServiceContext;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-transforms-"));
    initWorkspace(root).close();
    writeFileSync(path.join(root, "small.folded"), FOLDED);
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    runId = (await callService(importArtifact, ctx, { path: "small.folded" })).run_id;
    server = await startServer(root);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Where a frame (by name, the first such node) is drawn in the icicle graph of the tree the server gives for `transforms`. */
  async function frameAt(page: Page, transforms: Transform[], name: string): Promise<{ x: number; y: number }> {
    const tree = buildFlameTree((await callService(flameTree, ctx, { run_id: runId, transforms })).nodes);
    const layout = layoutFlame(tree);
    const i = tree.names.indexOf(name);
    expect(i, `${name} drawn`).toBeGreaterThan(0);
    const box = (await page.locator("[data-testid=flame-canvas]").first().boundingBox())!;
    return { x: box.x + (layout.x[i] + layout.w[i] / 2) * box.width, y: box.y + tree.depth[i] * ROW_HEIGHT + ROW_HEIGHT / 2 };
  }

  /** The hovered frame's tooltip: name, self and total as the page shows them. */
  async function hover(page: Page, at: { x: number; y: number }) {
    await page.mouse.move(5, 5);
    await page.mouse.move(at.x, at.y);
    const tip = page.locator("[data-testid=flame-tooltip]");
    await tip.waitFor();
    return { name: await tip.locator("[data-testid=tooltip-name]").innerText(), self: await tip.locator("[data-testid=tooltip-self]").innerText(), total: await tip.locator("[data-testid=tooltip-total]").innerText() };
  }

  const samples = (n: number) => formatValue(n, "count", "samples");

  it("merge function from the flame graph's menu: a chip, the frame gone, its self charged to its caller; the URL keeps it; removing the chip restores", async () => {
    const plain = await callService(flameTree, ctx, { run_id: runId });
    const unit = (n: number) => formatValue(n, plain.unit, plain.metric);
    expect(samples(7)).toBe(unit(7));
    const run = plain.nodes.find((n) => n.name === "run")!;
    const main = plain.nodes.find((n) => n.name === "main")!;
    expect([main.self, main.total, run.self, run.total]).toEqual([3, 108, 7, 57]);

    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${runId}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    expect(await hover(page, await frameAt(page, [], "main"))).toEqual({ name: "main", self: unit(3), total: unit(108) });

    // Right-click run → Merge function.
    const runAt = await frameAt(page, [], "run");
    expect((await hover(page, runAt)).name).toBe("run");
    await page.mouse.click(runAt.x, runAt.y, { button: "right" });
    const menu = page.locator("[data-testid=transform-menu]");
    await menu.waitFor();
    expect(await menu.innerText()).toContain("Merge function “run”");
    // The right-click opened the menu and did not zoom.
    expect(new URL(page.url()).searchParams.get("zoom")).toBeNull();
    await page.screenshot({ path: screenshotPath("transforms-menu-1440") });
    await menu.locator("[data-testid=transform-action-merge-function]").click();

    const chips = page.locator("[data-testid=transform-chip]");
    await expect.poll(() => chips.allInnerTexts()).toEqual([expect.stringContaining("Merge: run")]);
    expect(new URL(page.url()).searchParams.get("tf")).toBe(`mf-${run.frame_key}`);
    const merged: Transform[] = [{ type: "merge-function", frame_key: run.frame_key }];
    // main's self grows by exactly run's self (3 + 7); its total is unchanged; run is drawn nowhere.
    await expect.poll(async () => hover(page, await frameAt(page, merged, "main"))).toEqual({ name: "main", self: unit(3 + 7), total: unit(108) });
    await page.keyboard.press("/");
    await page.keyboard.type("run");
    await expect.poll(() => page.locator("[data-testid=flame-search-status]").innerText()).toMatch(/^0 frames/);
    await page.keyboard.press("Escape");
    // run's callees moved up under main: loop is main's child now.
    expect((await hover(page, await frameAt(page, merged, "loop"))).total).toBe(unit(30));
    await page.mouse.move(5, 5);
    await page.screenshot({ path: screenshotPath("transforms-merged-1440") });
    await page.setViewportSize({ width: 1024, height: 800 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshotPath("transforms-merged-1024") });
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(scroll, "no sideways scroll at 1024 px").toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.waitForTimeout(300);

    // A reload (the URL) keeps the transform.
    await page.reload();
    await page.locator("[data-testid=flame-canvas]").waitFor();
    await expect.poll(() => chips.allInnerTexts()).toEqual([expect.stringContaining("Merge: run")]);
    await expect.poll(async () => hover(page, await frameAt(page, merged, "main"))).toEqual({ name: "main", self: unit(10), total: unit(108) });

    // Keys stack a second transform on the hovered frame (F: focus on function), Backspace pops it.
    const loopAt = await frameAt(page, merged, "loop");
    await hover(page, loopAt);
    await page.keyboard.press("Shift+F");
    await expect.poll(() => chips.count()).toBe(2);
    expect(await chips.nth(1).innerText()).toContain("Focus: loop");
    const focused: Transform[] = [...merged, { type: "focus-function", frame_key: plain.nodes.find((n) => n.name === "loop")!.frame_key }];
    await expect.poll(async () => hover(page, await frameAt(page, focused, "loop"))).toEqual({ name: "loop", self: unit(0), total: unit(30) });
    await page.screenshot({ path: screenshotPath("transforms-stacked-1440") });
    await page.keyboard.press("Backspace");
    await expect.poll(() => chips.count()).toBe(1);

    // Removing the chip restores the untransformed graph.
    await page.locator("[data-testid=transform-chip-remove]").first().click();
    await expect.poll(() => chips.count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("tf")).toBeNull();
    await expect.poll(async () => hover(page, await frameAt(page, [], "main"))).toEqual({ name: "main", self: unit(3), total: unit(108) });
    expect((await hover(page, await frameAt(page, [], "run"))).self).toBe(unit(7));
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the call tree and the sandwich apply transforms from a row's menu, and the inverted tree puts leaf functions first", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${runId}?view=calltree`);
    await page.locator("[data-testid=calltree-cell]").waitFor();
    const rows = page.locator("[data-testid=calltree-row]");
    await rows.filter({ hasText: "parse" }).first().click({ button: "right" });
    await page.locator("[data-testid=transform-action-drop-function]").click();
    await expect.poll(() => page.locator("[data-testid=transform-chip]").allInnerTexts()).toEqual([expect.stringContaining("Drop: parse")]);
    await expect.poll(() => rows.filter({ hasText: "parse" }).count()).toBe(0);
    // 108 − 40 samples with parse: the root row says so.
    expect(await rows.first().innerText()).toContain(samples(68));
    await page.screenshot({ path: screenshotPath("transforms-calltree-1440") });

    await page.locator("[data-testid=tab-sandwich]").click();
    await page.locator("[data-testid=sandwich-table]").waitFor();
    const fnRows = page.locator("[data-testid=sandwich-row]");
    await expect.poll(() => fnRows.filter({ hasText: "lex" }).count()).toBe(0);
    await fnRows.filter({ hasText: "fib" }).first().click({ button: "right" });
    await page.locator("[data-testid=transform-action-collapse-direct-recursion]").click();
    await expect.poll(() => page.locator("[data-testid=transform-chip]").count()).toBe(2);
    await fnRows.filter({ hasText: "step" }).first().locator("button").click();
    // Direct callers of step, from the transformed tree: loop, all 30.
    await expect.poll(() => page.locator("[data-testid=sandwich-callers-row]").allInnerTexts()).toEqual([expect.stringMatching(/loop[\s\S]*30/)]);
    await page.screenshot({ path: screenshotPath("transforms-sandwich-1440"), fullPage: true });

    // Inverted, from the flame graph's menu.
    await page.locator("[data-testid=tab-flame]").click();
    await page.locator("[data-testid=flame-canvas]").waitFor();
    await page.locator("[data-testid=flame-cell]").focus();
    await page.keyboard.press("Shift+I");
    await expect.poll(() => new URL(page.url()).searchParams.get("inv")).toBe("1");
    await expect.poll(() => page.locator("[data-testid=transform-chip][data-transform=inverted]").count()).toBe(1);
    const shown = new URL(page.url()).searchParams.get("tf")!;
    const inverted = await callService(flameTree, ctx, { run_id: runId, transforms: parseTransforms(shown), inverted: true });
    // Leaf functions at the roots (parse's samples dropped): the page draws the server's inverted tree.
    expect(inverted.nodes.filter((n) => n.parent_id === null).map((n) => n.name).sort()).toEqual(["fib", "main", "malloc", "run", "step"]);
    await page.mouse.move(5, 5);
    await expect.poll(() => page.locator("[data-testid=flame-details]").innerText()).toContain(`${inverted.nodes.length} frames · total ${samples(68)}`);
    await page.setViewportSize({ width: 1024, height: 800 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshotPath("transforms-inverted-1024") });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the sandwich's direct callers and a notebook flame cell take the page's transforms (server lists, hand fold)", { timeout: 120_000 }, async () => {
    const plain = await callService(flameTree, ctx, { run_id: runId });
    const key = (name: string) => plain.nodes.find((n) => n.name === name)!.frame_key;
    const tf = `mf-${key("run")}`;
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    // Merge run: malloc's callers are main (its 20 under run) and parse (10), as the server's callers_transformed folds them.
    await page.goto(`${server.url}/runs/${runId}?view=sandwich&tf=${tf}&sel=${key("malloc")}`);
    const callers = page.locator("[data-testid=sandwich-callers-row]");
    await expect.poll(() => callers.allInnerTexts(), { timeout: 30_000 }).toEqual([expect.stringMatching(/main[\s\S]*20/), expect.stringMatching(/parse[\s\S]*10/)]);
    await expect.poll(() => page.locator("[data-testid=sandwich-callees-row]").allInnerTexts()).toEqual([expect.stringMatching(/brk[\s\S]*10/)]);
    await page.screenshot({ path: screenshotPath("transforms-sandwich-callers-1440"), fullPage: true });

    // The flame view with the chip, added to an investigation: the cell keeps the stack and draws it.
    const investigation = await callService(createInvestigation, ctx, { title: "Merged run" });
    await page.goto(`${server.url}/runs/${runId}?tf=${tf}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    await expect.poll(() => page.locator("[data-testid=transform-chip]").allInnerTexts()).toEqual([expect.stringContaining("Merge: run")]);
    await addToInvestigation(page, investigation.investigation_id);
    const [cell] = (await callService(listCells, ctx, { investigation_id: investigation.investigation_id })).items;
    expect(cell.kind).toBe("flame");
    expect(cell.content).toMatchObject({ transforms: [{ type: "merge-function", frame_key: key("run") }] });
    await page.goto(`${server.url}/investigations/${investigation.investigation_id}`);
    const notebookCell = page.locator("[data-testid=notebook-cell]").first();
    await expect.poll(() => notebookCell.locator("[data-testid=transform-chip]").allInnerTexts(), { timeout: 30_000 }).toEqual([expect.stringContaining("Merge: run")]);
    // The cell's graph is the merged tree: main's self is 3 + 7 and run is drawn nowhere.
    const merged = await callService(flameTree, ctx, { run_id: runId, transforms: parseTransforms(tf) });
    // (A compact cell says no totals: it draws the merged tree's frames; the chip above names the stack.)
    await notebookCell.locator("canvas").first().waitFor();
    expect(merged.nodes.some((n) => n.name === "run")).toBe(false);
    const open = new URL((await notebookCell.locator("[data-testid=cell-open]").getAttribute("href"))!, server.url);
    expect(open.searchParams.get("tf")).toBe(tf);
    // Removing the chip in the cell writes the cell without it.
    await notebookCell.locator("[data-testid=transform-chip-remove]").click();
    await expect.poll(async () => ((await callService(listCells, ctx, { investigation_id: investigation.investigation_id })).items[0].content as { transforms?: unknown }).transforms ?? null, { timeout: 15_000 }).toBeNull();
    await page.screenshot({ path: screenshotPath("transforms-notebook-cell-1440"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
