import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import { ROW_HEIGHT } from "../../components/flame/constants";
import {
  analyzeHotspots,
  callService,
  createInvestigation,
  flameTree,
  importArtifact,
  listCells,
  listInvestigations,
  recordHypothesis,
  showInvestigation,
  workspaceStatus,
  type ServiceContext,
} from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { addToInvestigation, launchChromium, newWatchedPage, openInvestigationPicker, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

// Two captures of the same program: render's layout got cheaper, parse got dearer.
const BEFORE = `main;parse;tokenize 30
main;parse 5
main;render;layout;measureText 40
main;render;paint 15
idle 6
`;
const AFTER = `main;parse;tokenize 55
main;parse 5
main;render;layout;measureText 12
main;render;paint 15
idle 6
`;

const TITLE = "Why did parse get slower?";


describe("entry points into notebooks: Add to investigation on every view, /investigations, the home page", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  let before: { run_id: string; commit_id: string };
  let after: { run_id: string; commit_id: string };
  let investigationId: string;

  beforeAll(async () => {
    // One project for the whole file (tempProject() is removed after each test).
    root = mkdtempSync(path.join(tmpdir(), "emberscope-entry-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    for (const [name, text] of [["before.folded", BEFORE], ["after.folded", AFTER]]) writeFileSync(path.join(root, name), text);
    before = await callService(importArtifact, ctx, { path: path.join(root, "before.folded") });
    after = await callService(importArtifact, ctx, { path: path.join(root, "after.folded") });
    server = await startServer(root);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("adds a zoomed flame graph to a new investigation as a flame cell pinned to the page's commit (not HEAD); Esc closes the popover and keeps the zoom", async () => {
    // The first import's commit is no longer HEAD: the cell must name it, not whatever HEAD is.
    const head = (await callService(workspaceStatus, ctx, {})).head_commit_id;
    expect(head).toBe(after.commit_id);
    expect(before.commit_id).not.toBe(head);
    const tree = await callService(flameTree, ctx, { run_id: before.run_id, commit_id: before.commit_id });
    const built = buildFlameTree(tree.nodes);
    const layout = layoutFlame(built);
    const target = built.names.indexOf("measureText");

    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${before.run_id}?commit=${before.commit_id}&q=tokenize`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    expect(await page.locator("[data-testid=view-commit]").innerText()).toBe(before.commit_id);
    const box = (await page.locator("[data-testid=flame-canvas]").boundingBox())!;
    await page.mouse.click(box.x + (layout.x[target] + layout.w[target] / 2) * box.width, box.y + built.depth[target] * ROW_HEIGHT + ROW_HEIGHT / 2);
    await expect.poll(() => new URL(page.url()).searchParams.get("zoom")).toBe(built.ids[target]);

    // Esc closes the popover, gives focus back to the button, and leaves the flame graph's zoom alone
    // (from a button of the popover, where the flame graph's own Esc would otherwise reset the zoom).
    await openInvestigationPicker(page);
    expect(await page.locator("[data-testid=add-to-investigation]").getAttribute("aria-expanded")).toBe("true");
    await page.locator("[data-testid=add-to-investigation-create]").focus();
    await page.keyboard.press("Escape");
    expect(await page.locator("[data-testid=add-to-investigation-popover]").count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe("add-to-investigation");
    expect(new URL(page.url()).searchParams.get("zoom")).toBe(built.ids[target]);
    expect(await page.locator("[data-testid=flame-breadcrumb]").innerText()).toContain("measureText");

    // No open investigation yet: the popover says so and offers a new one, typed from the keyboard.
    await openInvestigationPicker(page);
    expect(await page.locator("[data-testid=add-to-investigation-popover]").innerText()).toContain("No open investigations yet");
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe("add-to-investigation-title");
    await page.keyboard.type(TITLE);
    await page.screenshot({ path: screenshotPath("add-to-investigation-new-1440") });
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=add-to-investigation-open]").waitFor();
    expect(await page.locator("[data-testid=add-to-investigation-status]").innerText()).toBe(`Added to ${TITLE} — open`);

    const page1 = await callService(listInvestigations, ctx, {});
    expect(page1.items.map((i) => i.title)).toEqual([TITLE]);
    investigationId = page1.items[0].investigation_id;
    const notebook = await callService(showInvestigation, ctx, { investigation_id: investigationId });
    expect(notebook.investigation).toMatchObject({ title: TITLE, status: "open", created_by: { actor: "person", client: null } });
    expect(notebook.cells).toHaveLength(1);
    const cell = notebook.cells[0];
    expect(cell.kind).toBe("flame");
    expect(cell.commit_id).toBe(before.commit_id);
    expect(cell.content).toEqual({ run_id: before.run_id, metric: tree.metric, zoom: built.ids[target], search: "tokenize", orientation: "icicle", mode: "left-heavy" });
    expect(await page.locator("[data-testid=add-to-investigation-open]").getAttribute("href")).toBe(`/investigations/${investigationId}#cell-${cell.cell_id}`);
    // The zoom survived all of it.
    expect(new URL(page.url()).searchParams.get("zoom")).toBe(built.ids[target]);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("adds a sandwich, a call tree, SQL consoles' text and a comparison to that same investigation through the picker, in order", async () => {
    expect(investigationId).toBeDefined();
    const hot = await callService(analyzeHotspots, ctx, { run_id: after.run_id, limit: 50 });
    const tokenize = hot.rows.find((r) => r.name === "tokenize")!;

    // Sandwich, tokenize selected, at HEAD (the page resolves HEAD to its concrete id).
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${after.run_id}?view=sandwich&sel=${tokenize.frame_key}`);
    await page.locator(`[data-testid=sandwich-row][data-frame-key="${tokenize.frame_key}"]`).waitFor();
    await openInvestigationPicker(page);
    expect(await page.locator("[data-testid=add-to-investigation-choice] .add-to-inv-title").allInnerTexts()).toEqual([TITLE]);
    expect(await page.locator("[data-testid=add-to-investigation-choice] .add-to-inv-count").allInnerTexts()).toEqual(["1 cell"]);
    await page.keyboard.press("Escape");
    const sandwichCell = await addToInvestigation(page, investigationId);

    // The call tree of the same run.
    await page.locator("[data-testid=tab-calltree]").click();
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBe("calltree");
    const calltreeCell = await addToInvestigation(page, investigationId);

    // The run page's SQL tab: the cell keeps the text in the editor at the moment of the click.
    await page.locator("[data-testid=tab-sql]").click();
    await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 60_000 });
    const runSql = "SELECT count(*) AS n FROM samples";
    await page.locator("[data-testid=sql-editor]").fill(runSql);
    const runSqlCell = await addToInvestigation(page, investigationId);
    expect(errors).toEqual([]);
    await page.close();

    // The /sql console, pinned to the older commit.
    const sql = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await sql.page.goto(`${server.url}/sql?commit=${before.commit_id}`);
    await sql.page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 60_000 });
    const consoleSql = "SELECT name, count(*) AS frames FROM frames GROUP BY name ORDER BY name";
    await sql.page.locator("[data-testid=sql-editor]").fill(consoleSql);
    const consoleCell = await addToInvestigation(sql.page, investigationId);
    expect(sql.errors).toEqual([]);
    await sql.page.close();

    // Compare, normalized, drawn from the base: at 1024 px the popover must still fit.
    const cmp = await newWatchedPage(browser, { viewport: { width: 1024, height: 800 } });
    await cmp.page.goto(`${server.url}/compare?base=${before.run_id}&candidate=${after.run_id}&norm=1&from=base&q=parse`);
    await cmp.page.locator("[data-testid=compare-table]").waitFor();
    await openInvestigationPicker(cmp.page);
    const popover = (await cmp.page.locator("[data-testid=add-to-investigation-popover]").boundingBox())!;
    expect(popover.x, "the popover stays inside the window").toBeGreaterThanOrEqual(0);
    expect(popover.x + popover.width).toBeLessThanOrEqual(1024);
    await cmp.page.screenshot({ path: screenshotPath("add-to-investigation-picker-1024") });
    await cmp.page.keyboard.press("Escape");
    const compareCell = await addToInvestigation(cmp.page, investigationId);
    expect(cmp.errors).toEqual([]);
    await cmp.page.close();

    const cells = (await callService(listCells, ctx, { investigation_id: investigationId })).items;
    expect(cells.map((c) => [c.cell_id, c.kind])).toEqual([
      [cells[0].cell_id, "flame"],
      [sandwichCell, "sandwich"],
      [calltreeCell, "calltree"],
      [runSqlCell, "sql"],
      [consoleCell, "sql"],
      [compareCell, "compare"],
    ]);
    const [, sandwich, calltree, runSqlRow, consoleRow, compare] = cells;
    expect(sandwich).toMatchObject({ commit_id: after.commit_id, content: { run_id: after.run_id, metric: hot.metric, selected: tokenize.frame_key } });
    expect(calltree).toMatchObject({ commit_id: after.commit_id, content: { run_id: after.run_id, metric: hot.metric } });
    expect(runSqlRow).toMatchObject({ commit_id: after.commit_id, content: { sql: runSql } });
    expect(consoleRow).toMatchObject({ commit_id: before.commit_id, content: { sql: consoleSql } });
    expect(compare.commit_id).toBe(after.commit_id);
    expect(compare.content).toEqual({ base_run_id: before.run_id, candidate_run_id: after.run_id, normalize: true, from: "base", zoom: null, search: "parse" });
  }, 180_000);

  it("lists the investigation with its counts and who started it on /investigations and on the home page; the rail links there from every page", async () => {
    await callService(recordHypothesis, ctx, { investigation_id: investigationId, claim: "tokenize does more work per token", add_cell: false });
    const agentCtx: ServiceContext = { ...ctx, actor: "agent", client: "claude-code" };
    const byAgent = await callService(createInvestigation, agentCtx, { title: "Agent: is paint stable?", question: "Does paint keep its 15 samples across captures?" });

    for (const width of [1440, 1024]) {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width, height: 800 } });
      await page.goto(`${server.url}/investigations`);
      const row = page.locator(`[data-testid=investigation-row][data-investigation-id="${investigationId}"]`);
      await row.waitFor();
      expect(await row.locator("[data-testid=investigation-cells]").innerText()).toBe("6");
      expect(await row.locator("[data-testid=investigation-hypotheses]").innerText()).toBe("1");
      expect(await row.locator("[data-testid=investigation-findings]").innerText()).toBe("0");
      expect(await row.locator("[data-testid=investigation-author]").innerText()).toBe("person");
      expect(await row.locator("[data-testid=investigation-link]").getAttribute("href")).toBe(`/investigations/${investigationId}`);
      const agentRow = page.locator(`[data-testid=investigation-row][data-investigation-id="${byAgent.investigation_id}"]`);
      expect(await agentRow.locator("[data-testid=investigation-author]").innerText()).toBe("agent · claude-code");
      // Newest first.
      expect(await page.locator("[data-testid=investigation-row]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-investigation-id")))).toEqual([byAgent.investigation_id, investigationId]);
      expect(await page.locator("nav[aria-label=Main] a[aria-current=page]").innerText()).toBe("Investigations");
      await page.screenshot({ path: screenshotPath(`investigations-list-${width}`), fullPage: true });
      // Nothing sticks out of the window sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(errors).toEqual([]);
      await page.close();
    }

    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    // Concluded ones are not open: the filter says there are none.
    await page.goto(`${server.url}/investigations?status=concluded`);
    expect(await page.locator("[data-testid=investigations-empty]").innerText()).toContain("No concluded investigations.");
    expect(await page.locator("[data-testid=filter-concluded]").getAttribute("aria-current")).toBe("page");

    await page.goto(server.url);
    const home = page.locator("[data-testid=home-investigations]");
    await home.waitFor();
    const homeRow = home.locator(`[data-testid=investigation-row][data-investigation-id="${investigationId}"]`);
    expect(await homeRow.locator("[data-testid=investigation-link]").innerText()).toBe(TITLE);
    expect(await homeRow.locator("[data-testid=investigation-cells]").innerText()).toBe("6");
    expect(await home.locator("a[href='/investigations']").count()).toBe(1);

    // The same rail, with Investigations, on every page.
    for (const at of ["/", `/runs/${before.run_id}`, `/compare?base=${before.run_id}&candidate=${after.run_id}`, "/sql", "/settings", "/investigations"]) {
      await page.goto(`${server.url}${at}`);
      expect(await page.locator("nav[aria-label=Main] a").allInnerTexts(), at).toEqual(
        at.startsWith("/runs/")
          ? ["Workspace", "Runs", "This run", "Commits", "Compare", "SQL", "Investigations", "Settings"]
          : ["Workspace", "Runs", "Commits", "Compare", "SQL", "Investigations", "Settings"],
      );
      expect(await page.locator("nav[aria-label=Main] a[href='/investigations']").count(), at).toBe(1);
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("refuses an empty title with a clear error in the popover and in the form, and creates nothing", async () => {
    const count = async () => (await callService(listInvestigations, ctx, { limit: 500 })).items.length;
    const before_ = await count();
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${after.run_id}`);
    await page.locator("[data-testid=flame-canvas]").waitFor();
    await openInvestigationPicker(page);
    await page.locator("[data-testid=add-to-investigation-title]").fill("   ");
    await page.locator("[data-testid=add-to-investigation-create]").click();
    const error = page.locator("[data-testid=add-to-investigation-popover] [data-testid=error-panel]");
    await error.waitFor();
    expect(await error.locator(".code").innerText()).toBe("INVALID_ARGUMENTS");
    expect(await error.innerText()).toContain("Invalid argument title: a title is needed (1 to 200 characters).");
    await page.screenshot({ path: screenshotPath("add-to-investigation-error-1440") });
    expect(await page.locator("[data-testid=add-to-investigation-open]").count()).toBe(0);

    await page.goto(`${server.url}/investigations`);
    await page.locator("[data-testid=new-investigation-create]").click();
    const formError = page.locator("[data-testid=new-investigation] [data-testid=error-panel]");
    await formError.waitFor();
    expect(await formError.locator(".code").innerText()).toBe("INVALID_ARGUMENTS");
    expect(await formError.innerText()).toContain("a title is needed");
    expect(new URL(page.url()).pathname).toBe("/investigations");
    expect(await count()).toBe(before_);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("starts an investigation from the form and opens it; More pages through the rest by cursor", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/investigations`);
    await page.locator("[data-testid=new-investigation-title]").fill("Is the GC pause new?");
    await page.locator("[data-testid=new-investigation-question]").fill("Did gc grow between the captures?");
    await page.locator("[data-testid=new-investigation-create]").click();
    await page.waitForURL(/\/investigations\/inv_[0-9a-z]+$/);
    const id = new URL(page.url()).pathname.split("/").pop()!;
    expect((await callService(showInvestigation, ctx, { investigation_id: id })).investigation).toMatchObject({ title: "Is the GC pause new?", question: "Did gc grow between the captures?", status: "open" });

    // 3 so far; 30 more make two pages of 25.
    for (let i = 0; i < 30; i++) await callService(createInvestigation, ctx, { title: `Batch ${i}` });
    const all = (await callService(listInvestigations, ctx, { limit: 500 })).items.map((i) => i.investigation_id);
    expect(all).toHaveLength(33);
    await page.goto(`${server.url}/investigations?status=all`);
    const ids = () => page.locator("[data-testid=investigation-row]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-investigation-id")));
    expect(await ids()).toEqual(all.slice(0, 25));
    await page.locator("[data-testid=investigations-more]").click();
    await expect.poll(ids).toEqual(all);
    expect(await page.locator("[data-testid=investigations-more]").count()).toBe(0);
    expect(await page.locator("[data-testid=investigations-shown]").innerText()).toBe("33 shown (all)");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
