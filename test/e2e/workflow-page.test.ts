// /workflows/[id] in headless Chromium over a real `serve`: a workflow replayed (a controlled
// benchmark by a real pool worker), its tools' review and approval state with the fixing command,
// the runs with per-call replayed vs recorded times, the benchmark chart, and the DAG view with
// the service's critical-path figures.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { benchmarkWorkflow, callService, getCriticalPath, reviewTool } from "../../server/services";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer } from "../helpers/server";
import { workflowProject } from "../helpers/workflow-project";

describe("the workflow page", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("shows the DAG, contracts and policy, runs with replayed vs recorded times, and the benchmark chart", async () => {
    const p = workflowProject();
    const wf = await p.compile([
      { id: "a", tool: "lookup", arguments: { key: "alpha-key" }, result: { value: "value-of-alpha-key" }, start: 0, end: 120 },
      { id: "b", tool: "lookup", arguments: { key: "bravo-key" }, result: { value: "value-of-bravo-key" }, start: 120, end: 240 },
      { id: "c", tool: "record", side_effect: "write", arguments: { value: "value-of-alpha-key", other: "value-of-bravo-key" }, result: { written: true }, start: 250, end: 300, after: ["a", "b"] },
    ]);
    await callService(reviewTool, p.ctx(), { tool: "lookup", side_effect: "read" });
    await callService(reviewTool, p.ctx(), { tool: "record", side_effect: "write" });
    const bench = await callService(benchmarkWorkflow, p.ctx(), { workflow_id: wf, mode: "controlled", repetitions: 3 });
    expect((await p.settle(bench.operation.operation_id)).state).toBe("succeeded");
    const figures = await callService(getCriticalPath, p.ctx(), { workflow_id: wf });

    const server = await startServer(p.root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1400, height: 1400 } });
      await page.goto(`${server.url}/workflows/${wf}`);
      await page.locator("[data-testid=workflow-title]").waitFor();
      expect(await page.locator("[data-testid=policy-lookup]").innerText()).toMatch(/lookup\s+2\s+read\s+registered\s+reviewed\s+—\s+ok/);
      const record = await page.locator("[data-testid=policy-record]").innerText();
      expect(record).toContain("APPROVAL_REQUIRED");
      expect(record).toContain(`emberscope workflows approve ${wf} record`);
      expect(await page.locator("[data-testid=workflow-runs]").innerText()).toMatch(/benchmark\s+controlled\s+succeeded/);
      await expect.poll(() => page.locator("[data-testid=benchmark-chart] circle").count()).toBe(3);
      expect(await page.locator("[data-testid=benchmark-chart] figcaption").innerText()).toContain(`bound`);
      const rows = await page.locator("[data-testid=workflow-run-nodes] tbody tr").allInnerTexts();
      expect(rows).toHaveLength(3);
      // Recorded 120 ms for each lookup; replayed in controlled mode ≈ the same.
      for (const row of rows.filter((r) => r.includes("lookup"))) {
        const [recorded, replayed] = [...row.matchAll(/([\d.]+) ms/g)].map((m) => Number(m[1]));
        expect(recorded).toBe(120);
        expect(replayed).toBeGreaterThanOrEqual(119);
        expect(replayed).toBeLessThan(200);
      }
      // The DAG view computes the stored workflow's critical path in the page: the service's figures.
      await page.locator("[data-testid=cp-figures]").waitFor();
      expect(await page.locator("[data-testid=dag-node]").count()).toBe(3);
      expect(Number(await page.locator("[data-testid=fig-critical]").getAttribute("data-ns"))).toBe(figures.critical_path_ns);
      expect(Number(await page.locator("[data-testid=fig-sequential]").getAttribute("data-ns"))).toBe(figures.sequential_ns);
      await page.screenshot({ path: screenshotPath("workflow-page"), fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 180_000);
});
