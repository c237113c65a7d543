import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { addCell, callService, createInvestigation, importArtifact, type ServiceContext } from "../../server/services";
import { createExport } from "../../server/services/exports";
import { openWorkspace, initWorkspace } from "../../server/store/workspace";
import { launchChromium } from "../helpers/browser";
import { cpuprofileFile } from "./generators";

/** `EMBERSCOPE_BENCH_EXPORT_SAMPLES=1000000` measures one size (comma-separated for several). */
const SIZES = (process.env.EMBERSCOPE_BENCH_EXPORT_SAMPLES ?? "100000,1000000").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);

/**
 * Issue 24: an investigation (a note, a flame cell and a SQL cell) over a 100 k- and a 1 M-sample
 * run — the export's time and file size against the bytes the workspace holds for that run
 * (native artifact and Parquet), and the time from opening the file offline in headless Chromium
 * to its first paint (the notebook rendered), to the flame cell drawn (the summary computed at
 * export), to the live flame graph and the SQL cell's answer, with the viewer's own stage marks
 * (engine decoded and instantiated, each commit's Parquet read: base64, Parquet decode, insert).
 */
export async function exportBenchmark(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  const browser = await launchChromium();
  try {
    for (const samples of SIZES) {
      const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-export-"));
      try {
        initWorkspace(dir).close();
        const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "cli" };
        const profile = path.join(dir, "big.cpuprofile");
        await cpuprofileFile(profile, samples, 2_000);
        const run = await callService(importArtifact, ctx, { path: profile });
        const inv = await callService(createInvestigation, ctx, { title: `Export of ${samples} samples`, question: "How large is the export?" });
        await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "note", content: { markdown: "The hot path, for review." } });
        await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: run.run_id } });
        await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "sql", content: { sql: "SELECT count(*) AS samples FROM samples" } });
        const ws = openWorkspace(ctx.locator, { readonly: true });
        const parquetBytes = (ws.db.prepare("SELECT coalesce(sum(size_bytes), 0) AS n FROM generation_files").get() as { n: number }).n;
        const nativeBytes = statSync(profile).size;
        ws.close();

        const out = path.join(dir, "export.html");
        const started = performance.now();
        const r = await callService(createExport, ctx, { subject: { kind: "investigation", investigation_id: inv.investigation_id }, out });
        const exportMs = performance.now() - started;
        const evidenceParts = r.parts.filter((p) => p.name.startsWith("evidence/")).reduce((n, p) => n + p.size_bytes, 0);

        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        await context.setOffline(true);
        await context.route("**/*", (route) => (route.request().url().startsWith("file:") ? route.continue() : route.abort()));
        const page = await context.newPage();
        const opened = performance.now();
        await page.goto(`file://${out}`);
        await page.locator("[data-testid=export-viewer]").waitFor({ timeout: 120_000 });
        const firstPaintMs = performance.now() - opened;
        await page.locator("[data-testid=flame-canvas]").waitFor({ timeout: 300_000 });
        const flameMs = performance.now() - opened;
        await page.locator("[data-testid=export-flame][data-source=live] [data-testid=flame-canvas]").waitFor({ timeout: 300_000 });
        const liveFlameMs = performance.now() - opened;
        await page.locator("[data-testid=export-sql-cell][data-state=done]").waitFor({ timeout: 300_000 });
        const sqlMs = performance.now() - opened;
        // Where the time went, by the page's own clock (ms from navigation start): the viewer's marks.
        const marks = await page.evaluate(() =>
          performance
            .getEntriesByType("mark")
            .filter((m) => m.name.startsWith("emberscope:"))
            .map((m) => ({ name: m.name.replace(/^emberscope:/, "").replace(/:cmt_[0-9a-z]+$/, ""), at: Math.round(m.startTime), detail: (m as PerformanceMark).detail ?? undefined })),
        );
        const stage = (name: string) => marks.find((m) => m.name === name)?.at ?? null;
        await context.close();

        results.push({
          samples,
          export_ms: Math.round(exportMs),
          file_bytes: statSync(out).size,
          evidence_bytes_in_export: evidenceParts,
          workspace_parquet_bytes: parquetBytes,
          workspace_native_bytes: nativeBytes,
          // By the page's clock: the notebook drawn, and the flame cell's summary drawn.
          open_offline_first_paint_ms: stage("export-painted"),
          open_offline_flame_summary_drawn_ms: stage("flame-paint"),
          // As Playwright saw them (its checks wait while the page's main thread is busy decoding).
          open_offline_first_paint_observed_ms: Math.round(firstPaintMs),
          open_offline_flame_drawn_observed_ms: Math.round(flameMs),
          open_offline_live_flame_drawn_ms: Math.round(liveFlameMs),
          open_offline_sql_done_ms: Math.round(sqlMs),
          open_offline_stages_ms: marks,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await browser.close();
  }
  return { runs: results };
}
