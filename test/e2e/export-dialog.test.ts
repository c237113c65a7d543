import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCell, callService, createInvestigation, importArtifact, type ServiceContext } from "../../server/services";
import { verifyExport } from "../../server/services/exports";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { startServer, type RunningServer } from "../helpers/server";

/**
 * Issue 24's export dialog on the investigation page (needs `npm run build`): the preview counts
 * each kind with where it was first found; unticking a kind needs the person's session (refused
 * with the typed error without it); the download is the one-file export, whose manifest records
 * the person's choice and which verifies.
 */
const FOLDED = ["main;notify dana.k@example.org 30", "main;connect 10.20.30.40 20", "main;work 50"].join("\n");

describe("the export dialog", () => {
  let browser: Browser;
  let server: RunningServer;
  let root: string;
  let investigationId: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-export-dialog-"));
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    writeFileSync(path.join(root, "app.folded"), FOLDED);
    const run = await callService(importArtifact, ctx, { path: path.join(root, "app.folded") });
    const inv = await callService(createInvestigation, ctx, { title: "Mail path", question: "Who is slow?" });
    investigationId = inv.investigation_id;
    await callService(addCell, ctx, { investigation_id: investigationId, kind: "flame", content: { run_id: run.run_id } });
    server = await startServer(root);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("previews per kind, refuses widening without the person, and downloads the person's choice", async () => {
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    const { page, errors } = await newWatchedPage(context as unknown as Browser);
    await page.goto(`${server.url}/investigations/${investigationId}`);
    await page.locator("[data-testid=open-export]").click();
    await expect.poll(() => page.locator("[data-testid=export-count-EMAIL]").innerText(), { timeout: 30_000 }).toBe("1");
    expect(await page.locator("[data-testid=export-count-IP]").innerText()).toBe("1");
    expect(await page.locator("[data-kind=EMAIL] td.mono").innerText()).toMatch(/^frames\.name row \d+$/);
    await page.screenshot({ path: screenshotPath("export-dialog") });

    // Without the person's session, leaving e-mails unredacted is refused with the typed error.
    await page.locator("[data-testid=export-redact-EMAIL]").uncheck();
    await expect.poll(() => page.locator("[data-testid=export-dialog]").innerText(), { timeout: 30_000 }).toContain("PERSON_SESSION_REQUIRED");

    // Signed in as the person: the choice is accepted, previewed and recorded in the file.
    await page.goto(server.signInUrl);
    await page.goto(`${server.url}/investigations/${investigationId}`);
    await page.locator("[data-testid=open-export]").click();
    await expect.poll(() => page.locator("[data-testid=export-count-EMAIL]").innerText(), { timeout: 30_000 }).toBe("1");
    await page.locator("[data-testid=export-redact-EMAIL]").uncheck();
    await expect.poll(() => page.locator("[data-testid=export-sizes]").innerText(), { timeout: 30_000 }).toContain("person-widened");
    // The export is an operation: its progress shows, and Cancel ends it cancelled with nothing downloaded.
    await page.locator("[data-testid=export-download]").click();
    await page.locator("[data-testid=export-operation] [data-testid=operation-progress]").waitFor({ timeout: 30_000 });
    await page.locator("[data-testid=export-operation] [data-testid=cancel-operation]").click();
    await expect.poll(() => page.locator("[data-testid=export-operation]").getAttribute("data-state"), { timeout: 60_000 }).toBe("cancelled");
    expect(await page.locator("[data-testid=export-saved]").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("export-dialog-cancelled") });
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 120_000 }), page.locator("[data-testid=export-download]").click()]);
    expect(await page.locator("[data-testid=export-operation]").getAttribute("data-state")).toBe("succeeded");
    expect(await page.locator("[data-testid=export-operation]").innerText()).toMatch(/op_[0-9a-z]{26}/);
    const file = path.join(root, download.suggestedFilename());
    await download.saveAs(file);
    expect(download.suggestedFilename()).toBe("mail-path.emberscope.html");
    const verified = await callService(verifyExport, { locator: { cwd: root, projectRoot: root }, actor: "test" }, { file });
    expect(verified.redaction.choices.EMAIL).toBe("allow");
    expect(verified.redaction.choices.IP).toBe("redact");
    const html = readFileSync(file, "utf8");
    expect(html).toContain('"chosen_by":"person"');
    await page.locator("[data-testid=export-saved]").waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 240_000);
});
