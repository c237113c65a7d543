import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { IMPORTERS } from "../../analysis/formats";
import { callService, listRuns, showRun } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, screenshotPath, newWatchedPage } from "../helpers/browser";
import { demoProject } from "../helpers/demo";
import { tempProject } from "../helpers/project";
import { startServer } from "../helpers/server";

const ctxFor = (root: string) => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });
const FOLDED = "main;checkout;price 30\nmain;checkout;tax 12\nmain;render 5\n";

describe("home page: import and capture in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("imports a file chosen with the picker and one dropped on the page, and lists both runs", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
      await page.goto(server.url);
      await page.locator("[data-testid=first-run]").waitFor();
      // The drop zone lists every format the registry imports.
      await page.locator("[data-testid=import-formats] summary").click();
      expect(await page.locator("[data-testid=import-formats] li").allInnerTexts()).toEqual(IMPORTERS.map((i) => i.title));
      await page.screenshot({ path: screenshotPath("home-first-run-no-demo"), fullPage: true });

      await page.locator("[data-testid=import-file-input]").setInputFiles({ name: "checkout.folded", mimeType: "text/plain", buffer: Buffer.from(FOLDED) });
      // One file imported: its run opens by itself, on its flame graph.
      await page.waitForURL(/\/runs\/run_\w+$/, { timeout: 30_000 });
      expect(await page.locator("[data-testid=run-title]").innerText()).toBe("checkout.folded");
      await page.locator("[data-testid=flame-canvas]").first().waitFor({ timeout: 30_000 });
      await page.goBack();
      await page.locator("[data-testid=import-dropzone]").waitFor();
      await expect.poll(() => page.locator("[data-testid=runs-table] tbody tr").count(), { timeout: 15_000 }).toBe(1);
      expect(await page.locator("[data-testid=runs-table] tbody tr").first().innerText()).toContain("checkout.folded");

      // Drag and drop: a real DataTransfer carrying a File, dropped on the zone. The run page's
      // answer is held past the home page's poll: the poll, seeing the import, must not refresh
      // (a refresh queued behind the navigation renders the run page a second time).
      const runPageAsked: string[] = [];
      await page.route(/\/runs\/run_\w+\?_rsc=/, async (route) => {
        runPageAsked.push(route.request().url());
        if (runPageAsked.length === 1) await new Promise((r) => setTimeout(r, 2_500));
        await route.continue();
      });
      await page.locator("[data-testid=import-dropzone]").evaluate((zone, text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], "dropped.folded", { type: "text/plain" }));
        zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true, cancelable: true }));
        zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
      }, "main;a 1\nmain;b 2\n");
      await page.waitForURL(/\/runs\/run_\w+$/, { timeout: 30_000 });
      expect(await page.locator("[data-testid=run-title]").innerText()).toBe("dropped.folded");
      await page.locator("[data-testid=flame-canvas]").first().waitFor({ timeout: 30_000 });
      expect(runPageAsked).toHaveLength(1);
      await page.unroute(/\/runs\/run_\w+\?_rsc=/);
      await page.goBack();
      await page.locator("[data-testid=import-dropzone]").waitFor();
      await expect.poll(() => page.locator("[data-testid=runs-table] tbody tr").count(), { timeout: 15_000 }).toBe(2);
      expect(await page.locator("[data-testid=runs-table] tbody tr").first().innerText()).toContain("dropped.folded");
      const runs = await callService(listRuns, ctxFor(root), { limit: 10 });
      expect(runs.items.map((r) => r.title).sort()).toEqual(["checkout.folded", "dropped.folded"]);

      // A file that is no profile: the typed error and what to do.
      await page.locator("[data-testid=import-file-input]").setInputFiles({ name: "notes.bin", mimeType: "application/octet-stream", buffer: Buffer.from([0, 1, 2, 3, 250, 251]) });
      await page.locator("[data-testid=import-status][data-phase=failed]").waitFor({ timeout: 30_000 });
      expect(await page.locator("[data-testid=import-status] [data-testid=error-panel]").innerText()).toMatch(/UNSUPPORTED_FORMAT|ARTIFACT_PARSE_FAILED/);
      await page.screenshot({ path: screenshotPath("home-imported"), fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 90_000);

  it("captures the bundled demo from the first-run state: plan shown for review, execute, progress, the run opens", async () => {
    const root = demoProject();
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 1000 } });
      await page.goto(server.url);
      const panel = page.locator("[data-testid=first-run] [data-testid=capture-panel]");
      expect(await panel.locator("h3").innerText()).toBe("Capture the bundled demo");
      expect(await panel.locator("[data-testid=capture-workload]").inputValue()).toBe("demo");
      expect(await panel.locator("[data-testid=capture-adapter]").inputValue()).toBe("node-cpuprofile");
      await panel.locator("[data-testid=capture-param-seconds]").fill("1");
      await panel.locator("[data-testid=capture-plan]").click();
      const review = panel.locator("[data-testid=capture-plan-review]");
      await review.waitFor({ timeout: 30_000 });
      const argv = await review.locator("[data-testid=capture-plan-argv]").innerText();
      expect(argv).toContain("app.js");
      expect(argv).toContain("--seconds 1");
      await page.screenshot({ path: screenshotPath("home-capture-plan"), fullPage: true });

      await review.locator("[data-testid=capture-execute]").click();
      await page.locator("[data-testid=capture-progress] [data-testid=operation-progress]").waitFor({ timeout: 20_000 });
      await page.screenshot({ path: screenshotPath("home-capture-progress") });
      await page.waitForURL(/\/runs\/run_[0-9a-z]+/, { timeout: 60_000 });
      const runId = /\/runs\/(run_[0-9a-z]+)/.exec(page.url())![1];
      const run = await callService(showRun, ctxFor(root), { run_id: runId });
      expect(run).toMatchObject({ kind: "capture", status: "succeeded", source: "node-cpuprofile" });
      expect(run.details.workload).toBe("demo");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 120_000);
});
