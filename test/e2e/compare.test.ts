import { rmSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffFlameTrees } from "../../analysis/flame/diff";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { callService, compareRuns, flameTree, runCapture, type ServiceContext } from "../../server/services";
import { launchChromium, screenshotPath, newWatchedPage } from "../helpers/browser";
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

  it("shows countPrimes as shrunk and hashStrings as grown, in the table and the graph", async () => {
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
  }, 60_000);
});
