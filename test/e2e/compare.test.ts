import { rmSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffFlameTrees } from "../../analysis/flame/diff";
import { formatValue } from "../../analysis/flame/format";
import type { CompareRow } from "../../analysis/queries/compare";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { callService, compareRuns, flameTree, runCapture, type ServiceContext } from "../../server/services";
import { launchChromium, screenshotPath, newWatchedPage, rowShape } from "../helpers/browser";
import { demoProject } from "../helpers/demo";
import { startServer, type RunningServer } from "../helpers/server";

/** Hovers the centre of the named frame in the differential graph and returns the tooltip's change line. */
async function hoverChange(page: Page, base: any, candidate: any, from: "base" | "candidate", name: string): Promise<string> {
  const diff = diffFlameTrees(base.nodes, candidate.nodes, from);
  const tree = buildFlameTree(diff.nodes);
  const layout = layoutFlame(tree);
  // The widest node of that function.
  let i = -1;
  for (let k = 1; k < tree.count; k++) if (tree.names[k] === name && (i < 0 || layout.w[k] > layout.w[i])) i = k;
  expect(i, `${name} is drawn from the ${from}`).toBeGreaterThan(0);
  const box = (await page.locator("[data-testid=compare-flame] [data-testid=flame-canvas]").boundingBox())!;
  await page.mouse.move(box.x + (layout.x[i] + layout.w[i] / 2) * box.width, box.y + tree.depth[i] * ROW_HEIGHT + ROW_HEIGHT / 2);
  const tip = page.locator("[data-testid=flame-tooltip]");
  await tip.waitFor();
  expect(await tip.locator("[data-testid=tooltip-name]").innerText()).toBe(name);
  return tip.locator("[data-testid=diff-change]").innerText();
}

