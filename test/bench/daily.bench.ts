import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { runCli } from "../helpers/cli";
import type { WarmUpState } from "../../server/services/warm-up-state";
import { processCpuMs, startServer, waitForWarmUp } from "../helpers/server";
import { cpuprofileFile } from "./generators";
import { summarize } from "./stats";

const ROUNDS = Number(process.env.EMBERSCOPE_BENCH_DAILY_ROUNDS ?? 3);

/** A cpuprofile of about 1 MB (the size people drop): 60 k samples over 2,500 call-tree nodes. */
async function oneMegabyteProfile(file: string): Promise<number> {
  await cpuprofileFile(file, 60_000, 2_500);
  return statSync(file).size;
}

/**
 * Daily use (issue 21): drop-to-flame-graph for a 1 MB profile in headless Chromium — dropped on
 * the home page, imported, the run opened by itself, its flame graph painted — with where the time
 * went (the server's CPU time for it; the upload: the drop to its request, the request, the
 * route's Server-Timing; the server's import phases, the run page's request, the flame data, the
 * paint); and `emberscope open` of the same file: to the URL printed, and on to the painted flame
 * graph.
 * Needs `npm run build`. Each round uses a fresh workspace and server, and drops once the server's
 * start-up warm-up has ended (it says so at GET /api/imports/warm-up; its duration is reported as
 * warm_up_ms); EMBERSCOPE_WARM_UP=0 starts the servers without it, for comparison.
 */
