// `npx tsx scripts/readme-screenshots.ts [sandwich|trace|sql|notebook …]` (after `npm run build`):
// takes the README's per-view screenshots with real data and writes them to docs/images/
// (sandwich.png, trace.png, sql.png, notebook.png); names given, only those.
// - a CPU profile captured from examples/demo (the `demo` workload, mode primes), for the sandwich
//   and the SQL console;
// - a Chrome trace recorded by headless Chromium while it opens that run's flame graph in this app
//   (with V8's sampling profiler on, so a selected range has samples), for the trace window.
// - an investigation of that run as a notebook: a note, the flame graph zoomed to the hot function,
//   reactive SQL cells, a hypothesis and a supported finding citing the flame cell.
// Each screenshot comes from the real built app served by `emberscope serve`, like the tests'.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { addCell, analyzeHotspots, callService, createInvestigation, importArtifact, recordFinding, recordHypothesis, runCapture, summarizeRun, traceWindow, type ServiceContext } from "../server/services";
import { initWorkspace } from "../server/store/workspace";
import { launchChromium } from "../test/helpers/browser";
import { startServer } from "../test/helpers/server";

const ROOT = path.resolve(import.meta.dirname, "..");
const OUT = path.join(ROOT, "docs", "images");
const ONLY = process.argv.slice(2);
const wants = (name: string) => ONLY.length === 0 || ONLY.includes(name);

