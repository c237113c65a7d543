import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Ajv from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { callService, listRuns, showRun, summarizeRun } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { REPO_ROOT, runCli } from "../helpers/cli";
import { demoProject, waitFor } from "../helpers/demo";
import { tempProject } from "../helpers/project";
import { rawRequest, startServer } from "../helpers/server";

const ctxFor = (root: string) => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });
const WIDTHS = [1440, 1024] as const;

/** A workload whose process tree has a child, a grandchild and a child that left the group (setsid); it writes their pids and never ends. */
const TREE = `import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const keep = ["-e", "setInterval(() => {}, 1000)"];
const child = spawn(process.execPath, ["-e", \`const g = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); require("node:fs").writeFileSync("grandchild.pid", String(g.pid)); setInterval(() => {}, 1000);\`], { stdio: "ignore" });
const loner = spawn(process.execPath, keep, { stdio: "ignore", detached: true });
writeFileSync("tree.pids", JSON.stringify({ leader: process.pid, child: child.pid, loner: loner.pid }));
setInterval(() => {}, 1000);
`;

const PLANTED_TOKEN = `ghp_${"Zx9Yw8Vu7T".repeat(4)}`;
/** A workload that fails loudly: many stderr lines, one with a planted token and one with a path outside the project. */
const LOUD = `for (let i = 0; i < 45; i++) console.error("warming cache " + i);
console.error("using GITHUB_TOKEN=${PLANTED_TOKEN}");
console.error("cannot read /opt/elsewhere/private.yml");
console.error("fatal: database refused the connection");
process.exit(2);
`;

const EXTRA_TOML = `
[workloads.tree]
description = "Starts a process tree and never ends (cancel)."
argv = ["node", "tree.mjs"]
timeout = 120

[workloads.loud]
description = "Fails with a long stderr."
argv = ["node", "loud.mjs"]
timeout = 30
`;

