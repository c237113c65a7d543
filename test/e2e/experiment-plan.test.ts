// Planning an experiment from a notebook (real server on loopback, real Chromium, real captures of
// the demo workload by the pool): the form, the review of every trial's command line in block
// order before anything runs, Run, the cell appearing with its progress, the result, and Cancel.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callService, createInvestigation, listExperiments, listOperations, showExperiment, type ServiceContext } from "../../server/services";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { demoProject } from "../helpers/demo";
import { startServer, type RunningServer } from "../helpers/server";

/** Fills the form: two variants of the demo workload in the given modes, measure on cpu_ns. */
async function fillForm(page: Page, design: { title: string; trials: number; warmups: number; seed: number }) {
  await page.click("[data-testid=add-experiment]");
  const form = page.locator("[data-testid=experiment-form]");
  await form.locator("[data-testid=experiment-variant-0-workload]").waitFor();
  await form.locator("[data-testid=experiment-title]").fill(design.title);
  await form.locator("[data-testid=experiment-variant-0-workload]").selectOption("demo");
  await form.locator("[data-testid=experiment-variant-1-workload]").selectOption("demo");
  await form.locator("[data-testid=experiment-variant-0-name]").fill("base");
  await form.locator("[data-testid=experiment-variant-1-name]").fill("heavy");
  await form.locator("[data-testid=experiment-variant-0-param-mode]").fill("batch");
  await form.locator("[data-testid=experiment-variant-1-param-mode]").fill("batch-heavy");
  await form.locator("[data-testid=experiment-adapter]").selectOption("measure");
  await form.locator("[data-testid=experiment-metric]").selectOption("cpu_ns");
  await form.locator("[data-testid=experiment-trials]").fill(String(design.trials));
  await form.locator("[data-testid=experiment-warmups]").fill(String(design.warmups));
  await form.locator("[data-testid=experiment-seed]").fill(String(design.seed));
  await form.locator("[data-testid=experiment-plan]").click();
  await form.locator("[data-testid=experiment-plan-review]").waitFor();
  return form;
}

describe("planning an experiment from a notebook", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;

  beforeAll(async () => {
    root = demoProject();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    server = await startServer(root);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("reviews every trial's command line in block order, runs, shows progress in the new cell and then the decision; Cancel stops another", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Is batch-heavy slower?" });
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
    await page.locator("[data-testid=notebook]").waitFor();

    const form = await fillForm(page, { title: "batch vs batch-heavy", trials: 3, warmups: 1, seed: 9 });
    // The review lists all 8 trials (4 blocks × 2 variants, the warm-up block first) before anything ran.
    const rows = await form.locator("[data-testid=experiment-plan-trials] tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
    expect(rows).toHaveLength(8);
    expect(rows.map((r) => r[0])).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
    expect(rows.slice(0, 2).every((r) => r[1].startsWith("warm-up"))).toBe(true);
    for (let block = 0; block < 4; block++) expect(rows.slice(block * 2, block * 2 + 2).map((r) => r[2]).sort()).toEqual(["base", "heavy"]);
    for (const r of rows) expect(r[3]).toBe(`node app.js --seconds 1.5 --mode ${r[2] === "base" ? "batch" : "batch-heavy"}`);
    expect(await form.locator("[data-testid=experiment-run]").innerText()).toBe("Run 8 trials");
    const [planned] = (await callService(listExperiments, ctx, { investigation_id: inv.investigation_id })).items;
    expect(planned.state).toBe("planned");
    expect((await callService(listOperations, ctx, { limit: 10 })).items.filter((o) => o.kind === "experiment")).toEqual([]);
    // The review's order is the stored plan's order.
    const stored = await callService(showExperiment, ctx, { experiment_id: planned.experiment_id });
    expect(rows.map((r) => r[2])).toEqual(stored.trials.map((t) => t.variant));
    await page.screenshot({ path: screenshotPath("experiment-plan-review"), fullPage: true });

    await form.locator("[data-testid=experiment-run]").click();
    const cell = page.locator("[data-testid=experiment-cell]");
    await cell.waitFor();
    expect(await page.locator("[data-testid=experiment-form]").count()).toBe(0);
    const progress = cell.locator("[data-testid=experiment-progress]");
    // The operation is queued before the pool takes it; its count of trials shows once it runs.
    await progress.getByText(/\d+\/8/).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: screenshotPath("experiment-plan-running"), fullPage: true });

    await cell.locator("[data-testid=experiment-state]", { hasText: "completed" }).waitFor({ timeout: 180_000 });
    await cell.locator("[data-testid=experiment-decisions]").waitFor();
    const shown = await callService(showExperiment, ctx, { experiment_id: planned.experiment_id });
    const [comparison] = shown.experiment.analysis!.comparisons;
    expect(await cell.locator("[data-testid=experiment-decision]").innerText()).toBe(comparison.decision.replaceAll("_", " "));
    expect(await cell.locator("[data-testid=experiment-deltas] circle").count()).toBe(comparison.pairs);
    expect(await cell.locator("[data-testid=experiment-progress]").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("experiment-plan-done"), fullPage: true });

    // A second experiment, cancelled from its cell while it runs (one test: the project lives for one test).
    const second = await fillForm(page, { title: "to cancel", trials: 20, warmups: 0, seed: 3 });
    await second.locator("[data-testid=experiment-run]").click();
    const cancelCell = page.locator("[data-testid=experiment-cell]").nth(1);
    await cancelCell.locator("[data-testid=experiment-cancel]").click({ timeout: 30_000 });
    await cancelCell.locator("[data-testid=experiment-state]", { hasText: "cancelled" }).waitFor({ timeout: 60_000 });
    await cancelCell.locator("[data-testid=experiment-resume]").waitFor();
    const experiment = (await callService(listExperiments, ctx, { investigation_id: inv.investigation_id })).items.find((e) => e.title === "to cancel")!;
    const stopped = await callService(showExperiment, ctx, { experiment_id: experiment.experiment_id });
    expect(stopped.experiment.state).toBe("cancelled");
    expect(stopped.operation?.state).toBe("cancelled");
    expect(stopped.counts.pending).toBeGreaterThan(0);
    expect(stopped.counts.total).toBe(40);
    await page.screenshot({ path: screenshotPath("experiment-plan-cancelled"), fullPage: true });
    expect(errors).toEqual([]);
  }, 420_000);
});
