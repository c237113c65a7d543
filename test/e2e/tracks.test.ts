import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatValue } from "../../analysis/flame/format";
import { calleesQuery, flameTreeQuery, hotspotsQuery, renderSql, type EvidenceQuery } from "../../analysis/queries";
import { scopeToTracks } from "../../analysis/queries/tracks";
import { openEvidence } from "../../server/evidence/engine";
import { callService, importArtifact, showInvestigation, summarizeRun, type ServiceContext } from "../../server/services";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { ROW_HEIGHT } from "../../components/flame/constants";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures");
const SYSTEM_WIDE = path.join(FIXTURES, "tracks", "perf-system-wide.txt");
const TWO_PROFILES = path.join(FIXTURES, "tracks", "two-profiles.speedscope.json");
const CHROME_WORKER = path.join(FIXTURES, "peer", "Chrome", "66", "worker.json");

/**
 * The independent reader: `perf script` text's sample header lines (`comm pid/tid [cpu] time:
 * period event:`, each followed by its indented call chain), counted per process.
 */
function perfSamplesByProcess(text: string): Map<string, { comm: string; samples: number; threads: Set<string> }> {
  const byPid = new Map<string, { comm: string; samples: number; threads: Set<string> }>();
  for (const line of text.split("\n")) {
    const header = /^(\S.*?)\s+(\d+)\/(\d+)\s+\[\d+\]/.exec(line);
    if (!header) continue;
    const [, comm, pid, tid] = header;
    const p = byPid.get(pid) ?? { comm, samples: 0, threads: new Set<string>() };
    p.samples++;
    p.threads.add(tid);
    byPid.set(pid, p);
  }
  return byPid;
}

/** speedscope's own reading of a profile's weight: sampled → the sum of its weights; evented → its outermost frames' open time. */
function speedscopeProfileTotals(file: string): Map<string, number> {
  const doc = JSON.parse(readFileSync(file, "utf8")) as { profiles: { name: string; type: string; weights?: number[]; events?: { type: string; at: number }[] }[] };
  const totals = new Map<string, number>();
  for (const p of doc.profiles) {
    if (p.type === "sampled") totals.set(p.name, p.weights!.reduce((a, b) => a + b, 0));
    else {
      let depth = 0;
      let openedAt = 0;
      let sum = 0;
      for (const e of p.events!) {
        if (e.type === "O" && depth++ === 0) openedAt = e.at;
        if (e.type === "C" && --depth === 0) sum += e.at - openedAt;
      }
      totals.set(p.name, sum);
    }
  }
  return totals;
}

/** The flame graph's total: the tooltip of its root row ("all"). */
async function flameTotal(page: Page): Promise<string> {
  const canvas = page.locator("[data-testid=flame-canvas]").first();
  await canvas.waitFor();
  const box = (await canvas.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + ROW_HEIGHT / 2);
  const tip = page.locator("[data-testid=flame-tooltip]");
  await tip.waitFor();
  const total = await tip.locator("[data-testid=tooltip-total]").innerText();
  await page.mouse.move(2, 2);
  return total;
}

/** The selector's closed face, as one line. */
async function selectorText(page: Page): Promise<string> {
  return ((await page.locator("[data-testid=track-summary]").textContent()) ?? "").replace(/\s+/g, " ").trim();
}

/** Polls the flame total until it settles on the expected text (a new selection refetches). */
async function expectFlameTotal(page: Page, expected: string) {
  await expect.poll(() => flameTotal(page), { timeout: 30_000 }).toBe(expected);
}

