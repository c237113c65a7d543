import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatValue } from "../../analysis/flame/format";
import { layoutFlame } from "../../analysis/flame/layout";
import { buildFlameTree } from "../../analysis/flame/tree";
import type { Transform } from "../../analysis/queries/transforms";
import { ROW_HEIGHT } from "../../components/flame/FlameCanvas";
import { TABLES } from "../../analysis/evidence/schema";
import { openDuckDb, sqlString } from "../../server/evidence/duckdb";
import { addCell, callService, createInvestigation, flameTree, importArtifact, type ServiceContext } from "../../server/services";
import { createExport } from "../../server/services/exports";
import { pin } from "../../server/store/corpus";
import { openWorkspace, initWorkspace } from "../../server/store/workspace";
import { launchChromium, screenshotPath } from "../helpers/browser";

/**
 * Issue 24: the export opened from disk in Chromium with the network off (offline, and every
 * request that is not the file itself aborted): the notebook renders, a flame cell zooms, and a
 * SQL cell's rows equal what the server's DuckDB answers over the same commit's files.
 */

const FOLDED = ["main;compute;hash 50", "main;compute;sort 20", "main;render;layout;measureText 20", "main;render;paint 10"].join("\n");
/** The candidate of the compare cell: hash halved, paint doubled. */
const FOLDED_AFTER = ["main;compute;hash 25", "main;compute;sort 20", "main;render;layout;measureText 20", "main;render;paint 20"].join("\n");
/** Two threads of nested spans with a flow between them (µs). */
const TRACE = JSON.stringify({
  traceEvents: [
    { name: "process_name", ph: "M", pid: 1, args: { name: "server" } },
    { name: "thread_name", ph: "M", pid: 1, tid: 1, args: { name: "main" } },
    { name: "thread_name", ph: "M", pid: 1, tid: 2, args: { name: "worker" } },
    { name: "request", ph: "X", pid: 1, tid: 1, ts: 0, dur: 1000 },
    { name: "parse", ph: "X", pid: 1, tid: 1, ts: 10, dur: 200 },
    { name: "handle", ph: "X", pid: 1, tid: 1, ts: 250, dur: 700 },
    { name: "db query", ph: "X", pid: 1, tid: 1, ts: 300, dur: 400 },
    { name: "job", ph: "X", pid: 1, tid: 2, ts: 400, dur: 500, bind_id: "0x1", flow_in: true },
    { name: "encode", ph: "X", pid: 1, tid: 2, ts: 450, dur: 300 },
  ],
});
/** Two profiles (a 40 ms main thread, a 120 ms evented worker): the transformed cells show the worker alone. */
const TWO_PROFILES = path.join(import.meta.dirname, "..", "fixtures", "tracks", "two-profiles.speedscope.json");
const SQL = "SELECT f.name, sum(s.value)::BIGINT AS self FROM samples s JOIN stacks k ON k.generation_id = s.generation_id AND k.stack_id = s.stack_id JOIN frames f ON f.generation_id = k.generation_id AND f.frame_id = k.frame_id GROUP BY f.name ORDER BY self DESC, f.name";

