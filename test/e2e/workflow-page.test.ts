// /workflows/[id] in headless Chromium over a real `serve`: a workflow replayed (a controlled
// benchmark by a real pool worker), its tools' review and approval state with the fixing command,
// the runs with per-call replayed vs recorded times, the benchmark chart, and the DAG view with
// the service's critical-path figures.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { benchmarkWorkflow, callService, getCriticalPath, listAuditEvents, listExposedWorkflows, reviewTool } from "../../server/services";
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

  it("lets the signed-in person review a contract, approve a write and expose or withdraw a read-only workflow with buttons; locked without the person's session", async () => {
    const p = workflowProject();
    const reads = await p.compile(
      [
        { id: "l1", tool: "lookup", arguments: { key: "alpha-key" }, result: { value: "value-of-alpha-key" }, start: 0, end: 20 },
        { id: "l2", tool: "lookup", arguments: { key: "value-of-alpha-key" }, result: { value: "value-of-value-of-alpha-key" }, start: 30, end: 50 },
      ],
      { key: "alpha-key" },
    );
    const writes = await p.compile([
      { id: "c1", tool: "lookup", arguments: { key: "bravo-key" }, result: { value: "value-of-bravo-key" }, start: 0, end: 20 },
      { id: "c2", tool: "record", side_effect: "write", arguments: { value: "value-of-bravo-key" }, result: { written: true }, start: 30, end: 40, after: ["c1"] },
    ]);
    const server = await startServer(p.root, ["--workers", "0"]);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1400, height: 1000 } });
      const row = (tool: string) => page.locator(`[data-testid=policy-${tool}]`);
      // Not signed in: the acts are shown but locked, with how to sign in.
      await page.goto(`${server.url}/workflows/${reads}`);
      await page.locator("[data-testid=workflow-sign-in]").waitFor();
      expect(await page.locator("[data-testid=review-read-lookup]").isDisabled()).toBe(true);
      expect(await page.locator("[data-testid=expose-workflow]").isDisabled()).toBe(true);

      await page.goto(server.signInUrl);
      await page.goto(`${server.url}/workflows/${reads}`);
      expect(await page.locator("[data-testid=workflow-sign-in]").count()).toBe(0);
      expect(await row("lookup").innerText()).toContain("unreviewed");
      await page.locator("[data-testid=review-read-lookup]").click();
      await expect.poll(() => row("lookup").innerText(), { timeout: 15_000 }).toMatch(/registered\s+reviewed/);
      await page.locator("[data-testid=expose-workflow]").click();
      const tool = `workflow_${reads.slice(3)}`;
      await expect.poll(() => page.locator("[data-testid=exposure-state]").innerText(), { timeout: 15_000 }).toContain(`exposed as ${tool}`);
      await page.screenshot({ path: screenshotPath("workflow-page-exposed"), fullPage: true });
      expect((await callService(listExposedWorkflows, p.ctx(), { workflow_id: reads })).exposures[0]).toMatchObject({ tool, state: "exposed", current: true, changed_by: "web" });
      await page.locator("[data-testid=withdraw-workflow]").click();
      await expect.poll(() => page.locator("[data-testid=exposure-state]").innerText(), { timeout: 15_000 }).toContain("not exposed (withdrawn");

      // A workflow that writes: the person reviews and approves the write; exposing it is refused, and the page says why.
      await page.goto(`${server.url}/workflows/${writes}`);
      await page.locator("[data-testid=review-write-record]").click();
      await expect.poll(() => row("record").innerText(), { timeout: 15_000 }).toMatch(/write\s+registered\s+reviewed\s+no/);
      await page.locator("[data-testid=approve-record]").click();
      await expect.poll(() => row("record").innerText(), { timeout: 15_000 }).toMatch(/reviewed\s+yes\s+ok/);
      await page.locator("[data-testid=expose-workflow]").click();
      await expect.poll(() => page.locator("[data-testid=expose-workflow-error]").innerText(), { timeout: 15_000 }).toContain("WORKFLOW_NOT_READ_ONLY");
      await page.screenshot({ path: screenshotPath("workflow-page-acts"), fullPage: true });

      const audit = (await callService(listAuditEvents, p.ctx(), { limit: 50 })).items.filter((e) => e.actor === "web").map((e) => e.action);
      expect(audit).toEqual(expect.arrayContaining(["tools.review", "workflows.expose", "workflows.withdraw", "workflows.approve"]));
      // The refused exposure's 403 is the only failed request the page made.
      expect(errors.filter((e) => !/403|Forbidden/.test(e))).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 180_000);
});