describe("threads, processes and profiles: the track selector of every sample view", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let ctx: ServiceContext;
  const runs: Record<string, string> = {};

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-tracks-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    for (const [name, file] of Object.entries({ perf: SYSTEM_WIDE, speedscope: TWO_PROFILES, chrome: CHROME_WORKER })) {
      const copy = path.join(root, path.basename(file));
      copyFileSync(file, copy);
      runs[name] = (await callService(importArtifact, ctx, { path: copy })).run_id;
    }
    server = await startServer(root);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a system-wide perf capture opens on its busiest process alone; its flame total is that process's samples; all, one process and several threads round-trip through the URL", async () => {
    const counts = perfSamplesByProcess(readFileSync(SYSTEM_WIDE, "utf8"));
    const processes = [...counts.entries()].sort((a, b) => b[1].samples - a[1].samples);
    const [busyPid, busy] = processes.find(([, p]) => p.comm === "busy")!;
    // The workload is one thread, and the busiest thread of the capture (node's processes have more samples, over several threads).
    expect(busy.threads.size).toBe(1);
    const perThread = new Map<string, number>();
    for (const line of readFileSync(SYSTEM_WIDE, "utf8").split("\n")) {
      const m = /^\S.*?\s+\d+\/(\d+)\s+\[\d+\]/.exec(line);
      if (m) perThread.set(m[1], (perThread.get(m[1]) ?? 0) + 1);
    }
    expect(Math.max(...perThread.values())).toBe(busy.samples);
    expect([...perThread.values()].filter((n) => n === busy.samples)).toHaveLength(1);
    const allSamples = processes.reduce((sum, [, p]) => sum + p.samples, 0);
    const samples = (n: number) => formatValue(n, "count", "samples");

    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${runs.perf}`);
    const summary = page.locator("[data-testid=track-summary]");
    await expect.poll(() => selectorText(page), { timeout: 30_000 }).toBe(`Tracks: busy · pid ${busyPid} (busiest)`);
    await expectFlameTotal(page, samples(busy.samples));
    expect(new URL(page.url()).searchParams.get("tracks")).toBeNull();
    await summary.click();
    await page.screenshot({ path: screenshotPath("tracks-perf-system-wide-1440") });

    // Every track merged: the whole capture.
    await page.locator("[data-testid=track-all]").click();
    await expect.poll(() => new URL(page.url()).searchParams.get("tracks")).toBe("all");
    await expectFlameTotal(page, samples(allSamples));

    // One process of several threads, by its name: its threads' samples.
    const [nodePid, node] = processes.find(([, p]) => p.comm === "node" && p.threads.size > 1)!;
    await summary.click();
    await page.locator(`[data-testid=track-process-only-pid\\:${nodePid}]`).click();
    await expectFlameTotal(page, samples(node.samples));
    await expect.poll(() => selectorText(page)).toBe(`Tracks: ${node.threads.size} of ${processes.reduce((n, [, p]) => n + p.threads.size, 0)} tracks`);
    const nodeUrl = page.url();
    expect(new URL(nodeUrl).searchParams.get("tracks")!.split(",")).toHaveLength(node.threads.size);

    // Several: add the busy process to them with its box.
    await summary.click();
    const busyKey = (await callService(summarizeRun, ctx, { run_id: runs.perf })).sampled_tracks.find((t) => t.process_id === busyPid)!.track_key;
    await page.locator(`[data-testid=track-check-${busyKey}]`).check();
    await expectFlameTotal(page, samples(node.samples + busy.samples));
    expect(new URL(page.url()).searchParams.get("tracks")!.split(",")).toContain(busyKey);

    // A copied link reproduces a selection; the sandwich and the call tree read the same one.
    const again = await browser.newPage({ viewport: { width: 1024, height: 800 } });
    await again.goto(nodeUrl);
    await expectFlameTotal(again, samples(node.samples));
    await again.locator("[data-testid=track-summary]").click();
    await again.screenshot({ path: screenshotPath("tracks-perf-system-wide-1024") });
    await again.locator("[data-testid=track-summary]").click();
    await again.locator("[data-testid=tab-sandwich]").click();
    await expect.poll(() => selectorText(again)).toContain(`${node.threads.size} of`);
    await again.locator("[data-testid=tab-calltree]").click();
    await expect.poll(() => selectorText(again)).toContain(`${node.threads.size} of`);
    expect(new URL(again.url()).searchParams.get("tracks")).toBe(new URL(nodeUrl).searchParams.get("tracks"));
    await again.screenshot({ path: screenshotPath("tracks-calltree-1024") });
    await again.close();

    // Time order follows the selection (one process's samples ordered, no per-thread picker).
    await page.goto(`${server.url}/runs/${runs.perf}?mode=time-order`);
    await expect.poll(() => page.locator("[data-testid=flame-canvas]").getAttribute("data-mode"), { timeout: 30_000 }).toBe("time-order");
    await expect.poll(() => page.locator("[data-testid=time-order-note]").innerText()).toContain(`${busy.samples} samples merged`);
    expect(await page.locator("[data-testid=time-order-thread]").count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);

  it("a speedscope file of two profiles opens on the busier one, not the first; the other is one click away", async () => {
    const totals = speedscopeProfileTotals(TWO_PROFILES);
    const [busier, lighter] = [...totals.entries()].sort((a, b) => b[1] - a[1]);
    expect(busier[0]).toBe("Worker"); // the file's activeProfileIndex names the main thread: not what opens
    const ms = (v: number) => formatValue(v * 1e6, "ns", "wall_ns");
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${server.url}/runs/${runs.speedscope}`);
    const summary = page.locator("[data-testid=track-summary]");
    await expect.poll(() => selectorText(page), { timeout: 30_000 }).toBe(`Tracks: ${busier[0]} (busiest)`);
    await expectFlameTotal(page, ms(busier[1]));
    await summary.click();
    await page.screenshot({ path: screenshotPath("tracks-speedscope-two-profiles-1440") });
    const key = (await callService(summarizeRun, ctx, { run_id: runs.speedscope })).sampled_tracks.find((t) => t.label === lighter[0])!.track_key;
    await page.locator(`[data-testid=track-only-${key}]`).click();
    await expectFlameTotal(page, ms(lighter[1]));
    expect(new URL(page.url()).searchParams.get("tracks")).toBe(key);
    await page.goto(page.url());
    await expect.poll(() => selectorText(page), { timeout: 30_000 }).toBe(`Tracks: ${lighter[0]}`);

    // Added to an investigation, the view keeps its track: the notebook's flame cell shows that profile alone.
    await page.locator("[data-testid=add-to-investigation]").click();
    await page.locator("[data-testid=add-to-investigation-title]").fill("Is the main thread idle?");
    await page.locator("[data-testid=add-to-investigation-create]").click();
    const open = page.locator("[data-testid=add-to-investigation-open]");
    await open.waitFor({ timeout: 20_000 });
    const investigationId = /investigations\/([^#/]+)/.exec((await open.getAttribute("href"))!)![1];
    const notebook = await callService(showInvestigation, ctx, { investigation_id: decodeURIComponent(investigationId) });
    expect(notebook.cells.map((c) => [c.kind, (c.content as { tracks?: unknown }).tracks])).toEqual([["flame", [key]]]);
    await open.click();
    await expect.poll(() => selectorText(page), { timeout: 30_000 }).toBe(`Tracks: ${lighter[0]}`);
    await expectFlameTotal(page, ms(lighter[1]));
    await page.screenshot({ path: screenshotPath("tracks-notebook-cell-1440") });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("a Chrome trace's main and worker threads are told apart, the renderer's main thread first", async () => {
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1024, height: 800 } });
    await page.goto(`${server.url}/runs/${runs.chrome}`);
    const summary = page.locator("[data-testid=track-summary]");
    await expect.poll(() => selectorText(page), { timeout: 30_000 }).toMatch(/^Tracks: CrRendererMain tid \d+ · Renderer pid \d+ \(busiest\)$/);
    await summary.click();
    const names = await page.locator(".track-list .track-name").allInnerTexts();
    expect(names.some((n) => n.startsWith("DedicatedWorker thread"))).toBe(true);
    await page.screenshot({ path: screenshotPath("tracks-chrome-worker-1024") });
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("DuckDB-WASM in the browser gives the rows the server's DuckDB gives for queries scoped to tracks", async () => {
    const tracks = (await callService(summarizeRun, ctx, { run_id: runs.perf })).sampled_tracks.slice(0, 3).map((t) => t.track_key);
    const ws = openWorkspace(ctx.locator);
    const summary = await callService(summarizeRun, ctx, { run_id: runs.perf });
    const reader = await openEvidence(ws, summary.commit_id);
    const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(`${server.url}/sql?run=${runs.perf}`);
      await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 60_000 });
      const frame = (await reader.run(scopeToTracks(hotspotsQuery), { generations: summary.generations, metric: "samples", limit: 1, tracks }))[0].frame_key;
      const cases: [EvidenceQuery<any, any>, Record<string, unknown>][] = [
        [hotspotsQuery, { metric: "samples", limit: 50 }],
        [flameTreeQuery, { metric: "samples", budget: 300 }],
        [calleesQuery, { metric: "samples", frame_key: frame, limit: 50 }],
      ];
      for (const [query, params] of cases) {
        const scoped = scopeToTracks(query);
        const full = scoped.params.parse({ ...params, generations: summary.generations, tracks }) as Record<string, unknown>;
        const expected = (await reader.run(scoped, full)) as Record<string, unknown>[];
        expect(expected.length, query.name).toBeGreaterThan(0);
        await page.locator("[data-testid=sql-editor]").fill(renderSql(scoped.sql, full));
        await page.locator("[data-testid=sql-run]").click();
        await expect.poll(async () => Number(/^([\d,]+) row/.exec((await page.locator("[data-testid=sql-result-meta]").innerText().catch(() => "")) || "")?.[1]?.replace(/,/g, "")), { timeout: 30_000 }).toBe(expected.length);
        expect(await page.locator("[data-testid=sql-error]").count()).toBe(0);
        const actual = await page.locator("[data-testid=sql-result] tbody tr").evaluateAll((trs) =>
          trs.map((tr) => Object.fromEntries([...tr.querySelectorAll("td")].map((td) => [td.dataset.column!, JSON.parse(td.dataset.value!)]))),
        );
        const canonical = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(Object.keys(expected[0]).map((k) => (typeof r[k] === "number" ? Number((r[k] as number).toPrecision(9)) : r[k])))).sort();
        expect(canonical(actual), query.name).toEqual(canonical(expected));
      }
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      ws.close();
    }
  }, 180_000);
});
