import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseHeldWorkspaces } from "../../server/mcp/held-workspace";
import { addCell, callService, createInvestigation, importArtifact, listCells, listCellRevisions, recordFinding, runSql, showInvestigation, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { memoryClient } from "../mcp/clients";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

// Nine distinct frames; the second profile adds four more, so `count(*) FROM frames` tells commits apart.
const FIRST = "main;parse;tokenize 30\nmain;parse 5\nmain;render;layout;measureText 40\nmain;render;paint 15\nmain;gc 7\nidle 6\n";
const SECOND = "main;boot;loadConfig 50\nmain;boot;readFile 20\nmain;serve 30\n";

const cells = (page: Page) => page.locator("[data-testid=notebook-cell]");
const cellById = (page: Page, id: string) => page.locator(`[data-testid=notebook-cell][data-cell-id="${id}"]`);

/** The rows of a SQL cell's result table, each cell's exact value (data-value). */
async function sqlRows(cell: Locator): Promise<Record<string, unknown>[]> {
  await cell.locator("[data-testid=sql-cell-result]").waitFor({ timeout: 90_000 });
  return cell.locator("[data-testid=sql-result] tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Object.fromEntries([...tr.querySelectorAll("td")].map((td) => [td.dataset.column!, JSON.parse(td.dataset.value!)]))),
  );
}

async function savedAll(page: Page) {
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=notebook-cell]")].every((c) => c.getAttribute("data-save") === "saved"), null, { timeout: 20_000 });
}

