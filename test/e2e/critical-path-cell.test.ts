// A critical-path cell in a notebook (real server on loopback, real Chromium): an imported Claude
// Code session's critical path, with the figures critical_path.get gives, a what-if kept in the
// cell, and a Jaeger trace's per-operation table.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatValue } from "../../analysis/flame/format";
import { addCell, callService, createInvestigation, getCriticalPath, importArtifact, listCells, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-traces");

describe("a critical-path cell in the notebook", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  let session: { run_id: string; commit_id: string };
  let jaeger: { run_id: string; commit_id: string };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-cp-cell-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    for (const name of ["claude-code-session.jsonl", "jaeger-checkout.json"]) copyFileSync(path.join(FIXTURES, name), path.join(root, name));
    session = await callService(importArtifact, ctx, { path: "claude-code-session.jsonl" });
    jaeger = await callService(importArtifact, ctx, { path: "jaeger-checkout.json" });
    server = await startServer(root);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("shows the service's figures and path, and keeps a what-if in the cell", async () => {
    const inv = await callService(createInvestigation, ctx, { title: "Where does the session wait?" });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "critical_path", content: { run_id: session.run_id } });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "critical_path", content: { run_id: jaeger.run_id } });
    const expected = await callService(getCriticalPath, ctx, { run_id: session.run_id, commit_id: session.commit_id });
    const { page, errors } = await newWatchedPage(browser);
    await page.goto(`${server.url}/investigations/${inv.investigation_id}`);
    const cells = page.locator("[data-testid=critical-path-cell]");
    await expect.poll(() => cells.count()).toBe(2);
    const first = cells.nth(0);
    expect(await first.locator("[data-testid=cp-sequential]").innerText()).toBe(formatValue(expected.sequential_ns, "ns"));
    expect(await first.locator("[data-testid=cp-length]").innerText()).toBe(formatValue(expected.critical_path_ns, "ns"));
    expect(await first.locator("[data-testid=cp-bound]").innerText()).toBe(`${expected.speedup_bound.toFixed(2)}×`);
    const ids = await first.locator("[data-testid=cp-path] tbody tr td:first-child").allInnerTexts();
    expect(ids).toEqual(expected.path.map((p) => p.id));
    expect(ids).toEqual(["n2", "n3", "n5", "n6", "n4", "n7"]);

    // What if the Task (n4, own 3.5 s) took 500 ms: 1000 + 150 + 400 + 100 + 500 + 300.
    await first.locator("summary", { hasText: "Least slack first" }).click();
    await first.locator("select[aria-label=node]").selectOption("n4");
    await first.locator("input[aria-label=milliseconds]").fill("500");
    await first.locator("button", { hasText: "Recompute" }).click();
    await expect.poll(() => first.locator("[data-testid=cp-length]").innerText()).toBe(formatValue(2450e6, "ns"));
    await expect
      .poll(async () => (await callService(listCells, ctx, { investigation_id: inv.investigation_id })).items[0].content)
      .toEqual({ run_id: session.run_id, what_if: { node: "n4", duration_ms: 500 } });

    const second = cells.nth(1);
    await second.locator("summary", { hasText: "Per operation" }).click();
    expect(await second.locator("[data-testid=cp-length]").innerText()).toBe(formatValue(120e6, "ns"));
    expect(await second.locator("table >> text=SendReceipt").count()).toBe(1);
    await page.screenshot({ path: screenshotPath("critical-path-cell.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});
