import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { callService, importArtifact } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { startSettledServer, type RunningServer } from "../helpers/server";
import { cpuprofileFile } from "./generators";
import { summarize } from "./stats";

const ROUNDS = 3;

/**
 * The SQL console's first result (issue 21 item 10; goal ≤ 2 s): navigation start to the first rows
 * shown — the server engine's answer, which comes with the page's HTML — and to the first rows
 * DuckDB-WASM answered in the page, on /sql (hotspots preset) and in the run page's SQL tab, each
 * cold (a fresh browser context: empty HTTP cache, no compiled wasm) and warm (a second visit in
 * the same context). The server has served each page once before (its own start-up is not the
 * console's). Needs `npm run build`.
 */
export async function sqlConsoleBenchmark(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(path.join(tmpdir(), "emberscope-bench-sql-"));
  const browser = await launchChromium();
  let server: RunningServer | null = null;
  try {
    initWorkspace(root).close();
    const file = path.join(root, "busy.cpuprofile");
    await cpuprofileFile(file, 200_000, 2_000);
    const imported = await callService(importArtifact, { locator: { cwd: root, projectRoot: root }, actor: "test" }, { path: file });
    server = await startSettledServer(root);
    const pages = { sql_page: `/sql?run=${imported.run_id}&preset=hotspots`, run_sql_tab: `/runs/${imported.run_id}?view=sql` };
    for (const url of Object.values(pages)) await fetch(`${server.url}${url}`).then((r) => r.text());

    const figures: Record<string, unknown> = {};
    const load: number[] = [];
    for (const [name, url] of Object.entries(pages)) {
      const runs: Record<"server_cold" | "wasm_cold" | "server_warm" | "wasm_warm", number[]> = { server_cold: [], wasm_cold: [], server_warm: [], wasm_warm: [] };
      const engines: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        load.push(loadavg()[0]);
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        for (const visit of ["cold", "warm"] as const) {
          await page.goto(`${server.url}${url}${visit === "warm" ? "&again=1" : ""}`);
          const consoleEl = page.locator("[data-testid=sql-console][data-wasm-result-ms]");
          await consoleEl.waitFor({ timeout: 180_000 });
          runs[`server_${visit}`].push(Number(await consoleEl.getAttribute("data-first-result-ms")));
          runs[`wasm_${visit}`].push(Number(await consoleEl.getAttribute("data-wasm-result-ms")));
          engines.push((await page.locator("[data-testid=sql-answered-by]").innerText()).trim());
        }
        await context.close();
      }
      figures[name] = {
        url: url.replace(imported.run_id, "RUN"),
        first_result_ms_server: { cold: summarize(runs.server_cold), warm: summarize(runs.server_warm) },
        first_result_ms_wasm: { cold: summarize(runs.wasm_cold), warm: summarize(runs.wasm_warm) },
        each: runs,
        last_engine_shown: [...new Set(engines)],
      };
    }
    return {
      goal_ms: 2000,
      profile: { samples: 200_000, nodes: 2_000, sample_rows: imported.rows.samples },
      rounds: ROUNDS,
      load_average_1m: load.map((l) => Number(l.toFixed(2))),
      ...figures,
    };
  } finally {
    await server?.stop();
    await browser.close();
    rmSync(root, { recursive: true, force: true });
  }
}
