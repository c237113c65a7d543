import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { z } from "zod";
import { callService, flameTimeline, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { processCpuMs, startSettledServer } from "../helpers/server";
import { walkingCpuprofileFile } from "./generators";
import { summarize } from "./stats";
import { TIME_ORDER_CELL_BUDGET } from "../../components/flame/time-order-question";

const ROUNDS = 5;
const NODES = 20_000;
/** The cell budget the page asks for; the service's rounds ask one more each. */
const CELLS = TIME_ORDER_CELL_BUDGET;

/**
 * Time order (evidence.flame_timeline, the one-pass merge) over V8 profiles of 1 M and 10 M
 * samples whose stacks wander as a program's do (walkingCpuprofileFile): the server's time from
 * the call to the cells (the first call of a process opens the commit's reader too; the others are
 * warm, each with another cell budget so that each merges again: the engine keeps each answer, and
 * the kept answer's time is given apart), and for 1 M samples, in headless Chromium (needs `npm run build`), the time from
 * navigation to the first time-order frame painted (`?mode=time-order`), by phase: the HTML's
 * first and last byte (the page streams its flame tree and time order in it, packed:
 * analysis/queries/packed-rows.ts) and its size, hydration, the cells' arrival, the layout and
 * paint, and the CPU time the server and the page's main thread spent (less noisy than wall time
 * on a busy machine).
 * EMBERSCOPE_BENCH_TIME_ORDER_SAMPLES=1000000 measures only the sizes named (comma-separated; the
 * page needs 1 M).
 */
export async function timeOrderBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-time-order-"));
  try {
    initWorkspace(dir).close();
    const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "test" };
    const profiles: Record<string, unknown> = {};
    let millionRun = "";
    const sizes = process.env.EMBERSCOPE_BENCH_TIME_ORDER_SAMPLES?.split(",").map(Number) ?? [1_000_000, 10_000_000];
    for (const samples of sizes) {
      const file = path.join(dir, `walk-${samples}.cpuprofile`);
      await walkingCpuprofileFile(file, samples, NODES);
      const bytes = statSync(file).size;
      const importStart = performance.now();
      const imported = await callService(importArtifact, ctx, { path: file });
      const importS = (performance.now() - importStart) / 1000;
      rmSync(file);
      const calls: number[] = [];
      const cpu: number[] = [];
      const load: number[] = [];
      let last: z.output<typeof flameTimeline.output> | null = null;
      for (let i = 0; i < ROUNDS; i++) {
        load.push(loadavg()[0]);
        const start = performance.now();
        const used = process.cpuUsage();
        // Each round another budget: another question, merged again (the engine keeps each answer).
        last = await callService(flameTimeline, ctx, { run_id: imported.run_id, budget: CELLS + i });
        calls.push(performance.now() - start);
        const spent = process.cpuUsage(used);
        cpu.push((spent.user + spent.system) / 1000);
      }
      const keptStart = performance.now();
      await callService(flameTimeline, ctx, { run_id: imported.run_id, budget: CELLS + ROUNDS - 1 });
      const keptMs = performance.now() - keptStart;
      if (samples === 1_000_000) millionRun = imported.run_id;
      profiles[`samples_${samples}`] = {
        samples,
        file_bytes: bytes,
        stack_nodes: imported.rows.stacks,
        import_seconds: Math.round(importS * 10) / 10,
        first_call_ms: Math.round(calls[0]),
        warm_calls_ms: summarize(calls.slice(1)),
        // CPU time of this process (its JavaScript and DuckDB's two threads) per warm call: less
        // sensitive than wall time to other work on the machine.
        warm_calls_cpu_ms: summarize(cpu.slice(1)),
        // The last question asked again: the kept answer (what a page opened again gets).
        kept_call_ms: Math.round(keptMs * 10) / 10,
        cells: last?.cells.length ?? 0,
        dropped_cells: last?.dropped_cells ?? 0,
        merged_samples: last?.samples ?? 0,
        load_average_1m_at_each_call: load.map((x) => Math.round(x * 10) / 10),
        goal_ms: samples === 1_000_000 ? 1000 : 10_000,
      };
    }

    if (!millionRun) return { ...profiles, note: "the page was not measured: it needs the 1 M run" };
    const server = await startSettledServer(dir);
    const browser = await launchChromium();
    // The server is another process: its first page merges (and keeps) the time order itself.
    const paints: number[] = [];
    const stages: Record<string, number[]> = { navigation_to_html_first_byte: [], html_first_to_last_byte: [], navigation_to_request: [], request_to_data: [], data_to_paint: [] };
    const serverCpu: number[] = [];
    const pageCpu: number[] = [];
    let html = { transfer_bytes: 0, decoded_bytes: 0 };
    try {
      // The server's first render of a route is slow (code loading); warm it over plain HTTP.
      await fetch(`${server.url}/runs/${millionRun}`).then((r) => r.text());
      for (let i = 0; i < 3; i++) {
        const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        const page = await context.newPage();
        const cdp = await context.newCDPSession(page);
        await cdp.send("Performance.enable");
        const cpuBefore = processCpuMs(server.pid);
        await page.goto(`${server.url}/runs/${millionRun}?mode=time-order`);
        await page.waitForFunction(() => performance.getEntriesByName("emberscope:time-order-paint").length > 0, null, { timeout: 120_000 });
        // A string, not a function: tsx's name-keeping helpers do not exist in the page.
        const marks = (await page.evaluate(`["request", "data", "paint"].map((m) => performance.getEntriesByName("emberscope:time-order-" + m)[0]?.startTime ?? null)`)) as (number | null)[];
        const [request, data, paint] = marks as number[];
        const nav = (await page.evaluate(`(() => { const n = performance.getEntriesByType("navigation")[0]; return [n.responseStart, n.responseEnd, n.transferSize, n.decodedBodySize]; })()`)) as number[];
        stages.navigation_to_html_first_byte.push(nav[0]);
        stages.html_first_to_last_byte.push(nav[1] - nav[0]);
        html = { transfer_bytes: nav[2], decoded_bytes: nav[3] };
        const { metrics } = await cdp.send("Performance.getMetrics");
        pageCpu.push((metrics.find((m) => m.name === "TaskDuration")?.value ?? 0) * 1000);
        paints.push(paint);
        stages.navigation_to_request.push(request);
        stages.request_to_data.push(data - request);
        stages.data_to_paint.push(paint - data);
        serverCpu.push(processCpuMs(server.pid) - cpuBefore);
        await context.close();
      }
    } finally {
      await browser.close();
      await server.stop();
    }
    return {
      ...profiles,
      page_1m: {
        navigation_to_first_time_order_paint_ms: summarize(paints),
        // Each round: the first merges the time order in the server; the others get its kept answer.
        navigation_to_first_time_order_paint_each_ms: paints.map(Math.round),
        // Apart: a run's first opening in time order (the server merges) and its openings after (its kept answer).
        first_opening_paint_ms: Math.round(paints[0]),
        later_openings_paint_ms: summarize(paints.slice(1)),
        // Where it goes: navigation to hydration (the "request" mark: the page's time-order effect;
        // the server already asked flame_timeline while rendering the page and streams it), the wait
        // for the streamed cells (request_to_data), the layout (in the worker) and the first frame.
        stages_ms: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, summarize(v)])),
        // CPU time the server process spent on each page load (the page, flame tree, hotspots, time order).
        server_cpu_ms_each: serverCpu.map(Math.round),
        // The page's main thread busy (Chromium's TaskDuration) from navigation to the first frame read.
        page_main_thread_ms_each: pageCpu.map(Math.round),
        // The HTML (on the wire, not gzipped on loopback since serve stopped compressing there, and decoded): the page's shell with the streamed answers.
        html,
        load_average_1m: Math.round(loadavg()[0] * 10) / 10,
        goal_ms: 1500,
        note: "fresh browser context each round, one server process (its reader opens in the first round): page load and hydration, the flame tree and time order streamed with the page, and the layout in the worker",
      },
      note: "2 cores shared with other work: figures are noisy; see the load averages",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

