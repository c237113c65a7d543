// An experiment in a notebook (real captures under `measure` by the pool, a real server on
// loopback, real Chromium): the cell shows the stored decision, ratio and CI, and the three
// pictures — one point per block in the deltas, one per trial in run order, one strip per variant.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCell, callService, createInvestigation, planExperiment, runExperiment, showExperiment, showOperation, type ServiceContext } from "../../server/services";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { demoProject, waitFor } from "../helpers/demo";
import { startServer, type RunningServer } from "../helpers/server";

describe("an experiment cell in the notebook", () => {
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

  it("shows the decision with its CI and the deltas, run-order and distribution pictures", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Is batch-heavy slower?" });
    const plan = await callService(planExperiment, ctx, {
      investigation_id: inv.investigation_id,
      variants: [
        { name: "base", workload: "demo", parameters: { mode: "batch" } },
        { name: "heavy", workload: "demo", parameters: { mode: "batch-heavy" } },
      ],
      metric: "cpu_ns",
      trials: 4,
      warmups: 0,
      seed: 5,
    });
    const started = await callService(runExperiment, ctx, { plan_token: plan.plan_token, idempotency_key: "cell" });
    await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (op) => ["succeeded", "failed", "cancelled"].includes(op.state), 240_000, 250);
    const shown = await callService(showExperiment, ctx, { experiment_id: started.experiment_id });
    const [comparison] = shown.experiment.analysis!.comparisons;
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "experiment", content: { experiment_id: started.experiment_id } });

    const { page, errors } = await newWatchedPage(browser);
    await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
    const cell = page.locator("[data-testid=experiment-cell]");
    await cell.waitFor();
    expect(await cell.locator("[data-testid=experiment-state]").innerText()).toBe("completed");
    const decision = await cell.locator("[data-testid=experiment-decisions] li").innerText();
    expect(decision).toContain(comparison.decision.replaceAll("_", " "));
    expect(decision).toContain(`CI ${comparison.ci![0].toFixed(3)}–${comparison.ci![1].toFixed(3)}`);
    expect(await cell.locator("[data-testid=experiment-deltas] circle").count()).toBe(comparison.pairs);
    expect(await cell.locator("[data-testid=experiment-run-order] circle").count()).toBe(shown.counts.ok);
    expect(await cell.locator("[data-testid=experiment-distribution] g > circle").count()).toBe(shown.counts.ok);
    const compare = await cell.locator("[data-testid=experiment-compare]").getAttribute("href");
    expect(compare).toMatch(/^\/compare\?base=run_[0-9a-z]+&candidate=run_[0-9a-z]+$/);
    await page.screenshot({ path: screenshotPath("experiment-cell"), fullPage: true });
    expect(errors).toEqual([]);
  }, 300_000);
});