/** The server's answer: DuckDB (node) over the commit's own Parquet files, as views by table. */
async function serverAnswer(root: string, commitId: string): Promise<Record<string, unknown>[]> {
  const ws = openWorkspace({ cwd: root, projectRoot: root }, { readonly: true });
  const { instance, connection } = await openDuckDb();
  try {
    const commit = pin(ws.db, commitId);
    for (const table of ["samples", "stacks", "frames"]) {
      const files = commit.generations.flatMap((g) => g.files.filter((f) => f.table === table).map((f) => sqlString(ws.objects.pathOf(f.object_id as never))));
      await connection.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet([${files.join(", ")}], union_by_name = true)`);
    }
    return (await connection.runAndReadAll(SQL)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
    ws.close();
  }
}

describe("an export opened offline from disk", () => {
  let browser: Browser;
  let root: string;
  let file: string;
  let commitId: string;
  let ctx: ServiceContext;
  /** The worker-only, parseChunk-merged cells: the question the workspace asks for them. */
  let transformed: { run_id: string; commit_id: string; tracks: string[]; transforms: Transform[] };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-export-offline-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    writeFileSync(path.join(root, "app.folded"), FOLDED);
    const run = await callService(importArtifact, ctx, { path: path.join(root, "app.folded") });
    const inv = await callService(createInvestigation, ctx, { title: "Where the time goes", question: "Which function is hot?" });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "note", content: { markdown: "# Findings so far\n\nhash dominates **compute**." } });
    const flame = await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: run.run_id } });
    commitId = flame.commit_id!;
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "sql", name: "self_by_name", content: { sql: SQL } });
    // The other runs come after the SQL cell's commit (it answers over the first run only); later cells pin a later commit.
    writeFileSync(path.join(root, "after.folded"), FOLDED_AFTER);
    const after = await callService(importArtifact, ctx, { path: path.join(root, "after.folded") });
    writeFileSync(path.join(root, "trace.json"), TRACE);
    const trace = await callService(importArtifact, ctx, { path: path.join(root, "trace.json") });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "trace", content: { run_id: trace.run_id } });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "sandwich", content: { run_id: run.run_id } });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "calltree", content: { run_id: run.run_id } });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "compare", content: { base_run_id: run.run_id, candidate_run_id: after.run_id } });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "critical_path", content: { run_id: trace.run_id } });
    // A flame cell and an inverted call tree of one profile (not the first) with parseChunk merged into its caller.
    const profiles = await callService(importArtifact, ctx, { path: TWO_PROFILES });
    const whole = await callService(flameTree, ctx, { run_id: profiles.run_id });
    const worker = whole.track_choices.find((t) => t.label.includes("Worker"))!.track_key;
    const parseChunk = whole.nodes.find((n) => n.name === "parseChunk")!.frame_key;
    transformed = { run_id: profiles.run_id, commit_id: profiles.commit_id, tracks: [worker], transforms: [{ type: "merge-function", frame_key: parseChunk }] };
    const cellContent = { run_id: profiles.run_id, tracks: transformed.tracks, transforms: transformed.transforms };
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "flame", content: { ...cellContent, orientation: "icicle" } });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "calltree", content: { ...cellContent, inverted: true } });
    file = path.join(root, "investigation.html");
    await callService(createExport, ctx, { subject: { kind: "investigation", investigation_id: inv.investigation_id }, out: file });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("renders the notebook, zooms a flame cell and runs a SQL cell equal to the server's answer, with no request leaving the file", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.setOffline(true);
    const blocked: string[] = [];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("file:")) return route.continue();
      blocked.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const workers: string[] = [];
    page.on("worker", (w) => workers.push(w.url()));
    await page.goto(`file://${file}`);

    await page.locator("[data-testid=export-viewer]").waitFor({ timeout: 30_000 });
    expect(await page.locator("[data-testid=export-title]").innerText()).toBe("Where the time goes");
    expect(await page.locator("[data-testid=export-note] h1").innerText()).toBe("Findings so far");
    expect(await page.locator("[data-testid=export-redaction-mode]").innerText()).toBe("redacted");

    // SQL: rows from DuckDB-WASM over the export's Parquet equal the server's over the workspace's.
    await page.locator("[data-testid=export-sql-cell][data-state=done]").waitFor({ timeout: 90_000 });
    const rows = JSON.parse(await page.locator("[data-testid=export-sql-rows]").evaluate((e) => e.textContent ?? "[]")) as Record<string, unknown>[];
    const expected = await serverAnswer(root, commitId);
    expect(rows.map((r) => [r.name, Number(r.self)])).toEqual(expected.map((r) => [r.name, Number(r.self)]));
    expect(rows.map((r) => r.name)).toEqual(["hash", "measureText", "sort", "paint"]);

    // Flame: left-heavy, so compute (70) then render (30) under main; clicking render zooms to it.
    // The flame cell paints the summary computed at export at once, then goes live.
    await page.locator("[data-testid=export-flame][data-source=live]").first().waitFor({ timeout: 60_000 });
    const canvas = page.locator("[data-testid=export-flame] [data-testid=flame-canvas]").first();
    await canvas.waitFor({ timeout: 60_000 });
    await page.screenshot({ path: screenshotPath("export-offline") });
    const box = (await canvas.boundingBox())!;
    await page.mouse.click(box.x + 0.85 * box.width, box.y + 2 * ROW_HEIGHT + ROW_HEIGHT / 2);
    await expect.poll(() => page.locator("[data-testid=export-flame] [data-testid=flame-breadcrumb]").first().innerText()).toMatch(/main\s*›\s*render/);
    await page.screenshot({ path: screenshotPath("export-offline-zoomed") });

    // Trace window: the app's own, its spans read from the file; it draws every span and zooms.
    const trace = page.locator("[data-testid=trace-window]");
    await trace.scrollIntoViewIfNeeded();
    await expect.poll(() => trace.getAttribute("data-state"), { timeout: 60_000 }).not.toBe("loading");
    expect(await trace.getAttribute("data-state"), await trace.innerText()).toBe("ready");
    expect(await trace.getAttribute("data-span-count")).toBe("6");
    expect(await trace.getAttribute("data-track-count")).toBe("2");
    await expect.poll(() => page.locator("[data-testid=trace-canvas]").getAttribute("data-drawn")).toBe("6");
    const width = (view: string | null) => (view ? Number(view.split("..")[1]) - Number(view.split("..")[0]) : NaN);
    const before = width(await trace.getAttribute("data-view"));
    await trace.getByRole("button", { name: "Zoom in" }).click();
    await expect.poll(async () => width(await trace.getAttribute("data-view"))).toBeLessThan(before * 0.7);
    await page.screenshot({ path: screenshotPath("export-offline-trace"), fullPage: true });

    // Sandwich: the function table; choosing hash shows its callers (compute).
    const sandwich = page.locator("[data-testid=export-sandwich]");
    await sandwich.locator("[data-testid=sandwich-row]").first().waitFor({ timeout: 60_000 });
    await sandwich.locator("[data-testid=sandwich-row] button", { hasText: /^hash$/ }).click();
    await expect.poll(() => sandwich.locator("[data-testid=sandwich-selected]").count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => sandwich.getAttribute("data-near"), { timeout: 30_000 }).not.toBe("running");
    expect(await sandwich.locator("[data-testid=sandwich-callers-row]").allInnerTexts(), await sandwich.innerText()).toEqual([expect.stringContaining("compute")]);

    // Call tree: main at the root with its two children.
    const calltree = page.locator("[data-testid=export-calltree] [data-testid=calltree-row]");
    await calltree.first().waitFor({ timeout: 60_000 });
    expect((await calltree.allInnerTexts()).join("\n")).toMatch(/compute[\s\S]*render/);

    // Compare: the largest changes (hash shrank, paint grew) over both runs.
    const compare = page.locator("[data-testid=export-compare]");
    await compare.locator("[data-testid=compare-table]").waitFor({ timeout: 60_000 });
    await expect.poll(() => compare.locator("[data-testid=compare-table]").innerText()).toMatch(/hash[\s\S]*paint|paint[\s\S]*hash/);

    // Critical path of the span trace: computed here, request is the root.
    const cp = page.locator("[data-testid=export-critical-path]");
    await cp.waitFor({ timeout: 60_000 });
    expect(Number(await cp.getAttribute("data-length"))).toBe(1_000_000);
    expect(await cp.locator("[data-testid=cp-path]").innerText()).toContain("request");
    await page.screenshot({ path: screenshotPath("export-offline-cells"), fullPage: true });

    // The transformed cells: the worker's profile alone with parseChunk merged, as the workspace
    // draws them — every frame of the server's tree for the same question, at its place, with its values.
    const server = await callService(flameTree, ctx, transformed);
    expect(server.nodes.some((n) => n.name === "parseChunk")).toBe(false);
    expect(server.tracks.covered.map((t) => t.label)).toEqual([expect.stringContaining("Worker")]);
    const tf = page.locator("[data-testid=export-flame][data-source=live][data-transforms='1']");
    await tf.waitFor({ timeout: 60_000 });
    await tf.scrollIntoViewIfNeeded();
    expect(Number(await tf.getAttribute("data-total"))).toBe(server.nodes.filter((n) => n.parent_id === null).reduce((sum, n) => sum + n.total, 0));
    expect(Number(await tf.getAttribute("data-frames"))).toBe(server.nodes.length);
    const built = buildFlameTree(server.nodes);
    const layout = layoutFlame(built);
    const value = (n: number) => formatValue(n, server.unit, server.metric);
    const tip = page.locator("[data-testid=flame-tooltip]");
    for (let i = 1; i < built.count; i++) {
      const box = (await tf.locator("[data-testid=flame-canvas]").boundingBox())!;
      await page.mouse.move(2, 2);
      await page.mouse.move(box.x + (layout.x[i] + layout.w[i] / 2) * box.width, box.y + built.depth[i] * ROW_HEIGHT + ROW_HEIGHT / 2);
      await expect.poll(async () => [await tip.locator("[data-testid=tooltip-name]").innerText(), await tip.locator("[data-testid=tooltip-self]").innerText(), await tip.locator("[data-testid=tooltip-total]").innerText()]).toEqual([built.names[i], value(built.self[i]), value(built.total[i])]);
    }
    await page.mouse.move(2, 2);
    // The inverted call tree of the same question: leaf functions at the roots, as the server's.
    const inverted = await callService(flameTree, ctx, { ...transformed, inverted: true });
    const roots = inverted.nodes.filter((n) => n.parent_id === null).sort((x, y) => y.total - x.total);
    expect(roots.map((n) => n.name)).toEqual(["hashBlock", "onmessage"]);
    const tree = page.locator("[data-testid=export-calltree][data-transforms='1']");
    await tree.waitFor({ timeout: 60_000 });
    expect(Number(await tree.getAttribute("data-total"))).toBe(roots.reduce((sum, n) => sum + n.total, 0));
    // Depth 1 (aria-level 2) rows are the tree's roots, under "all".
    const rootRows = await tree.locator("[data-testid=calltree-row][aria-level='2']").allInnerTexts();
    expect(rootRows).toHaveLength(roots.length);
    for (const [i, n] of roots.entries()) expect(rootRows[i]).toMatch(new RegExp(`${n.name}[\\s\\S]*${value(n.total)}`));
    expect((await tree.locator("[data-testid=calltree-row]").allInnerTexts()).join("\n")).not.toContain("parseChunk");
    await page.screenshot({ path: screenshotPath("export-offline-transformed"), fullPage: true });

    expect(await page.locator("[data-testid=export-cell-error]").count()).toBe(0);
    // Parquet was decoded off the main thread (a worker besides DuckDB's, both from the file's own
    // code), and only the columns the queries named: the whole-run cells' queries do not read every
    // column of samples (the track-scoped cells do: their track views carry time_ns).
    expect(workers.filter((u) => u.startsWith("blob:")).length).toBeGreaterThanOrEqual(2);
    const decodedColumns = await page.evaluate(() => performance.getEntriesByType("mark").filter((m) => m.name === "emberscope:table-ready:samples").map((m) => (m as PerformanceMark).detail?.columns as number));
    expect(decodedColumns.length).toBeGreaterThan(0);
    expect(Math.min(...decodedColumns)).toBeLessThan(TABLES.samples.length);
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 240_000);
});
