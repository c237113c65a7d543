// `npx tsx scripts/readme-screenshots.ts` (after `npm run build`): takes the README's per-view
// screenshots with real data and writes them to docs/images/ (sandwich.png, trace.png, sql.png).
// - a CPU profile captured from examples/demo (the `demo` workload, mode primes), for the sandwich
//   and the SQL console;
// - a Chrome trace recorded by headless Chromium while it opens that run's flame graph in this app
//   (with V8's sampling profiler on, so a selected range has samples), for the trace window.
// Each screenshot comes from the real built app served by `emberscope serve`, like the tests'.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { analyzeHotspots, callService, importArtifact, runCapture, summarizeRun, traceWindow, type ServiceContext } from "../server/services";
import { initWorkspace } from "../server/store/workspace";
import { launchChromium } from "../test/helpers/browser";
import { startServer } from "../test/helpers/server";

const ROOT = path.resolve(import.meta.dirname, "..");
const OUT = path.join(ROOT, "docs", "images");

async function main(): Promise<void> {
  const project = mkdtempSync(path.join(tmpdir(), "emberscope-readme-"));
  cpSync(path.join(ROOT, "examples", "demo"), project, { recursive: true, filter: (src) => !src.includes(".emberscope") });
  initWorkspace(project).close();
  const ctx: ServiceContext = { locator: { cwd: project, projectRoot: project }, actor: "cli" };
  const browser = await launchChromium();
  const server = await startServer(project);
  try {
    const cpu = await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 1.5, mode: "primes" } });

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

    mkdirSync(OUT, { recursive: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));

    // Sandwich: the hottest function selected, its callers and callees as flame graphs.
    const hot = await callService(analyzeHotspots, ctx, { run_id: cpu.run_id, limit: 5 });
    const top = hot.rows.find((r) => r.name === "countPrimes") ?? hot.rows[0];
    await page.goto(`${server.url}/runs/${cpu.run_id}?view=sandwich&sel=${top.frame_key}`);
    await page.locator("[data-testid=sandwich-callers-row]").first().waitFor({ timeout: 60_000 });
    await page.locator("[data-testid=sandwich-callers-flame]").waitFor();
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(OUT, "sandwich.png") });

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

    // SQL console: the hotspots preset answered by DuckDB-WASM in the browser, as a chart and a table.
    await page.setViewportSize({ width: 1280, height: 1150 });
    await page.goto(`${server.url}/sql?run=${cpu.run_id}&preset=hotspots`);
    await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 120_000 });
    await page.locator("[data-testid=sql-run]").click();
    await page.locator("[data-testid=sql-result]").waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(OUT, "sql.png") });

    if (errors.length) throw new Error(`page errors while taking screenshots:\n${errors.join("\n")}`);
    console.log(`wrote ${["sandwich.png", "trace.png", "sql.png"].map((f) => path.join("docs", "images", f)).join(", ")}`);
  } finally {
    await server.stop();
    await browser.close();
    rmSync(project, { recursive: true, force: true });
  }
}

await main();
