import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { addCell, callService, createInvestigation, importArtifact, recordFinding, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { startSettledServer, type RunningServer } from "../helpers/server";
import { cpuprofileFile } from "./generators";
import { summarize } from "./stats";

const SAMPLES = 1_000_000;
const TRIALS = 3;
const EDITS = 30;

/** Ten different questions of the evidence tables, as an investigator's SQL cells would ask. */
const QUERIES = [
  "SELECT count(*) AS samples FROM samples",
  "SELECT name, count(*) AS n FROM frames GROUP BY name ORDER BY n DESC LIMIT 10",
  "SELECT depth, count(*) AS stacks FROM stacks GROUP BY depth ORDER BY depth LIMIT 50",
  "SELECT f.name, sum(s.value) AS self FROM samples s JOIN stacks st USING (generation_id, stack_id) JOIN frames f USING (generation_id, frame_id) GROUP BY f.name ORDER BY self DESC LIMIT 20",
  "SELECT min(time_ns) AS first_ns, max(time_ns) AS last_ns FROM samples",
  "SELECT name, unit FROM metrics",
  "SELECT track_id, count(*) AS n FROM samples GROUP BY track_id",
  "SELECT max(depth) AS deepest FROM stacks",
  "SELECT kind, count(*) AS n FROM frames GROUP BY kind",
  "SELECT (time_ns // 100000000) AS bucket, count(*) AS n FROM samples GROUP BY bucket ORDER BY bucket LIMIT 100",
];

/**
 * A notebook of 40 cells (10 SQL, 10 flame graphs over a 1 M-sample run, 10 notes, 10 findings)
 * in headless Chromium (needs `npm run build`): the time from navigation until every cell has
 * painted, the page's JS heap then, and the autosave round trip of typed edits.
 */
export async function notebookBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-notebook-"));
  const browser = await launchChromium();
  let server: RunningServer | null = null;
  try {
    initWorkspace(dir).close();
    const file = path.join(dir, "big.cpuprofile");
    await cpuprofileFile(file, SAMPLES, 20_000);
    const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "test" };
    const run = await callService(importArtifact, ctx, { path: file });
    const inv = await callService(createInvestigation, ctx, { title: "Forty cells over a million samples" });
    const id = inv.investigation_id;
    const flames: string[] = [];
    for (let i = 0; i < 10; i++) {
      await callService(addCell, ctx, { investigation_id: id, kind: "note", content: { markdown: `## Step ${i + 1}\nWhat the flame graph below shows, and what to check next.` } });
      flames.push((await callService(addCell, ctx, { investigation_id: id, kind: "flame", content: { run_id: run.run_id, search: i % 2 ? "hotFunction" : undefined } })).cell_id);
      await callService(addCell, ctx, { investigation_id: id, kind: "sql", name: `q${i}`, content: { sql: QUERIES[i], view: {} } });
      await callService(recordFinding, ctx, {
        investigation_id: id,
        title: `Finding ${i + 1}`,
        claim: "hotFunction holds about a third of the samples.",
        evidence_level: "observed",
        assessment: "supported",
        references: [{ relation: "supports", target: { kind: "cell", cell_id: flames[i], commit_id: run.commit_id } }],
      });
    }
    server = await startSettledServer(dir);
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const paintMs: number[] = [];
    const heapMb: number[] = [];
    const lastFlameMs: number[] = [];
    const lastSqlMs: number[] = [];
    const duckdbMarks: Record<string, number>[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      await page.goto(`${server.url}/investigations/${id}`);
      // Every cell painted: each flame canvas drew once, each SQL cell has its result, notes and findings rendered.
      const ready = await page.waitForFunction(
        `(() => {
          const q = (s) => document.querySelectorAll(s).length;
          const ok = performance.getEntriesByName("emberscope:flame-paint").length >= 10 && q("[data-kind=sql] [data-testid=sql-cell-result]") >= 10 && q("[data-testid=note-body]") >= 10 && q("[data-testid=finding]") >= 10;
          return ok ? performance.now() : false;
        })()`,
        null,
        { timeout: 180_000, polling: "raf" },
      );
      paintMs.push(Math.round((await ready.jsonValue()) as number));
      // Where the time went: the last flame graph's first frame and the last SQL cell's result.
      lastFlameMs.push((await page.evaluate(`Math.round(Math.max(...performance.getEntriesByName("emberscope:flame-paint").map((e) => e.startTime)))`)) as number);
      lastSqlMs.push((await page.evaluate(`Math.round(Math.max(...performance.getEntriesByName("emberscope:sql-cell-done").map((e) => e.startTime)))`)) as number);
      // The SQL engine's own marks (engine ready, each table decoded and inserted), first of each.
      duckdbMarks.push(
        (await page.evaluate(
          `Object.fromEntries(performance.getEntriesByType("mark").filter((m) => m.name.startsWith("duckdb:")).map((m) => [m.name.slice(7), Math.round(m.startTime)]).reverse())`,
        )) as Record<string, number>,
      );
      const { metrics } = await cdp.send("Performance.getMetrics");
      heapMb.push(Math.round((metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0) / 1e5) / 10);
    }
    // Autosave: a note edited EDITS times; each save is one compare-and-set round trip (measured in the page).
    const note = page.locator("[data-kind=note]").first();
    await note.click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("Enter");
    for (let i = 0; i < EDITS; i++) {
      await note.locator("[data-testid=note-editor]").fill(`Edit ${i}: the hot path is hotFunction under its callers.`);
      await page.waitForFunction(`document.querySelector("[data-kind=note]").getAttribute("data-save") === "saved"`, null, { timeout: 20_000 });
    }
    const saves = (await page.evaluate(`performance.getEntriesByName("emberscope:autosave").map((e) => e.duration)`)) as number[];
    const paint = summarize(paintMs);
    const autosave = summarize(saves);
    return {
      cells: 40,
      samples: SAMPLES,
      all_cells_painted_ms: paint,
      all_cells_painted_ms_each: paintMs,
      all_cells_painted_goal_ms: 2000,
      last_flame_painted_ms_each: lastFlameMs,
      last_sql_result_ms_each: lastSqlMs,
      sql_engine_marks_ms: duckdbMarks,
      autosave_ms: autosave,
      autosave_p95_goal_ms: 50,
      js_heap_mb_each: heapMb,
      meets_goals: { paint: paint.p50 <= 2000, autosave_p95: autosave.p95 <= 50 },
    };
  } finally {
    await browser.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
