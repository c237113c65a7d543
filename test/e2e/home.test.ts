import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, screenshotPath, newWatchedPage } from "../helpers/browser";
import { tempProject } from "../helpers/project";
import { seedImport } from "../helpers/seed";
import { startServer } from "../helpers/server";

function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("home page in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("shows the workspace, HEAD and the runs of a seeded project", async () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    const seeded = [];
    for (const title of ["checkout service, cold start", "checkout service, warm", "batch import of nightly trace"]) {
      seeded.push(await seedImport(ws, { title, native: `main;${title} 1` }));
    }
    ws.close();
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 760 } });
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      await page.goto(server.url);
      await expect.poll(() => page.locator("[data-testid=runs-table] tbody tr").count()).toBe(3);
      const head = seeded[2].published.commit_id;
      expect(await page.locator("[data-testid=pinned-commit]").innerText()).toContain(head);
      const facts = await page.locator("[data-testid=workspace-facts]").innerText();
      expect(facts).toMatch(/Runs\s+3/i);
      expect(facts).toMatch(/Commits\s+4/i);
      expect(await page.locator("[data-testid=runs-table] tbody tr").first().innerText()).toContain("batch import of nightly trace");
      expect(await page.locator("[data-testid=commits-table] tbody tr").count()).toBe(4);
      await page.screenshot({ path: screenshotPath("home-with-runs"), fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  });

  it("offers to create a missing workspace and shows the empty state after", async () => {
    const root = tempProject();
    const server = await startServer(root);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 600 } });
      await page.goto(server.url);
      const panel = page.locator("[data-testid=error-panel]");
      expect(await panel.innerText()).toContain("WORKSPACE_NOT_FOUND");
      expect(await panel.innerText()).toContain("npx emberscope init");
      await page.screenshot({ path: screenshotPath("home-no-workspace") });
      await page.locator("[data-testid=recovery-button]").click();
      await page.locator("[data-testid=workspace-facts]").waitFor();
      expect(await page.locator("[data-testid=runs-empty]").innerText()).toContain("No runs yet.");
      await page.screenshot({ path: screenshotPath("home-empty") });
      await page.close();
    } finally {
      await server.stop();
    }
  });

  it("refuses tRPC requests from a foreign Origin or Host", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const server = await startServer(root);
    try {
      const url = `${server.url}/api/trpc/workspace.status`;
      expect((await rawGet(url, {})).status).toBe(200);
      const foreignOrigin = await rawGet(url, { Origin: "http://attacker.example" });
      expect(foreignOrigin.status).toBe(403);
      expect(JSON.parse(foreignOrigin.body).error.data.error.code).toBe("UNAUTHORIZED");
      const rebound = await rawGet(url, { Host: "attacker.example:3000" });
      expect(rebound.status).toBe(403);
      const otherLocalPort = await rawGet(url, { Origin: "http://127.0.0.1:1" });
      expect(otherLocalPort.status).toBe(403);
      expect(JSON.parse(otherLocalPort.body).error.data.error.details.reason).toBe("origin_not_same");
      const sameOrigin = await rawGet(url, { Origin: server.url });
      expect(sameOrigin.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