export async function dailyBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-daily-"));
  const browser = await launchChromium();
  try {
    const file = path.join(dir, "dropped.cpuprofile");
    const bytes = await oneMegabyteProfile(file);
    const text = readFileSync(file, "utf8");
    const drop: Record<string, number>[] = [];
    const warmUpFailures: WarmUpState[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const root = mkdtempSync(path.join(dir, `drop-${round}-`));
      initWorkspace(root).close();
      const server = await startServer(root);
      try {
        // A person takes seconds to drag a file: the drop waits for the server's warm-up to end (its
        // own signal, GET /api/imports/warm-up), whose duration is reported beside the drop's.
        const waitStarted = performance.now();
        const warmUp = await waitForWarmUp(server.url);
        const warmUpWaitMs = performance.now() - waitStarted;
        const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
        await page.goto(server.url);
        await page.locator("[data-testid=import-dropzone]").waitFor();
        // The server's CPU time for the drop (its import, the run page): less swayed by a busy machine than wall time.
        const cpuBefore = processCpuMs(server.pid);
        // The drop, in the page's clock; the run opens by itself once the import answers.
        await page.evaluate(`(() => {
          const text = ${JSON.stringify(text)};
          const zone = document.querySelector("[data-testid=import-dropzone]");
          const transfer = new DataTransfer();
          transfer.items.add(new File([text], "dropped.cpuprofile", { type: "application/json" }));
          sessionStorage.setItem("bench:drop", String(performance.timeOrigin + performance.now()));
          zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
        })()`);
        await page.waitForURL(/\/runs\/run_/, { timeout: 60_000 });
        await page.waitForFunction(() => performance.getEntriesByName("emberscope:flame-paint").length > 0, null, { timeout: 60_000 });
        // Every mark in absolute time (a client-side navigation keeps one document; a full load would not).
        const t = (await page.evaluate(`(() => {
          const origin = performance.timeOrigin;
          const at = (name) => { const e = performance.getEntriesByName(name)[0]; return e ? origin + e.startTime : NaN; };
          const drop = Number(sessionStorage.getItem("bench:drop"));
          const imported = performance.getEntriesByName("emberscope:import-done")[0];
          const server = imported ? imported.detail : null;
          const rsc = performance.getEntriesByType("resource").find((e) => e.name.includes("/runs/run_"));
          const frames = performance.getEntriesByName("emberscope:flame-frame");
          const upload = at("emberscope:import-done") - drop - (server ? server.total : 0);
          // The upload's own parts: the drop to the request's start (a CSRF token fetched then), and the
          // route's Server-Timing (the body staged, the import service's call, the run view prepared).
          const request = performance.getEntriesByType("resource").find((e) => e.name.includes("/api/imports"));
          const route = Object.fromEntries((request ? request.serverTiming : []).map((s) => [s.name, s.duration]));
          return {
            upload_and_http_ms: upload,
            upload_drop_to_request_ms: request ? origin + request.startTime - drop : NaN,
            upload_request_ms: request ? request.responseEnd - request.startTime : NaN,
            upload_route_receive_ms: route.receive ?? NaN,
            upload_route_import_ms: route.import ?? NaN,
            upload_route_prepare_ms: route.prepare ?? NaN,
            server_import_ms: server ? server.total : NaN,
            server_import_parse_ms: server ? server.parse : NaN,
            server_import_totals_ms: server ? server.totals : NaN,
            server_import_write_ms: server ? server.write : NaN,
            import_to_open_ms: at("emberscope:open-run") - at("emberscope:import-done"),
            page_request_to_first_byte_ms: rsc ? rsc.responseStart - rsc.startTime : NaN,
            page_request_to_last_byte_ms: rsc ? rsc.responseEnd - rsc.startTime : NaN,
            open_to_flame_data_ms: at("emberscope:flame-data") - at("emberscope:open-run"),
            data_to_paint_ms: at("emberscope:flame-paint") - at("emberscope:flame-data"),
            paint_frame_ms: frames.length ? frames[0].duration : NaN,
            drop_to_imported_ms: at("emberscope:import-done") - drop,
            drop_to_paint_ms: at("emberscope:flame-paint") - drop,
          };
        })()`)) as Record<string, number>;
        drop.push({ warm_up_ms: warmUp?.ms ?? NaN, warm_up_wait_after_start_ms: warmUpWaitMs, ...t, server_cpu_drop_to_paint_ms: processCpuMs(server.pid) - cpuBefore });
        if (warmUp && warmUp.state !== "done" && warmUp.state !== "off") warmUpFailures.push(warmUp);
        await page.close();
      } finally {
        await server.stop();
      }
    }

    const open: Record<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const root = mkdtempSync(path.join(dir, `open-${round}-`));
      const copy = path.join(root, "opened.cpuprofile");
      await import("node:fs/promises").then((fs) => fs.copyFile(file, copy));
      const started = performance.now();
      const result = await runCli(["open", "opened.cpuprofile", "--json", "--no-browser"], { cwd: root });
      const toUrl = performance.now() - started;
      if (result.code !== 0) throw new Error(`emberscope open failed: ${result.stdout}${result.stderr}`);
      const doc = result.json as { url: string; server: { pid: number }; timings_ms: { import: number } };
      try {
        const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
        await page.goto(doc.url);
        await page.waitForFunction(() => performance.getEntriesByName("emberscope:flame-paint").length > 0, null, { timeout: 60_000 });
        const painted = performance.now() - started;
        open.push({ to_url_ms: toUrl, import_ms: doc.timings_ms.import, to_painted_flame_ms: painted });
        await page.close();
      } finally {
        try {
          process.kill(doc.server.pid, "SIGTERM");
        } catch {
          // already stopped
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }

    const column = (rows: Record<string, number>[], key: string) => summarize(rows.map((r) => r[key]));
    const keys = (rows: Record<string, number>[]) => Object.fromEntries(Object.keys(rows[0] ?? {}).map((k) => [k, column(rows, k)]));
    return {
      profile: { format: "cpuprofile", bytes, samples: 60_000, nodes: 2_500 },
      rounds: ROUNDS,
      goal_drop_to_paint_ms: 1000,
      load_average_1m: Math.round(loadavg()[0] * 10) / 10,
      warm_up: process.env.EMBERSCOPE_WARM_UP === "0" ? "off (EMBERSCOPE_WARM_UP=0)" : "on",
      warm_up_not_done: warmUpFailures,
      drop_to_flame: keys(drop),
      drop_rounds: drop,
      emberscope_open: keys(open),
      open_rounds: open,
    };
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
