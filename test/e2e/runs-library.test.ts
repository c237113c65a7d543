import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callService, importArtifact, renameRun, type ServiceContext } from "../../server/services";
import { captureTitle } from "../../server/services/captures";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { seedRuns } from "../helpers/seed";
import { startServer, type RunningServer } from "../helpers/server";

const rowIds = (page: Page) => page.locator("[data-testid=run-row]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-id")!));

/** Whether the page scrolls sideways (it must not, down to 1024 px wide). */
const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

/** Waits until the list shows an answer for what was last asked (not the rows of the one before). */
async function settled(page: Page) {
  await expect.poll(() => page.locator("[data-testid=runs-body]").getAttribute("aria-busy")).toBe("false");
}

describe("the runs library (/runs) and the run pickers, in a real browser", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  let before: string;
  let after: string;

  beforeAll(async () => {
    // Not tempProject(): that one is removed after each test, and this project serves them all.
    root = mkdtempSync(path.join(tmpdir(), "emberscope-runs-library-"));
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    const ws = initWorkspace(root);
    seedRuns(ws, 298, (i) =>
      i % 4 === 0
        ? {
            kind: "capture",
            source: "node-cpuprofile",
            title: captureTitle("demo", { seconds: i, mode: i % 8 ? "primes" : "hash" }, "node-cpuprofile", new Date(Date.UTC(2026, 10, 1, 9, 0, i)).toISOString()),
            status: i % 12 === 0 ? "failed" : "succeeded",
            details: { workload: "demo", adapter: "node-cpuprofile" },
          }
        : { kind: "import", source: "folded", title: `profile-${String(i).padStart(3, "0")}.folded`, status: "succeeded", details: { file_name: `profile-${String(i).padStart(3, "0")}.folded`, format: "folded" } },
    );
    ws.close();
    // Two real imports with evidence, so that comparing them draws a differential graph.
    for (const [name, stacks] of [
      ["checkout-before.folded", "main;checkout;render 70\nmain;checkout;validate 20\nmain;idle 10\n"],
      ["checkout-after.folded", "main;checkout;render 30\nmain;checkout;validate 20\nmain;idle 50\n"],
    ]) {
      writeFileSync(path.join(root, name), stacks);
    }
    before = (await callService(importArtifact, ctx, { path: path.join(root, "checkout-before.folded") })).run_id;
    after = (await callService(importArtifact, ctx, { path: path.join(root, "checkout-after.folded") })).run_id;
    server = await startServer(root);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("pages through 300 runs by cursor, both ways, with the page in the URL", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs`);
    expect(await page.locator("nav[aria-label=Main] a[aria-current=page]").innerText()).toBe("Runs");
    expect(await page.locator("[data-testid=runs-matching]").innerText()).toContain("300 runs");
    const pages: string[][] = [await rowIds(page)];
    expect(pages[0]).toHaveLength(50);
    expect(pages[0].slice(0, 2)).toEqual([after, before]);
    await page.screenshot({ path: screenshotPath("runs-library-1440"), fullPage: true });
    while (await page.locator("[data-testid=runs-next]").isEnabled()) {
      const shown = pages[pages.length - 1][0];
      await page.locator("[data-testid=runs-next]").click();
      await expect.poll(async () => (await rowIds(page))[0]).not.toBe(shown);
      await settled(page);
      pages.push(await rowIds(page));
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 50, 50, 50, 50]);
    expect(new Set(pages.flat()).size).toBe(300);

    await page.locator("[data-testid=runs-previous]").click();
    await expect.poll(() => rowIds(page)).toEqual(pages[4]);
    // The address holds the page: opened afresh it shows the same rows.
    expect(new URL(page.url()).searchParams.get("cursor")).toBeTruthy();
    await page.reload();
    expect(await rowIds(page)).toEqual(pages[4]);
    expect(await page.locator("[data-testid=runs-previous]").isEnabled()).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("narrows by text and by filters, keeps them in the URL, and compares the two runs selected", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs`);
    // `/` focuses the search once the page is interactive (before, the key does nothing).
    await expect
      .poll(async () => {
        await page.keyboard.press("/");
        return page.evaluate(() => document.activeElement?.getAttribute("data-testid"));
      })
      .toBe("runs-search");
    await page.keyboard.type("profile-01");
    // profile-010 … profile-019 but 012 and 016 (captures took those numbers).
    await expect.poll(() => rowIds(page).then((ids) => ids.length)).toBe(8);
    expect(new URL(page.url()).searchParams.get("q")).toBe("profile-01");
    expect(await page.locator("[data-testid=runs-matching]").innerText()).toContain("8 runs match");

    await page.locator("[data-testid=runs-search]").fill("");
    await page.locator("[data-testid=filter-kind]").selectOption("capture");
    await page.locator("[data-testid=filter-status]").selectOption("failed");
    await expect.poll(() => page.locator("[data-testid=runs-matching]").innerText()).toContain("25 runs match");
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ kind: "capture", status: "failed" });
    await page.locator("[data-testid=runs-order]").selectOption("title");
    await settled(page);
    const titles = await page.locator("[data-testid=run-title]").allInnerTexts();
    const folded = titles.map((t) => t.toLowerCase());
    expect(folded).toEqual([...folded].sort());
    await page.locator("[data-testid=runs-clear]").click();
    await expect.poll(() => page.locator("[data-testid=runs-matching]").innerText()).toContain("300 runs");

    await page.locator("[data-testid=runs-search]").fill("checkout");
    await expect.poll(() => rowIds(page)).toEqual([after, before]);
    await page.locator("[data-testid=select-page]").check();
    expect(await page.locator("[data-testid=runs-selected]").innerText()).toBe("2 selected");
    await page.screenshot({ path: screenshotPath("runs-library-selected-1440"), fullPage: true });
    await page.locator("[data-testid=compare-selected]").click();
    await page.waitForURL(/\/compare\?/);
    const url = new URL(page.url());
    expect([url.searchParams.get("base"), url.searchParams.get("candidate")]).toEqual([before, after]);
    await page.locator("[data-testid=compare-table]").waitFor();
    expect(await page.locator("[data-testid=pick-base]").innerText()).toContain("checkout-before.folded");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("renames a run in place; a rename from elsewhere meanwhile is a conflict that shows the current title", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs?q=checkout-before`);
    const row = page.locator(`[data-testid=run-row][data-run-id="${before}"]`);
    await row.locator("[data-testid=rename-run]").click();
    await row.locator("[data-testid=rename-input]").fill("checkout before the cache fix");
    await row.locator("[data-testid=rename-input]").press("Enter");
    await expect.poll(() => row.locator("[data-testid=run-title]").innerText()).toBe("checkout before the cache fix");
    await page.reload();
    expect(await row.locator("[data-testid=run-title]").innerText()).toBe("checkout before the cache fix");

    // Someone renames it at a shell while the page still shows the revision it read.
    await callService(renameRun, ctx, { run_id: before, title: "checkout, baseline" });
    await row.locator("[data-testid=rename-run]").click();
    await row.locator("[data-testid=rename-input]").fill("my title");
    await row.locator("[data-testid=rename-save]").click();
    expect(await row.locator("[data-testid=rename-error]").innerText()).toContain("REVISION_CONFLICT");
    await page.screenshot({ path: screenshotPath("runs-library-rename-conflict-1440") });
    await row.getByRole("button", { name: "Show the current title" }).click();
    await row.getByRole("button", { name: "Cancel" }).click();
    expect(await row.locator("[data-testid=run-title]").innerText()).toBe("checkout, baseline");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the compare and SQL pickers search and page through every run; nothing scrolls sideways at 1024 px", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1024, height: 800 } });
    await page.goto(`${server.url}/runs`);
    await page.screenshot({ path: screenshotPath("runs-library-1024") });
    expect(await scrollsSideways(page)).toBe(false);

    await page.goto(`${server.url}/compare`);
    expect(await page.locator("nav[aria-label=Main] a", { hasText: "Runs" }).getAttribute("href")).toBe("/runs");
    await page.locator("[data-testid=pick-base]").click();
    const options = page.locator("[data-testid=pick-base-popover] [data-testid=run-picker-option]");
    await expect.poll(() => options.count()).toBe(8);
    const firstPage = await options.allInnerTexts();
    await page.locator("[data-testid=pick-base-next]").click();
    await expect.poll(() => options.first().innerText()).not.toBe(firstPage[0]);
    await page.locator("[data-testid=pick-base-popover] input[type=search]").fill("checkout-before");
    await expect.poll(() => options.count()).toBe(1);
    expect(await scrollsSideways(page)).toBe(false);
    await page.screenshot({ path: screenshotPath("compare-picker-1024") });
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=pick-candidate]").click();
    await page.keyboard.type("checkout-after");
    await expect.poll(() => page.locator("[data-testid=pick-candidate-popover] [data-testid=run-picker-option]").count()).toBe(1);
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Compare" }).click();
    await page.waitForURL(/candidate=/);
    const url = new URL(page.url());
    expect([url.searchParams.get("base"), url.searchParams.get("candidate")]).toEqual([before, after]);
    await page.locator("[data-testid=compare-table]").waitFor();
    await page.screenshot({ path: screenshotPath("compare-picked-1024"), fullPage: true });
    // The pickers fit, and so does the largest-changes table below them.
    const form = (await page.locator("form.compare-form").boundingBox())!;
    expect(form.x + form.width).toBeLessThanOrEqual(1024);
    expect(await scrollsSideways(page)).toBe(false);
    expect(await page.locator("[data-testid=compare-table]").evaluate((t) => t.getBoundingClientRect().right - t.parentElement!.getBoundingClientRect().right)).toBeLessThanOrEqual(1);

    await page.goto(`${server.url}/sql`);
    await page.locator("[data-testid=pick-run]").click();
    await page.keyboard.type("profile-29");
    await expect.poll(() => page.locator("[data-testid=pick-run-popover] [data-testid=run-picker-option]").count()).toBe(6);
    await page.screenshot({ path: screenshotPath("sql-picker-1024"), fullPage: true });
    expect(await scrollsSideways(page)).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  });
});
