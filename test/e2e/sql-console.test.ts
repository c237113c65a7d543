import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { callService, importArtifact } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { cpuprofileFile } from "../bench/generators";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer } from "../helpers/server";

/** The result table as rows of exact values (each cell keeps its value in data-value). */
async function resultRows(page: Page): Promise<Record<string, unknown>[]> {
  return page.locator("[data-testid=sql-result] tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Object.fromEntries([...tr.querySelectorAll("td")].map((td) => [td.dataset.column!, JSON.parse(td.dataset.value!)]))),
  );
}

const answeredBy = (page: Page, engine: "server" | "duckdb-wasm") => page.locator(`[data-testid=sql-result-meta][data-engine=${engine}]`);

/**
 * Records, from the page's first byte, each engine a shown result names (a result may be replaced
 * between two polls of a locator): window.__engines, as [engine, ms since navigation start, rows].
 */
const RECORD_ENGINES = `(() => {
  window.__engines = [];
  const seen = () => {
    const meta = document.querySelector("[data-testid=sql-result-meta]");
    const engine = meta && meta.getAttribute("data-engine");
    const last = window.__engines[window.__engines.length - 1];
    if (engine && (!last || last[0] !== engine)) window.__engines.push([engine, Math.round(performance.now()), document.querySelectorAll("[data-testid=sql-result] tbody tr").length]);
  };
  new MutationObserver(seen).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-engine"] });
  document.addEventListener("DOMContentLoaded", seen);
})()`;

async function engines(page: Page): Promise<[string, number, number][]> {
  return page.evaluate("window.__engines") as Promise<[string, number, number][]>;
}

/** Rows compared with floats to 9 significant digits (the engines may sum in another order). */
const canonical = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(Object.entries(r).map(([k, v]) => [k, typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v])));

const BY_TITLE = "SELECT r.title, count(*) AS samples\nFROM samples s JOIN runs r USING (generation_id)\nGROUP BY r.title ORDER BY r.title";

