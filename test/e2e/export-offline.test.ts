import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROW_HEIGHT } from "../../components/flame/FlameCanvas";
import { openDuckDb, sqlString } from "../../server/evidence/duckdb";
import { addCell, callService, createInvestigation, importArtifact, type ServiceContext } from "../../server/services";
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

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-export-offline-"));
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    writeFileSync(path.join(root, "app.folded"), FOLDED);
    const run = await callService(importArtifact, ctx, { path: path.join(root, "app.folded") });
    const inv = await callService(createInvestigation, ctx, { title: "Where the time goes", question: "Which function is hot?" });
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "note", content: { markdown: "# Findings so far\n\nhash dominates **compute**." } });
    const flame = await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: run.run_id } });
    commitId = flame.commit_id!;
    await callService(addCell, ctx, { investigation_id: inv.investigation_id, kind: "sql", name: "self_by_name", content: { sql: SQL } });
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
    const canvas = page.locator("[data-testid=flame-canvas]").first();
    await canvas.waitFor({ timeout: 60_000 });
    await page.screenshot({ path: screenshotPath("export-offline") });
    const box = (await canvas.boundingBox())!;
    await page.mouse.click(box.x + 0.85 * box.width, box.y + 2 * ROW_HEIGHT + ROW_HEIGHT / 2);
    await expect.poll(() => page.locator("[data-testid=flame-breadcrumb]").innerText()).toMatch(/main\s*›\s*render/);
    await page.screenshot({ path: screenshotPath("export-offline-zoomed") });

    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);
});