async function main(): Promise<void> {
  const project = mkdtempSync(path.join(tmpdir(), "emberscope-readme-"));
  cpSync(path.join(ROOT, "examples", "demo"), project, { recursive: true, filter: (src) => !src.includes(".emberscope") });
  initWorkspace(project).close();
  const ctx: ServiceContext = { locator: { cwd: project, projectRoot: project }, actor: "cli" };
  const browser = await launchChromium();
  const server = await startServer(project);
  try {
    const cpu = await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 1.5, mode: "primes" } });

    const written: string[] = [];
    mkdirSync(OUT, { recursive: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));

    if (wants("notebook")) {
      // An investigation of the demo's run: what an investigator keeps.
      const hot = await callService(analyzeHotspots, ctx, { run_id: cpu.run_id, limit: 5 });
      const top = hot.rows.find((r) => r.name === "countPrimes") ?? hot.rows[0];
      const inv = await callService(createInvestigation, ctx, { title: "Why does the demo spend its time in countPrimes?", question: "Is countPrimes the hot path of `demo --mode primes`, and what calls it?" });
      const id = inv.investigation_id;
      await callService(addCell, ctx, { investigation_id: id, kind: "note", content: { markdown: "Captured with **node-cpuprofile** (1.5 s, `mode=primes`). Looking for the hot path before changing anything." } });
      const flame = await callService(addCell, ctx, { investigation_id: id, kind: "flame", content: { run_id: cpu.run_id, search: top.name } });
      await callService(recordHypothesis, ctx, { investigation_id: id, claim: `${top.name} dominates the samples.`, prediction: `${top.name} holds most of the run's self time.`, refuted_by: "Another function's self time is comparable." });
      await callService(addCell, ctx, {
        investigation_id: id,
        kind: "sql",
        name: "self_by_function",
        content: { sql: "SELECT f.name, sum(t.self) AS self FROM frame_totals t JOIN frames f USING (generation_id, frame_id) JOIN metrics m USING (generation_id, metric_id) WHERE m.name = 'samples' GROUP BY f.name ORDER BY self DESC LIMIT 5", view: {} },
      });
      await callService(addCell, ctx, { investigation_id: id, kind: "sql", content: { sql: "SELECT name, round(100.0 * self / (SELECT sum(t.self) FROM frame_totals t JOIN metrics m USING (generation_id, metric_id) WHERE m.name = 'samples'), 1) AS pct_of_samples FROM self_by_function", view: {} } });
      await callService(recordFinding, ctx, {
        investigation_id: id,
        title: `${top.name} is the hot path`,
        claim: `${top.name} has ${top.self.toLocaleString("en-US")} samples of self time, over fifty times any other function (self_by_function).`,
        evidence_level: "observed",
        assessment: "supported",
        references: [{ relation: "supports", target: { kind: "cell", cell_id: flame.cell_id, commit_id: flame.commit_id! } }],
      });
      await page.setViewportSize({ width: 1280, height: 1000 });
      await page.goto(`${server.url}/investigations/${id}`);
      await page.locator("[data-testid=flame-canvas]").first().waitFor({ timeout: 60_000 });
      await page.locator("[data-testid=sql-cell-result]").nth(1).waitFor({ timeout: 120_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: path.join(OUT, "notebook.png"), fullPage: true });
      written.push("notebook.png");
    }
    if (!wants("sandwich") && !wants("trace") && !wants("sql")) {
      if (errors.length) throw new Error(`page errors while taking screenshots:\n${errors.join("\n")}`);
      console.log(`wrote ${written.map((f) => path.join("docs", "images", f)).join(", ")}`);
      return;
    }

    // A real trace: Chromium opening the workbench's flame graph of that run.
    const tracePath = path.join(project, "chromium-opens-flame-graph.trace.json");
    const recorder = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await browser.startTracing(recorder, {
      path: tracePath,
      categories: ["devtools.timeline", "v8.execute", "blink.user_timing", "loading", "toplevel", "disabled-by-default-v8.cpu_profiler"],
    });
    await recorder.goto(`${server.url}/runs/${cpu.run_id}`);
    await recorder.locator("[data-testid=flame-canvas]").first().waitFor({ timeout: 60_000 });
    await recorder.waitForTimeout(300);
    await browser.stopTracing();
    await recorder.close();
    const trace = await callService(importArtifact, ctx, { path: tracePath });

    // Sandwich: the hottest function selected, its callers and callees as flame graphs.
    const hot = await callService(analyzeHotspots, ctx, { run_id: cpu.run_id, limit: 5 });
    const top = hot.rows.find((r) => r.name === "countPrimes") ?? hot.rows[0];
    await page.goto(`${server.url}/runs/${cpu.run_id}?view=sandwich&sel=${top.frame_key}`);
    await page.locator("[data-testid=sandwich-callers-row]").first().waitFor({ timeout: 60_000 });
    await page.locator("[data-testid=sandwich-callers-flame]").waitFor();
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(OUT, "sandwich.png") });
    written.push("sandwich.png");

    // Trace window: zoomed to the longest task of the renderer's main thread, with that task selected.
    const summary = await callService(summarizeRun, ctx, { run_id: trace.run_id });
    const first = summary.spans!.first_ns!;
    const last = summary.spans!.last_ns!;
    const main = summary.tracks.find((t) => /CrRendererMain/.test(t.thread_name ?? "")) ?? summary.tracks[0];
    const spans = await callService(traceWindow, ctx, { run_id: trace.run_id, start_ns: first, end_ns: last + 1, tracks: [main.track_id], limit: 5000 });
    const longest = spans.spans.filter((s) => s.depth === 0).sort((a, b) => b.dur_ns - a.dur_ns)[0];
    const pad = longest.dur_ns * 0.6;
    const window = `${Math.round(Math.max(first, longest.start_ns - pad))}..${Math.round(Math.min(last, longest.start_ns + longest.dur_ns + pad))}`;
    const range = `${longest.start_ns}..${longest.start_ns + longest.dur_ns}`;
    await page.setViewportSize({ width: 1280, height: 1500 });
    await page.goto(`${server.url}/runs/${trace.run_id}?view=trace&window=${window}&range=${range}`);
    await page.locator("[data-testid=trace-window][data-state=ready]").waitFor({ timeout: 60_000 });
    await page.locator("[data-testid=trace-selection]").waitFor();
    await page.waitForTimeout(1500);
    await page.screenshot({ path: path.join(OUT, "trace.png") });
    written.push("trace.png");

    // SQL console: the hotspots preset answered by DuckDB-WASM in the browser, as a chart and a table.
    await page.setViewportSize({ width: 1280, height: 1150 });
    await page.goto(`${server.url}/sql?run=${cpu.run_id}&preset=hotspots`);
    await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 120_000 });
    await page.locator("[data-testid=sql-run]").click();
    await page.locator("[data-testid=sql-result]").waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(OUT, "sql.png") });
    written.push("sql.png");

    if (errors.length) throw new Error(`page errors while taking screenshots:\n${errors.join("\n")}`);
    console.log(`wrote ${written.map((f) => path.join("docs", "images", f)).join(", ")}`);
  } finally {
    await server.stop();
    await browser.close();
    rmSync(project, { recursive: true, force: true });
  }
}

await main();