describe("the SQL console answers from the server's engine first, then from DuckDB-WASM", () => {
  let browser: Browser;
  let root: string;
  let server: Awaited<ReturnType<typeof startServer>>;
  let runId: string;
  let sampleRows: number;
  beforeAll(async () => {
    browser = await launchChromium();
    // One project for the whole file (tempProject() is removed after each test).
    root = mkdtempSync(path.join(tmpdir(), "emberscope-sql-console-"));
    initWorkspace(root).close();
    const file = path.join(root, "busy.cpuprofile");
    await cpuprofileFile(file, 20_000, 400);
    const imported = await callService(importArtifact, { locator: { cwd: root, projectRoot: root }, actor: "test" }, { path: file });
    runId = imported.run_id;
    sampleRows = imported.rows.samples;
    server = await startServer(root);
    // The server's own first request (Next loading its routes) is not the console's to pay: the benchmark warms it the same way.
    await fetch(`${server.url}/sql`).then((r) => r.text());
    await fetch(`${server.url}/runs/${runId}`).then((r) => r.text());
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await browser?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("on /sql: the server's answer first (within the 2 s goal), then DuckDB-WASM's with the same rows; runs has titles; the query is in the URL and Back brings the previous one", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 1000 } });
    await page.addInitScript(RECORD_ENGINES);
    await page.goto(`${server.url}/sql?run=${runId}&preset=hotspots`);
    const serverRows = page.locator("[data-testid=sql-result]");
    await serverRows.waitFor({ timeout: 30_000 });
    // The HTML brought the server engine's rows: read them before the page's own engine replaces them.
    const fromServer = (await engines(page))[0]?.[0] === "server" && (await answeredBy(page, "server").count()) ? await resultRows(page) : null;
    expect((await engines(page))[0]?.slice(0, 1)).toEqual(["server"]);
    // The figure the benchmark reports: navigation start to the first rows shown (set as they are drawn, so waited for).
    await expect.poll(() => page.locator("[data-testid=sql-console]").getAttribute("data-first-result-ms")).not.toBe(null);
    const firstMs = Number(await page.locator("[data-testid=sql-console]").getAttribute("data-first-result-ms"));
    // Its goal (≤ 2 s) is the sql-console benchmark's to judge: a time asserted here fails on a busy machine.
    expect(firstMs).toBeGreaterThan(0);
    if (fromServer) {
      expect(fromServer.length).toBe(20);
      expect(await page.locator("[data-testid=sql-answered-by]").innerText()).toMatch(/^server DuckDB v1\.\d+\.\d+ \(node-api\)$/);
      await page.screenshot({ path: screenshotPath("sql-console-server-answer"), fullPage: true });
    }

    await answeredBy(page, "duckdb-wasm").waitFor({ timeout: 60_000 });
    expect(await page.locator("[data-testid=sql-answered-by]").innerText()).toMatch(/^DuckDB-WASM v1\.\d+\.\d+$/);
    const wasmMs = Number(await page.locator("[data-testid=sql-console]").getAttribute("data-wasm-result-ms"));
    expect(wasmMs).toBeGreaterThan(firstMs);
    expect((await engines(page)).map((e) => e[0])).toEqual(["server", "duckdb-wasm"]);
    expect((await resultRows(page)).length).toBe(20);
    if (fromServer) expect(canonical(await resultRows(page))).toEqual(canonical(fromServer));
    expect(await page.locator("[data-testid=sql-result-meta]").innerText()).toContain("rows match the hotspots row schema");
    // The chart's value axis names its measure and its unit (the preset's metric is in nanoseconds).
    expect(await page.locator("[data-testid=sql-chart-x-axis] .chart-axis-title").textContent()).toMatch(/^self \((ns|count|samples)\)$/);
    await page.screenshot({ path: screenshotPath("sql-console-wasm-answer"), fullPage: true });

    // The runs table has titles, and joins the evidence.
    const presetUrl = page.url();
    await page.locator("[data-testid=sql-preset]").selectOption("");
    await page.locator("[data-testid=sql-editor]").fill(BY_TITLE);
    await page.locator("[data-testid=sql-run]").click();
    await expect.poll(async () => (await resultRows(page))[0]?.title).toBe("busy.cpuprofile");
    expect(await resultRows(page)).toEqual([{ title: "busy.cpuprofile", samples: sampleRows }]);
    expect(await answeredBy(page, "duckdb-wasm").count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("sql")).toBe(BY_TITLE);

    // Errors keep DuckDB's line breaks (the caret line under the query).
    await page.locator("[data-testid=sql-editor]").fill("SELECT nope\nFROM samples");
    await page.locator("[data-testid=sql-run]").click();
    const message = await page.locator("[data-testid=sql-error-text]").innerText();
    expect(message).toContain("nope");
    expect(message.split("\n").length).toBeGreaterThan(2);
    expect(message).toMatch(/\nLINE 1: SELECT nope/);
    await page.screenshot({ path: screenshotPath("sql-console-error"), fullPage: true });

    // Back: the query before, run again (and shown by the server engine or the page's, whichever is up).
    await page.goBack();
    await expect.poll(() => page.url()).toContain(encodeURIComponent("JOIN runs").replace(/%20/g, "+"));
    await expect.poll(async () => (await resultRows(page))[0]?.title, { timeout: 30_000 }).toBe("busy.cpuprofile");
    expect(await page.locator("[data-testid=sql-editor]").inputValue()).toBe(BY_TITLE);
    await page.goBack();
    expect(page.url()).toBe(presetUrl);

    // A copied link runs its query first, on the server engine, in a fresh browser.
    const link = `${server.url}/sql?run=${runId}&sql=${encodeURIComponent(BY_TITLE)}`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const fresh = await context.newPage();
    await fresh.addInitScript(RECORD_ENGINES);
    await fresh.goto(link);
    await fresh.locator("[data-testid=sql-result]").waitFor({ timeout: 30_000 });
    expect((await engines(fresh))[0]?.[0]).toBe("server");
    expect(await resultRows(fresh)).toEqual([{ title: "busy.cpuprofile", samples: sampleRows }]);
    await context.close();
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it("in the run page's SQL tab: the server's answer first, then DuckDB-WASM's with the same rows; the query run is kept in the URL", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.addInitScript(RECORD_ENGINES);
    await page.goto(`${server.url}/runs/${runId}?view=sql`);
    await page.locator("[data-testid=sql-result]").waitFor({ timeout: 30_000 }).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${(await page.locator("body").innerText()).slice(0, 3000)}\n${errors.join("\n")}`);
    });
    const fromServer = (await answeredBy(page, "server").count()) ? await resultRows(page) : null;
    await expect.poll(() => page.locator("[data-testid=sql-console]").getAttribute("data-first-result-ms")).not.toBe(null);
    expect(Number(await page.locator("[data-testid=sql-console]").getAttribute("data-first-result-ms"))).toBeGreaterThan(0);
    await answeredBy(page, "duckdb-wasm").waitFor({ timeout: 60_000 });
    expect((await engines(page)).map((e) => e[0])).toEqual(["server", "duckdb-wasm"]);
    expect((await resultRows(page)).length).toBe(20);
    if (fromServer) expect(canonical(await resultRows(page))).toEqual(canonical(fromServer));

    await page.locator("[data-testid=sql-preset]").selectOption("");
    await page.locator("[data-testid=sql-editor]").fill("SELECT count(*) AS samples FROM samples");
    await page.locator("[data-testid=sql-run]").click();
    await expect.poll(async () => (await resultRows(page))[0]?.samples).toBe(sampleRows);
    await expect.poll(() => new URL(page.url()).searchParams.get("sql")).toBe("SELECT count(*) AS samples FROM samples");
    await page.screenshot({ path: screenshotPath("run-sql-tab"), fullPage: true });

    // Reloaded, the tab runs the URL's query first, on the server engine.
    await page.reload();
    await page.locator("[data-testid=sql-result]").waitFor({ timeout: 30_000 });
    expect((await engines(page))[0]?.[0]).toBe("server");
    expect(await resultRows(page)).toEqual([{ samples: sampleRows }]);
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);
});