describe("investigations as notebooks in a real browser", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  let runId: string;
  let firstCommit: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-notebook-"));
    initWorkspace(root).close();
    writeFileSync(path.join(root, "ui.folded"), FIRST);
    writeFileSync(path.join(root, "server.folded"), SECOND);
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    const imported = await callService(importArtifact, ctx, { path: "ui.folded" });
    runId = imported.run_id;
    firstCommit = imported.commit_id;
    server = await startServer(root);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    releaseHeldWorkspaces();
    rmSync(root, { recursive: true, force: true });
  });

  it("reactive SQL cells, a hypothesis and a supported finding citing a flame cell survive a reload; a new import leaves every pin alone and re-pin changes one cell", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Why is the first paint slow?", question: "Where does the UI thread spend its time?" });
    const flame = await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: runId, zoom: null } });
    expect(flame.commit_id).toBe(firstCommit);
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 1000 } });
    await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
    await expect.poll(() => cells(page).count()).toBe(1);
    await cellById(page, flame.cell_id).locator("[data-testid=flame-canvas]").waitFor({ timeout: 60_000 });

    // A SQL cell named hot, and one that reads it (B inserts below the selected cell, in edit mode).
    await page.keyboard.press("b");
    await expect.poll(() => cells(page).count()).toBe(2);
    const hot = cells(page).nth(1);
    await hot.locator("[data-testid=sql-cell-editor]").fill("SELECT name FROM frames ORDER BY name LIMIT 5");
    await hot.locator("[data-testid=sql-cell-name]").fill("hot");
    await hot.locator("[data-testid=sql-cell-editor]").press("Shift+Enter");
    expect(await sqlRows(hot)).toHaveLength(5);
    await page.keyboard.press("b");
    await expect.poll(() => cells(page).count()).toBe(3);
    const readerId = (await cells(page).nth(2).getAttribute("data-cell-id"))!;
    const reader = cellById(page, readerId);
    await reader.locator("[data-testid=sql-cell-editor]").fill("SELECT count(*) AS n FROM hot");
    await reader.locator("[data-testid=sql-cell-editor]").press("Control+Enter");
    expect(await sqlRows(reader)).toEqual([{ n: 5 }]);

    // Editing and re-running hot re-runs the cell that reads it.
    await hot.click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("Enter");
    await hot.locator("[data-testid=sql-cell-editor]").fill("SELECT name FROM frames ORDER BY name LIMIT 3");
    await hot.locator("[data-testid=sql-cell-editor]").press("Control+Enter");
    await expect.poll(async () => (await sqlRows(reader))[0]?.n, { timeout: 60_000 }).toBe(3);

    // A hypothesis, then a finding that cites the flame cell and is assessed supported.
    await page.keyboard.press("Escape");
    await page.locator("[data-testid=add-hypothesis]").click();
    await page.locator("[data-testid=hypothesis-claim]").fill("Text measurement dominates the first paint.");
    await page.locator("[data-testid=hypothesis-prediction]").fill("measureText holds over a third of the samples.");
    await page.locator("[data-testid=hypothesis-submit]").click();
    await page.locator("[data-testid=hypothesis]").waitFor();
    await page.locator("[data-testid=add-finding]").click();
    await page.locator("[data-testid=finding-title]").fill("measureText is the hot path");
    await page.locator("[data-testid=finding-claim]").fill("measureText under render/layout takes 40 of 103 samples.");
    // Supported with no supports reference is refused, and the form says why.
    await page.locator("[data-testid=finding-assessment-input]").selectOption("supported");
    await page.locator("[data-testid=finding-submit]").click();
    await expect.poll(() => page.locator("[data-testid=finding-form] [data-testid=error-panel]").innerText()).toContain("FINDING_UNSUPPORTED");
    await page.locator(`[data-testid="cite-cell:${flame.cell_id}"]`).selectOption("supports");
    await page.locator("[data-testid=finding-submit]").click();
    await page.locator("[data-testid=finding]").waitFor();
    expect(await page.locator("[data-testid=finding-assessment]").innerText()).toBe("supported");
    const link = page.locator("[data-testid=finding-ref-link]");
    expect(await link.getAttribute("href")).toBe(`#cell-${flame.cell_id}`);
    // And the cited view in the workbench, at the cited commit.
    expect(await page.locator("[data-testid=finding-ref-open]").getAttribute("href")).toBe(`/runs/${runId}?commit=${firstCommit}`);
    await savedAll(page);
    await page.screenshot({ path: screenshotPath("notebook-1440"), fullPage: true });

    // Reload: all there.
    await page.reload();
    await expect.poll(() => cells(page).count()).toBe(5);
    const names = await page.locator("[data-testid=cell-name]").allInnerTexts();
    expect(names).toEqual(["hot"]);
    expect(await sqlRows(cellById(page, readerId))).toEqual([{ n: 3 }]);
    expect(await page.locator("[data-testid=finding-assessment]").innerText()).toBe("supported");

    // A second import moves HEAD: every evidence cell still reads its pinned commit.
    const counting = await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "sql", content: { sql: "SELECT count(DISTINCT name) AS frames FROM frames", view: {} } });
    const second = await callService(importArtifact, ctx, { path: "server.folded" });
    expect(second.commit_id).not.toBe(firstCommit);
    const asked: string[] = [];
    page.on("request", (r) => r.url().includes("evidence.flame_tree") && asked.push(decodeURIComponent(r.url())));
    await page.reload();
    await expect.poll(() => cells(page).count()).toBe(6);
    const pins = await cells(page).evaluateAll((els) => els.map((e) => e.getAttribute("data-commit")).filter(Boolean));
    expect(pins).toEqual(Array(pins.length).fill(firstCommit));
    expect(await sqlRows(cellById(page, counting.cell_id))).toEqual([{ frames: 9 }]);
    await cellById(page, flame.cell_id).locator("[data-testid=flame-canvas]").waitFor();
    expect(asked.length).toBeGreaterThan(0);
    for (const url of asked) expect(url).toContain(firstCommit);

    // Re-pin one cell to HEAD: that cell reads the new commit, the others keep theirs.
    await cellById(page, counting.cell_id).locator("[data-testid=repin]").click();
    await expect.poll(() => cellById(page, counting.cell_id).getAttribute("data-commit")).toBe(second.commit_id);
    await expect.poll(async () => (await sqlRows(cellById(page, counting.cell_id)))[0]?.frames, { timeout: 60_000 }).toBe(13);
    const stored = await callService(listCells, ctx, { investigation_id: inv.investigation_id });
    expect(stored.items.filter((c) => c.commit_id === second.commit_id).map((c) => c.cell_id)).toEqual([counting.cell_id]);
    expect(stored.items.filter((c) => c.commit_id === firstCommit)).toHaveLength(3);
    expect(errors).toEqual([]);
  }, 300_000);

  it("works from the keyboard alone: insert, type, run, move, delete and undo", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Keyboard only" });
    const first = await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "note", content: { markdown: "# Plan\nFind the hot path." } });
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1024, height: 900 } });
    await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
    await page.locator("[data-testid=note-body] h1").waitFor();
    await page.keyboard.press("?");
    await page.locator("[data-testid=notebook-keys]").waitFor();
    await page.keyboard.press("Escape");
    await expect.poll(() => page.locator("[data-testid=notebook-keys]").count()).toBe(0);
    await page.keyboard.press("b");
    await expect.poll(() => cells(page).count()).toBe(2);
    await page.locator("[data-testid=sql-cell-editor]").waitFor();
    await page.keyboard.type("SELECT 6 * 7 AS answer");
    await page.keyboard.press("Escape");
    await page.keyboard.press("Shift+Enter");
    expect(await sqlRows(cells(page).nth(1))).toEqual([{ answer: 42 }]);
    await page.keyboard.press("k");
    await page.keyboard.press("j");
    await page.keyboard.press("Alt+ArrowUp");
    await expect.poll(async () => (await callService(listCells, ctx, { investigation_id: inv.investigation_id })).items.map((c) => c.kind)).toEqual(["sql", "note"]);
    await expect.poll(() => cells(page).first().getAttribute("data-kind")).toBe("sql");
    // Enter edits a note; Esc leaves; M makes the SQL cell a note.
    await page.keyboard.press("m");
    await expect.poll(async () => (await callService(listCells, ctx, { investigation_id: inv.investigation_id })).items.map((c) => c.kind)).toEqual(["note", "note"]);
    await expect.poll(() => cells(page).evaluateAll((els) => els.map((e) => e.getAttribute("data-kind")))).toEqual(["note", "note"]);
    await page.keyboard.press("j");
    await page.keyboard.press("d");
    await page.keyboard.press("d");
    await expect.poll(() => cells(page).count()).toBe(1);
    await expect.poll(async () => (await callService(listCells, ctx, { investigation_id: inv.investigation_id })).items.map((c) => c.cell_id)).not.toContain(first.cell_id);
    await page.keyboard.press("z");
    await expect.poll(() => cells(page).count()).toBe(2);
    await expect.poll(async () => (await callService(listCells, ctx, { investigation_id: inv.investigation_id })).items.map((c) => c.cell_id)).toContain(first.cell_id);
    await page.screenshot({ path: screenshotPath("notebook-keyboard-1024"), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
  }, 180_000);

  it("a cycle and a name no cell has are errors on those cells, and the rest still run: the server engine answers first while DuckDB-WASM starts, then the page's engine, each answer naming its engine", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Broken SQL" });
    const add = (name: string | null, sql: string) => callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "sql", name, content: { sql, view: {} } });
    const a = await add("a", "SELECT * FROM b");
    const b = await add("b", "SELECT * FROM a");
    const dangling = await add(null, "SELECT * FROM nosuch_cell");
    const fine = await add("fine", "SELECT 1 AS one");
    const BY_NAME = "SELECT name, count(*)::INTEGER AS n FROM frames GROUP BY name ORDER BY name";
    const byName = await add("by_name", BY_NAME);
    const reader = await add(null, "SELECT count(*)::INTEGER AS names FROM by_name");
    const expected = (await callService(runSql, ctx, { commit_id: byName.commit_id!, sql: BY_NAME })).rows;
    expect(expected.length).toBeGreaterThan(5);
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 1000 } });
    // DuckDB-WASM's wasm is held back until the server's answers have been read (a slow start, made certain).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heldRequests = 0;
    await page.context().route("**/duckdb-eh.wasm", async (route) => {
      heldRequests++;
      await held;
      await route.continue();
    });
    await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
    const counted = cellById(page, byName.cell_id);
    const meta = counted.locator("[data-testid=sql-cell-meta]");
    await expect.poll(() => meta.getAttribute("data-engine"), { timeout: 30_000 }).toBe("server");
    expect(await counted.locator("[data-testid=sql-cell-engine]").innerText()).toMatch(/^server DuckDB v1\.\d+\.\d+ \(node-api\)$/);
    expect(await meta.innerText()).toContain("while DuckDB-WASM starts");
    expect(await sqlRows(counted)).toEqual(expected);
    // A cell that reads another cell's table has nothing the server holds: it waits for the page's engine.
    expect(await cellById(page, reader.cell_id).locator("[data-testid=sql-cell-meta]").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("notebook-sql-server-answer"), fullPage: true });
    expect(heldRequests, "the wasm was asked for, and held").toBeGreaterThan(0);
    release();
    await expect.poll(() => meta.getAttribute("data-engine"), { timeout: 90_000 }).toBe("duckdb-wasm");
    expect(await counted.locator("[data-testid=sql-cell-engine]").innerText()).toMatch(/^DuckDB-WASM v1\.\d+\.\d+$/);
    expect(await sqlRows(counted)).toEqual(expected);
    expect(await sqlRows(cellById(page, reader.cell_id))).toEqual([{ names: expected.length }]);
    for (const cell of [a, b]) {
      const error = cellById(page, cell.cell_id).locator("[data-testid=sql-cell-error]");
      await error.waitFor({ timeout: 90_000 });
      expect(await error.getAttribute("data-cause")).toBe("plan");
      expect(await error.innerText()).toContain("cycle");
    }
    const missing = cellById(page, dangling.cell_id).locator("[data-testid=sql-cell-error]");
    await missing.waitFor();
    expect(await missing.innerText()).toContain("No cell is named nosuch_cell");
    expect(await sqlRows(cellById(page, fine.cell_id))).toEqual([{ one: 1 }]);
    expect(errors).toEqual([]);
  }, 180_000);

  it("two pages editing one cell: the second save gets the conflict, both versions are kept and either can be taken", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Two tabs" });
    const note = await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "note", content: { markdown: "draft" } });
    const one = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    const two = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    // The second page's clock is held, so it cannot pick up the first page's save before it edits.
    await two.page.clock.install();
    for (const { page } of [one, two]) {
      await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
      await page.locator("[data-testid=note-body]").waitFor();
    }
    await one.page.keyboard.press("Enter");
    await one.page.locator("[data-testid=note-editor]").fill("from page one");
    await savedAll(one.page);
    await two.page.keyboard.press("Enter");
    await two.page.locator("[data-testid=note-editor]").fill("from page two");
    await two.page.clock.runFor(1_000);
    const conflict = two.page.locator("[data-testid=cell-conflict]");
    await conflict.waitFor();
    expect(await two.page.locator("[data-testid=conflict-theirs]").innerText()).toContain("from page one");
    expect(await two.page.locator("[data-testid=conflict-mine]").innerText()).toContain("from page two");
    await two.page.screenshot({ path: screenshotPath("notebook-conflict"), fullPage: true });
    // Keep both: theirs stays in the cell, mine becomes a new cell right below it.
    await two.page.locator("[data-testid=conflict-keep-both]").click();
    await expect.poll(async () => (await callService(listCells, ctx, { investigation_id: inv.investigation_id })).items.map((c) => (c.kind === "note" ? c.content.markdown : ""))).toEqual(["from page one", "from page two"]);
    // Keep mine on a second conflict: mine wins, and theirs is still a revision.
    await one.page.locator("[data-testid=note-editor]").fill("one again");
    await savedAll(one.page);
    await two.page.locator(`[data-cell-id="${note.cell_id}"]`).click({ position: { x: 5, y: 5 } });
    await two.page.keyboard.press("Enter");
    await two.page.locator(`[data-cell-id="${note.cell_id}"] [data-testid=note-editor]`).fill("two wins");
    await two.page.clock.runFor(1_000);
    await two.page.locator("[data-testid=conflict-keep-mine]").click();
    await two.page.clock.runFor(1_000);
    await expect.poll(async () => (await callService(listCellRevisions, ctx, { cell_id: note.cell_id })).items.map((c) => (c.kind === "note" ? c.content.markdown : ""))).toEqual(["two wins", "one again", "from page one", "draft"]);
    expect([...one.errors, ...two.errors]).toEqual([]);
  }, 180_000);

  it("an agent over MCP writes into the notebook under its client name; the page shows it, and refuses the agent's reassessment of a person's finding", async () => {
    const agent = await memoryClient(root);
    try {
      const created = await agent.call("create_investigation", { title: "Agent: where does startup go?" });
      expect(created.ok).toBe(true);
      const id = (created as { value: { investigation_id: string } }).value.investigation_id;
      const query = await agent.call("add_cell", { investigation_id: id, kind: "query", sql: "SELECT count(*) AS frames FROM frames WHERE name = 'measureText'", name: "agent_frames" });
      expect(query.ok).toBe(true);
      // An image in an agent's note would be fetched from another host just by being shown.
      expect((await agent.call("add_cell", { investigation_id: id, kind: "note", markdown: "Chart: ![pixel](http://127.0.0.1:9/pixel.png) and **bold** text." })).ok).toBe(true);
      const unsupported = await agent.call("record_finding", { investigation_id: id, title: "Unbacked", claim: "It is slow.", evidence_level: "inferred", assessment: "supported" });
      expect(unsupported.ok).toBe(false);
      if (!unsupported.ok) expect(unsupported.error.code).toBe("FINDING_UNSUPPORTED");
      const found = await agent.call("record_finding", {
        investigation_id: id,
        title: "measureText dominates",
        claim: "measureText takes 40 of 103 samples.",
        evidence_level: "observed",
        assessment: "supported",
        references: [{ relation: "supports", target: { kind: "run", run_id: runId, commit_id: firstCommit } }],
      });
      expect(found.ok).toBe(true);
      // A person's finding in the same investigation: the agent may not reassess it.
      const persons = await callService(recordFinding, ctx, { investigation_id: id, title: "Person's view", claim: "Layout is fine.", evidence_level: "observed" });
      const reassess = await agent.call("assess_finding", { finding_id: persons.finding.finding_id, expected_revision: persons.finding.revision, assessment: "refuted" });
      expect(reassess.ok).toBe(false);
      if (!reassess.ok) expect(reassess.error.code).toBe("POLICY_DENIED");

      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 1000 } });
      await page.goto(`${server.url}/investigations/${id}`);
      await page.locator("[data-testid=finding]").first().waitFor();
      const badges = await page.locator("[data-testid=notebook-cell] [data-testid=author-agent]").allInnerTexts();
      expect(badges.length).toBeGreaterThanOrEqual(3);
      expect(await page.locator("[data-testid=note-body] strong").innerText()).toBe("bold");
      expect(await page.locator("[data-testid=note-body] img").count()).toBe(0);
      for (const badge of badges) expect(badge).toContain("emberscope-test");
      const view = await callService(showInvestigation, ctx, { investigation_id: id });
      expect(await sqlRows(cellById(page, view.cells.find((c) => c.kind === "sql")!.cell_id))).toEqual([{ frames: 1 }]);
      // The agent's calls, the refused ones too, are on the page's timeline.
      const timeline = page.locator("[data-testid=agent-timeline]");
      await expect.poll(() => timeline.innerText()).toContain("assess_finding");
      expect(await timeline.innerText()).toContain("add_cell");
      await page.screenshot({ path: screenshotPath("notebook-agent"), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await agent.close();
    }
  }, 180_000);
});
