import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { z } from "zod";
import { callService, listRunFacets, listRuns, type ServiceContext } from "../../server/services";
import { captureTitle } from "../../server/services/captures";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { seedRuns } from "../helpers/seed";
import { startSettledServer, type RunningServer } from "../helpers/server";
import { summarize } from "./stats";

const RUNS = 10_000;
const ROUNDS = 30;

/** The questions the benchmark asks runs.list, as a person filtering /runs would. */
const QUERIES: Record<string, z.input<typeof listRuns.input>> = {
  first_page: { limit: 50 },
  text_filter: { limit: 50, text: "checkout-7" },
  text_no_match: { limit: 50, text: "no such run" },
  kind_status_filter: { limit: 50, kind: "capture", status: "failed" },
  workload_filter: { limit: 50, workload: "checkout" },
  title_order: { limit: 50, order: "title" },
};

/**
 * /runs over 10 k runs: runs.list's latency for the first page, a text filter and other filters
 * (the service through a held workspace, as the server calls it), a page deep into the list by
 * cursor, runs.facets; and in Chromium (needs `npm run build`) the page's first rows and a text
 * filter typed into it, until its rows are shown.
 */
export async function runsLibraryBenchmark(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(path.join(tmpdir(), "emberscope-bench-runs-"));
  const browser = await launchChromium();
  let server: RunningServer | null = null;
  try {
    const seeding = performance.now();
    const ws = initWorkspace(root);
    seedRuns(ws, RUNS, (i) =>
      i % 5 === 0
        ? { kind: "capture", source: "node-cpuprofile", title: captureTitle("checkout", { requests: i }, "node-cpuprofile", new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()), status: i % 35 === 0 ? "failed" : "succeeded", details: { workload: "checkout", adapter: "node-cpuprofile" } }
        : { kind: "import", source: i % 3 ? "folded" : "pprof", title: `checkout-${i}.${i % 3 ? "folded" : "pb.gz"}`, status: "succeeded", details: { file_name: `checkout-${i}.folded`, format: "folded" } },
    );
    ws.close();
    const seedMs = performance.now() - seeding;

    const held = openWorkspace({ cwd: root, projectRoot: root });
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "web", heldWorkspace: () => held };
    const service: Record<string, ReturnType<typeof summarize> & { rows: number; matching: number }> = {};
    for (const [name, input] of Object.entries(QUERIES)) {
      const times: number[] = [];
      let last = await callService(listRuns, ctx, input);
      for (let i = 0; i < ROUNDS; i++) {
        const t = performance.now();
        last = await callService(listRuns, ctx, input);
        times.push(performance.now() - t);
      }
      service[name] = { ...summarize(times), rows: last.items.length, matching: last.matching };
    }
    // Page 100 of 200, reached by cursor: keyset seeks, so it costs what the first page costs.
    let cursor: string | undefined;
    for (let i = 0; i < 99; i++) cursor = (await callService(listRuns, ctx, { limit: 50, cursor })).next_cursor ?? undefined;
    const deep: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      await callService(listRuns, ctx, { limit: 50, cursor });
      deep.push(performance.now() - t);
    }
    const facets: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      await callService(listRunFacets, ctx, {});
      facets.push(performance.now() - t);
    }
    held.close();

    server = await startSettledServer(root);
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const firstRows: number[] = [];
    const serverRender: number[] = [];
    const filterShown: number[] = [];
    for (let trial = 0; trial < 5; trial++) {
      const t = performance.now();
      await page.goto(`${server.url}/runs`);
      await page.locator("[data-testid=run-row]").first().waitFor();
      firstRows.push(performance.now() - t);
      serverRender.push(await page.evaluate(() => (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).responseStart));
      // Typing a filter: from the last key to its rows on screen (the search asks once typing pauses for 300 ms).
      const search = page.locator("[data-testid=runs-search]");
      await search.click();
      await search.pressSequentially("checkout-7");
      const typed = performance.now();
      await page.waitForFunction(() => {
        const body = document.querySelector("[data-testid=runs-body]");
        return body?.getAttribute("aria-busy") === "false" && new URL(location.href).searchParams.get("q") === "checkout-7";
      });
      filterShown.push(performance.now() - typed);
    }
    return {
      runs: RUNS,
      seed_ms: Math.round(seedMs),
      service_ms: { ...service, page_100_by_cursor: summarize(deep), facets: summarize(facets) },
      page: {
        first_rows_ms: summarize(firstRows),
        server_response_start_ms: summarize(serverRender),
        text_filter_rows_shown_ms: summarize(filterShown),
        text_filter_note: "from the last key typed; includes the search's 300 ms pause before it asks",
      },
    };
  } finally {
    await server?.stop();
    await browser.close();
    rmSync(root, { recursive: true, force: true });
  }
}