/** Whether a pid is a live process (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(150);
    await page.screenshot({ path: screenshotPath(`daily-${name}-${width}`), fullPage: true });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

async function planAndExecute(page: Page, workload: string, adapter = "node-cpuprofile"): Promise<void> {
  const panel = page.locator("[data-testid=capture-panel]");
  await panel.locator("[data-testid=capture-workload]").selectOption(workload);
  await panel.locator("[data-testid=capture-adapter]").selectOption(adapter);
  await panel.locator("[data-testid=capture-plan]").click();
  await panel.locator("[data-testid=capture-execute]").click();
}

/** Drops files on the import zone as a person would: one DataTransfer carrying every file. */
async function dropFiles(page: Page, files: { name: string; text: string }[]): Promise<void> {
  await page.locator("[data-testid=import-dropzone]").evaluate((zone, list) => {
    const transfer = new DataTransfer();
    for (const f of list) transfer.items.add(new File([f.text], f.name, { type: "text/plain" }));
    zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, files);
}

describe("daily use: failures that say why, captures, export and share (issue 21 items 4–6)", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("cancel from the UI ends the workload's whole process tree; elapsed and timeout are shown; counts update live", async () => {
    const root = demoProject(EXTRA_TOML);
    writeFileSync(path.join(root, "tree.mjs"), TREE);
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(server.url);
      await planAndExecute(page, "tree");
      const pidsFile = path.join(root, "tree.pids");
      await waitFor(() => existsSync(pidsFile) && existsSync(path.join(root, "grandchild.pid")), (ok) => ok, 30_000);
      const pids = JSON.parse(readFileSync(pidsFile, "utf8")) as Record<string, number>;
      pids.grandchild = Number(readFileSync(path.join(root, "grandchild.pid"), "utf8"));
      expect(Object.values(pids).every(alive)).toBe(true);

      const clock = page.locator("[data-testid=capture-progress] [data-testid=capture-clock]");
      await clock.waitFor();
      expect(await clock.getAttribute("data-timeout-s")).toBe("120");
      await expect.poll(async () => Number(await clock.getAttribute("data-elapsed-s")), { timeout: 10_000 }).toBeGreaterThan(0.5);
      expect(await clock.innerText()).toMatch(/\d+\.\d s of 2 min 00 s timeout/);
      // The page's facts count the running capture without a reload.
      await expect.poll(() => page.locator("[data-testid=workspace-facts]").innerText(), { timeout: 15_000 }).toMatch(/Active operations\s*1/i);
      await shoot(page, "capture-running");

      await page.locator("[data-testid=capture-progress] [data-testid=cancel-operation]").click();
      await page.locator("[data-testid=capture-panel] [data-testid=error-panel]").waitFor({ timeout: 20_000 });
      expect(await page.locator("[data-testid=capture-panel] [data-testid=error-panel]").innerText()).toContain("CANCELLED");
      await waitFor(() => Object.values(pids).filter(alive), (left) => left.length === 0, 10_000);
      await expect.poll(() => page.locator("[data-testid=workspace-facts]").innerText(), { timeout: 15_000 }).toMatch(/Active operations\s*0/i);
      const runs = await callService(listRuns, ctxFor(root), { limit: 5 });
      expect(runs.items[0]).toMatchObject({ status: "cancelled" });
      await page.locator("[data-testid=capture-failed-run]").click();
      await page.locator("[data-testid=run-failure]").waitFor();
      expect(await page.locator("[data-testid=run-failure] h2").textContent()).toBe("This run was cancelled");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 150_000);

  it("a failing capture's page shows the typed error, its recovery and the end of stderr with the planted secret redacted", async () => {
    const root = demoProject(EXTRA_TOML);
    writeFileSync(path.join(root, "loud.mjs"), LOUD);
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(server.url);
      await planAndExecute(page, "loud");
      await page.locator("[data-testid=capture-failed-run]").click();
      const failure = page.locator("[data-testid=run-failure]");
      await failure.waitFor({ timeout: 30_000 });
      const text = await failure.innerText();
      expect(text).toMatch(/This run failed/i);
      expect(text).toContain("PROCESS_FAILED");
      expect(text).toContain("exited with code 2");
      expect(text).toContain("npx emberscope capture run node-cpuprofile --workload loud");
      const stderr = await failure.locator("[data-testid=run-failure-stderr] pre").innerText();
      expect(stderr.split("\n").at(-1)).toBe("fatal: database refused the connection");
      expect(stderr).not.toContain(PLANTED_TOKEN);
      expect(stderr).not.toContain("/opt/elsewhere");
      expect(stderr).toMatch(/GITHUB_TOKEN=SECRET_[0-9a-f]{6}/);
      expect(stderr).toMatch(/PATH_[0-9a-f]{6}/);
      expect(await failure.innerText()).toMatch(/earlier not shown/);
      expect(await page.content()).not.toContain(PLANTED_TOKEN);
      await shoot(page, "run-failed");
      // The recovery opens the capture panel with the same workload and adapter.
      await failure.locator("[data-testid=run-failure-capture-again]").click();
      await page.waitForURL(/workload=loud/);
      expect(await page.locator("[data-testid=capture-workload]").inputValue()).toBe("loud");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("an import the format detection cannot place offers the format picker; picking one imports it and the run opens; several dropped files make as many runs", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1440, height: 900 } });
      await page.goto(server.url);
      // Folded stacks whose frames hold spaces (C++ names): no format claims the first line.
      await page.locator("[data-testid=import-file-input]").setInputFiles({ name: "native.dat", mimeType: "application/octet-stream", buffer: Buffer.from("operator new 5\nstd::sort helper 7\n") });
      const picker = page.locator("[data-testid=import-format-picker]");
      await picker.waitFor({ timeout: 30_000 });
      const panelText = await page.locator("[data-testid=import-status] [data-testid=error-panel]").innerText();
      expect(panelText).toContain("UNSUPPORTED_FORMAT");
      expect(panelText).not.toContain("--format");
      await shoot(page, "import-format-picker");
      await picker.locator("[data-testid=import-format]").selectOption("folded");
      await picker.locator("[data-testid=import-format-retry]").click();
      // The one file, imported as the chosen format, opens its run by itself.
      await page.waitForURL(/\/runs\/run_/, { timeout: 30_000 });
      await page.locator("canvas").first().waitFor();
      const runId = /\/runs\/(run_[0-9a-z]+)/.exec(page.url())![1];
      const summary = await callService(summarizeRun, ctxFor(root), { run_id: runId });
      expect(summary.metrics.find((m) => m.name === "samples")?.total).toBe(12);

      await page.goto(server.url);
      await dropFiles(page, [
        { name: "one.folded", text: "main;a 1\n" },
        { name: "two.folded", text: "main;b 2\n" },
        { name: "three.folded", text: "main;c 3\n" },
      ]);
      await expect.poll(() => page.locator("[data-testid=import-entry][data-phase=done]").count(), { timeout: 60_000 }).toBe(3);
      expect(await page.locator("[data-testid=import-batch]").innerText()).toContain("3 of 3 files imported");
      const runs = await callService(listRuns, ctxFor(root), { limit: 10 });
      expect(runs.items.map((r) => r.title).sort()).toEqual(["native.dat", "one.folded", "three.folded", "two.folded"]);
      // The runs list shows them without a reload.
      await expect.poll(() => page.locator("[data-testid=runs-table] tbody tr").count(), { timeout: 15_000 }).toBe(4);
      await shoot(page, "multi-drop");

      // Live: a run imported from the CLI appears in the list without a reload.
      writeFileSync(path.join(root, "cli.folded"), "main;d 4\n");
      expect((await runCli(["import", "cli.folded", "--json"], { cwd: root })).code).toBe(0);
      await expect.poll(() => page.locator("[data-testid=runs-table] tbody tr").count(), { timeout: 15_000 }).toBe(5);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 150_000);

  it("exports the flame graph as SVG and PNG, the run as speedscope JSON that validates and re-imports with equal totals, the original file, and copies a link that pins the commit", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const folded = "main;parse;tokenize 30\nmain;parse;hotLoop 120\nmain;render 25\nmain;hotLoop 5\n";
    writeFileSync(path.join(root, "app.folded"), folded);
    const imported = (await runCli(["import", "app.folded", "--json"], { cwd: root })).json as { run_id: string; commit_id: string };
    const server = await startServer(root);
    try {
      const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(`${server.url}/runs/${imported.run_id}?q=parse`);
      await page.locator("[data-testid=export-svg]").waitFor({ timeout: 30_000 });

      const save = async (testid: string) => {
        const [download] = await Promise.all([page.waitForEvent("download"), page.locator(`[data-testid=${testid}]`).click()]);
        const file = path.join(root, `dl-${testid}-${download.suggestedFilename()}`);
        await download.saveAs(file);
        return { name: download.suggestedFilename(), bytes: readFileSync(file) };
      };
      const svg = await save("export-svg");
      expect(svg.name).toBe("app.flame.svg");
      const svgText = svg.bytes.toString("utf8");
      for (const name of ["main", "parse", "tokenize", "hotLoop", "render"]) expect(svgText).toContain(`<title>${name}`);
      expect(svgText).toContain(imported.commit_id);
      const png = await save("export-png");
      expect(png.name).toBe("app.flame.png");
      expect(png.bytes.length).toBeGreaterThan(2000);
      expect(png.bytes.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");

      const speedscope = await save("export-speedscope");
      expect(speedscope.name).toBe("app.speedscope.json");
      const file = JSON.parse(speedscope.bytes.toString("utf8")) as { profiles: { samples: number[][]; weights: number[] }[]; shared: { frames: { name: string }[] } };
      const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, "test", "fixtures", "speedscope", "file-format-schema.json"), "utf8")) as object;
      const validate = new Ajv({ strict: false }).compile(schema);
      expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
      // Independent reading of the download: the folded file's total, and tokenize's own 30.
      const weights = file.profiles.flatMap((p) => p.weights);
      expect(weights.reduce((a, b) => a + b, 0)).toBe(180);
      const leafTotals = new Map<string, number>();
      for (const p of file.profiles) p.samples.forEach((s, i) => leafTotals.set(file.shared.frames[s.at(-1)!].name, (leafTotals.get(file.shared.frames[s.at(-1)!].name) ?? 0) + p.weights[i]));
      expect(leafTotals.get("tokenize")).toBe(30);
      const back = path.join(root, "back.speedscope.json");
      writeFileSync(back, speedscope.bytes);
      const again = (await runCli(["import", back, "--json"], { cwd: root })).json as { run_id: string; format: string };
      expect(again.format).toBe("speedscope");
      const summary = await callService(summarizeRun, ctxFor(root), { run_id: again.run_id });
      expect(summary.metrics.find((m) => m.name === "samples")?.total).toBe(180);

      const original = await save("export-artifact");
      expect(original.name).toBe("app.folded");
      expect(original.bytes.toString("utf8")).toBe(folded);

      await page.locator("[data-testid=copy-link]").click();
      const link = await page.locator("[data-testid=copied-link-text]").inputValue();
      const url = new URL(link);
      expect(url.searchParams.get("commit")).toBe(imported.commit_id);
      expect(url.searchParams.get("q")).toBe("parse");
      expect(await page.locator("[data-testid=copied-link]").innerText()).toContain("this machine only");
      await shoot(page, "run-share");
      // The link opens the same view at the same commit, also after HEAD moved on.
      expect((await runCli(["import", "back.speedscope.json", "--json", "--format", "speedscope"], { cwd: root })).code).toBe(0);
      const other = await context.newPage();
      await other.goto(link);
      expect(await other.locator("[data-testid=view-commit]").innerText()).toBe(imported.commit_id);
      expect(await other.locator("[data-testid=run-title]").innerText()).toBe("app.folded");
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await server.stop();
    }
  }, 150_000);

  it("`emberscope open FILE` from a fresh directory imports it, starts the server, prints a URL that serves the run; a second open reuses the server", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-open-"));
    let serverPid: number | null = null;
    try {
      writeFileSync(path.join(dir, "fresh.folded"), "main;work 9\nmain;idle 1\n");
      const first = await runCli(["open", "fresh.folded"], { cwd: dir, env: { EMBERSCOPE_NO_BROWSER: "1" } });
      expect(first.code, first.stderr).toBe(0);
      const url = first.stdout.trim();
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/runs\/run_[0-9a-z]+$/);
      expect(first.stderr).toContain("Initialized a workspace");
      const page = await rawRequest(url);
      expect(page.status).toBe(200);
      expect(page.body).toContain("fresh.folded");
      const runId = url.split("/").pop()!;
      const run = await callService(showRun, ctxFor(dir), { run_id: runId });
      expect(run.title).toBe("fresh.folded");

      writeFileSync(path.join(dir, "second.folded"), "main;more 3\n");
      const second = await runCli(["open", "second.folded", "--json", "--no-browser"], { cwd: dir });
      expect(second.code, second.stderr).toBe(0);
      expect(second.json.server.reused).toBe(true);
      expect(second.json.url.startsWith(new URL(url).origin)).toBe(true);
      expect(second.json.browser_opened).toBe(false);
      serverPid = second.json.server.pid as number;
      const browserPage = await browser.newPage();
      await browserPage.goto(second.json.url as string);
      await browserPage.locator("canvas").first().waitFor({ timeout: 30_000 });
      expect(await browserPage.locator("[data-testid=run-title]").innerText()).toBe("second.folded");
      await browserPage.close();
    } finally {
      if (serverPid) {
        try {
          process.kill(serverPid, "SIGTERM");
        } catch {
          // already stopped
        }
        await waitFor(() => alive(serverPid!), (a) => !a, 10_000).catch(() => undefined);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