describe("compare page: differential flame graph of two captures of the demo", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  let primes: string;
  let hash: string;

  beforeAll(async () => {
    root = demoProject();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    primes = (await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 1, mode: "primes" } })).run_id;
    hash = (await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 1, mode: "hash" } })).run_id;
    server = await startServer(root);
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("shows countPrimes as shrunk and hashStrings as grown, in the table and the graph; self and total agree between them", async () => {
    const expected = await callService(compareRuns, ctx, { base_run_id: primes, candidate_run_id: hash });
    const base = await callService(flameTree, ctx, { run_id: primes });
    const candidate = await callService(flameTree, ctx, { run_id: hash });
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/compare?base=${primes}&candidate=${hash}`);
    await page.locator("[data-testid=compare-table]").waitFor();
    expect(await page.locator("[data-testid=view-commit]").innerText()).toBe(expected.commit_id);
    expect(await page.locator("[data-testid=diff-legend]").innerText()).toMatch(/blue = shrank.*red = grew/s);
    const rows = page.locator("[data-testid=compare-row]");
    expect(await rows.count()).toBe(expected.rows.length);
    expect(await page.locator('[data-testid=compare-row][data-name="countPrimes"]').getAttribute("data-direction")).toBe("shrank");
    expect(await page.locator('[data-testid=compare-row][data-name="hashStrings"]').getAttribute("data-direction")).toBe("grew");
    // The table's order is the server's (largest change first).
    expect(await rows.first().getAttribute("data-name")).toBe(expected.rows[0].name);

    expect(await hoverChange(page, base, candidate, "candidate", "hashStrings")).toMatch(/^grew \+/);
    await page.screenshot({ path: screenshotPath("compare-candidate"), fullPage: true });

    // countPrimes vanished from the candidate: only the base's widths show it.
    await page.locator("[data-testid=from-base]").click();
    await expect.poll(() => new URL(page.url()).searchParams.get("from")).toBe("base");
    await page.mouse.move(2, 2);
    expect(await hoverChange(page, base, candidate, "base", "countPrimes")).toMatch(/^shrank −/);
    await page.screenshot({ path: screenshotPath("compare-base"), fullPage: true });

    await page.locator("[data-testid=normalize-toggle]").check();
    await expect.poll(() => page.locator('[data-testid=compare-row][data-name="countPrimes"]').innerText()).toContain("pts");
    expect(errors).toEqual([]);
    await page.close();

    // Self and total side by side, labelled, with the same numbers in the table and the tooltip.
    // (One test: the demo project's directory is removed after each test.)
    await tableAgreesWithTooltip(expected, base, candidate);
  }, 90_000);

  async function tableAgreesWithTooltip(expected: { rows: CompareRow[]; unit: string | null; metric: string | null }, base: unknown, candidate: unknown) {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/compare?base=${primes}&candidate=${hash}`);
    await page.locator("[data-testid=compare-table]").waitFor();
    // Labelled groups: Self and Total, each with base, candidate, change and relative change.
    expect(await page.locator("[data-testid=compare-table] thead").innerText()).toMatch(/Self[\s\S]*Total \(inclusive\)/i);
    // A function on both sides whose self value changed (drawn in the candidate's widths).
    const row = expected.rows.find((r) => r.status === "changed" && r.candidate_total > 0 && r.base_total > 0)!;
    expect(row, "a function present in both runs changed").toBeDefined();
    // The server's total change is the total's, not the self's, beside it.
    expect(row.total_delta).toBe(row.candidate_total - row.base_total);
    const cells = page.locator(`[data-testid=compare-row][data-frame-key="${row.frame_key}"]`);
    const table: Record<string, string> = {};
    for (const part of ["self", "total"]) for (const field of ["base", "candidate", "change", "relative"]) table[`${part}-${field}`] = await cells.locator(`[data-testid=compare-${part}-${field}]`).innerText();
    expect(table["total-base"]).toBe(formatValue(row.base_total, expected.unit, expected.metric));
    expect(table["total-candidate"]).toBe(formatValue(row.candidate_total, expected.unit, expected.metric));
    expect(table["self-candidate"]).toBe(formatValue(row.candidate_self, expected.unit, expected.metric));

    await hoverChange(page, base, candidate, "candidate", row.name);
    const tip = page.locator("[data-testid=flame-tooltip]");
    expect(await tip.innerText()).toMatch(/function, all call paths/i);
    const shown: Record<string, string> = {};
    for (const part of ["self", "total"]) for (const field of ["base", "candidate", "change", "relative"]) shown[`${part}-${field}`] = await tip.locator(`[data-testid=diff-fn-${part}-${field}]`).innerText();
    expect(shown).toEqual(table);
    // The call path's own self and total are labelled too.
    expect(await tip.locator("[data-testid=diff-node-self] th").innerText()).toBe("self");
    expect(await tip.locator("[data-testid=diff-node-total] th").innerText()).toBe("total");
    await page.screenshot({ path: screenshotPath("compare-tooltip"), fullPage: true });

    // At 1024 px the table, with the demo's long file URLs, stays inside its column: the function column ellipsizes and keeps the full name and file in its title.
    await page.mouse.move(2, 2);
    await page.setViewportSize({ width: 1024, height: 900 });
    // The run pickers' form is one row at 1024 px (the pickers' titles ellipsize instead of the candidate moving down).
    const rows = await rowShape(page.locator("form.compare-form"));
    expect(rows.spread).toBeLessThanOrEqual(4);
    expect(rows.height).toBeLessThanOrEqual(40);
    expect(rows.overflow).toBeLessThanOrEqual(0);
    const fit = await page.locator("[data-testid=compare-table]").evaluate((t) => ({ over: t.getBoundingClientRect().right - t.parentElement!.getBoundingClientRect().right, page: document.documentElement.scrollWidth - document.documentElement.clientWidth }));
    expect(fit).toEqual({ over: expect.toSatisfy((x: number) => x <= 1), page: 0 });
    const fn = cells.locator("td.fn");
    expect(await fn.getAttribute("title")).toBe(row.file ? `${row.name}\n${row.file}` : row.name);
    // Some function cell is cut (the demo's file URLs are longer than the column), and none spills over the numbers.
    const clipped = await page.locator("[data-testid=compare-table] td.fn").evaluateAll((tds) => tds.filter((td) => td.scrollWidth > td.clientWidth).length);
    expect(clipped).toBeGreaterThan(0);
    await page.screenshot({ path: screenshotPath("compare-table-1024"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }
});
