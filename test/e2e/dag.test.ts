import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { callService, importArtifact } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { launchChromium, newWatchedPage, screenshotPath } from "../helpers/browser";
import { REPO_ROOT, runCli } from "../helpers/cli";
import { tempProject } from "../helpers/project";
import { startServer, type RunningServer } from "../helpers/server";

const ctxFor = (root: string) => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });
const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "agent-traces");
const MS = 1_000_000;

async function projectWith(files: Record<string, (file: string) => void>) {
  const root = tempProject();
  initWorkspace(root).close();
  const runs: Record<string, string> = {};
  for (const [name, write] of Object.entries(files)) {
    const file = path.join(root, name);
    write(file);
    runs[name] = (await callService(importArtifact, ctxFor(root), { path: file })).run_id;
  }
  return { root, runs };
}

const fixture = (name: string) => (file: string) => copyFileSync(path.join(FIXTURES, name), file);

/** `emberscope critical-path RUN --json …` in a child process: the server's side of the comparison. */
async function cliCriticalPath(root: string, args: string[]) {
  const out = await runCli(["critical-path", ...args, "--json", "--limit", "5000"], { cwd: root });
  expect(out.code, out.stderr).toBe(0);
  return out.json as { sequential_ns: number; critical_path_ns: number; speedup_bound: number; path: { id: string; name: string }[]; operations: { service: string; operation: string; critical_ns: number; count: number }[]; trace?: string };
}

/** The figures the page shows, exactly (data attributes). */
async function pageFigures(page: Page) {
  const figures = page.locator("[data-testid=cp-figures]");
  return {
    sequential_ns: Number(await figures.locator("[data-testid=fig-sequential]").getAttribute("data-ns")),
    critical_path_ns: Number(await figures.locator("[data-testid=fig-critical]").getAttribute("data-ns")),
    speedup_bound: Number(await figures.locator("[data-testid=fig-bound]").getAttribute("data-value")),
  };
}

async function openDag(page: Page, server: RunningServer, runId: string, query = "") {
  await page.goto(`${server.url}/runs/${runId}?view=dag${query}`);
  const view = page.locator("[data-testid=dag-view]:not([data-state=loading])");
  await view.waitFor({ timeout: 90_000 });
  return view;
}

/**
 * Starts `serve` over the project, opens a page (its uncaught errors collected) and runs `use`;
 * the page must end without errors.
 */
async function inBrowser(browser: Browser, root: string, viewport: { width: number; height: number }, use: (page: Page, server: RunningServer) => Promise<void>) {
  const server = await startServer(root);
  try {
    const { page, errors } = await newWatchedPage(browser, { viewport });
    await use(page, server);
    expect(errors).toEqual([]);
    await page.close();
  } finally {
    await server.stop();
  }
}

const pathOf = async (page: Page) => (await page.locator("[data-testid=dag-view]").getAttribute("data-path"))!.split(",");

describe("DAG view (critical path computed in the page over DuckDB-WASM)", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("highlights the expected critical path of a Claude Code session, with the CLI's figures, and recomputes them for a what-if", async () => {
    const { root, runs } = await projectWith({ "session.jsonl": fixture("claude-code-session.jsonl") });
    const run = runs["session.jsonl"];
    await inBrowser(browser, root, { width: 1400, height: 1100 }, async (page, server) => {
      const view = await openDag(page, server, run);
      expect(await view.getAttribute("data-state")).toBe("ready");
      expect(await view.getAttribute("data-kind")).toBe("workflow");

      // The compiler's nodes (compile.test.ts): n1 Read 500 ms, n2 Grep 1000 ms, n3 Read 150 ms
      // (toolu_04), n4 Task 4000 ms of which its subagent's n5 Grep 400 ms and n6 Read 100 ms,
      // so 3500 ms its own, n7 MultiEdit 300 ms. Unreviewed, every link stays: n3 after n1 and
      // n2 (ends 1000 → 1150), n5 after n1–n3 (→ 1550), n6 after n5 (→ 1650), n4 after n1–n3
      // and its children n5, n6 (→ 5150), n7 after n2 and n4 (→ 5450). Each step's critical
      // predecessor finishes last: n7 ← n4 ← n6 ← n5 ← n3 ← n2 (1000 ms beats n1's 500 ms).
      const expected = ["n2", "n3", "n5", "n6", "n4", "n7"];
      expect(await pathOf(page)).toEqual(expected);
      const highlighted = await page.locator("[data-testid=dag-node][data-on-path=true]").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-node")));
      expect(highlighted.sort()).toEqual([...expected].sort());
      expect(await page.locator("[data-testid=dag-node]").count()).toBe(7);
      const edgesOnPath = await page.locator(".dag-edge.on-path").count();
      expect(edgesOnPath).toBe(expected.length - 1);

      // The same numbers as the server, by the CLI; and as written out above.
      const cli = await cliCriticalPath(root, [run]);
      const figures = await pageFigures(page);
      expect(figures).toEqual({ sequential_ns: cli.sequential_ns, critical_path_ns: cli.critical_path_ns, speedup_bound: cli.speedup_bound });
      expect(figures.sequential_ns).toBe(5950 * MS);
      expect(figures.critical_path_ns).toBe(5450 * MS);
      expect(cli.path.map((p) => p.id)).toEqual(expected);

      // Blocked: Claude Code does not say which tools only read.
      expect(await page.locator("[data-testid=workflow-status]").getAttribute("data-status")).toBe("blocked");
      expect(await page.locator("[data-testid=blocked-tools] li").allInnerTexts()).toEqual(["Grep", "MultiEdit", "Read", "Task"].map((t) => `emberscope tools review ${t} --read-only`));
      expect(await page.locator("[data-testid=compile-notice]").innerText()).toContain("not a proof");
      expect(await page.locator("[data-testid=compile-counts] summary").innerText()).toContain("10 calls → 7 nodes, 16 edges · 3 filtered · 0 deduplicated · 0 ties");

      // The Gantt marks the path's calls.
      await expect.poll(() => page.locator("[data-testid=dag-gantt-canvas]").getAttribute("data-path-bars")).toBe("6");

      // A node's panel: the MultiEdit's file_path reads line 1 of the Grep's result; the link selects the Grep.
      await page.locator("[data-testid=dag-node][data-node=n7]").click();
      const panel = page.locator("[data-testid=node-panel]");
      await expect.poll(() => panel.getAttribute("data-node")).toBe("n7");
      expect(await panel.locator("[data-testid=node-call-ids]").innerText()).toBe("toolu_06");
      expect(await panel.locator("[data-testid=node-side-effect]").innerText()).toContain("unknown");
      expect(await panel.locator("[data-testid=node-arguments]").innerText()).toContain('"new_string": "return a + b;"');
      await page.screenshot({ path: screenshotPath("dag-view-claude"), fullPage: true });
      await panel.locator("[data-testid=template-ref][data-ref=n2]").click();
      await expect.poll(() => panel.getAttribute("data-node")).toBe("n2");
      expect(await panel.locator("[data-testid=node-result]").innerText()).toBe("Found 1 file\n/home/dev/calc/src/sum.ts");
      expect(new URL(page.url()).searchParams.get("node")).toBe("n2");

      // What if n3 (the repeated Read, 150 ms) took no time: n5 then starts when n2 ends (1000 ms),
      // n2 and n3 finishing together, and n2 (the lower index) is its critical predecessor. The
      // path skips n3: 1000 + 400 + 100 + 3500 + 300 = 5300 ms of 5800 ms.
      await page.locator("[data-testid=cp-path] button", { hasText: "n3 Read" }).click();
      await expect.poll(() => panel.getAttribute("data-node")).toBe("n3");
      await panel.locator("[data-testid=what-if-ms]").fill("0");
      await panel.locator("[data-testid=what-if-apply]").click();
      await expect.poll(() => pathOf(page)).toEqual(["n2", "n5", "n6", "n4", "n7"]);
      const whatIf = await pageFigures(page);
      const cliWhatIf = await cliCriticalPath(root, [run, "--what-if", "n3=0"]);
      expect(whatIf).toEqual({ sequential_ns: cliWhatIf.sequential_ns, critical_path_ns: cliWhatIf.critical_path_ns, speedup_bound: cliWhatIf.speedup_bound });
      expect([whatIf.sequential_ns, whatIf.critical_path_ns]).toEqual([5800 * MS, 5300 * MS]);
      expect(await page.locator("[data-testid=dag-node][data-node=n3]").getAttribute("data-on-path")).toBe("false");
      expect(new URL(page.url()).searchParams.get("whatif")).toBe("n3:0");
      await page.screenshot({ path: screenshotPath("dag-view-what-if"), fullPage: true });

      await panel.locator("[data-testid=what-if-reset]").click();
      await expect.poll(() => pathOf(page)).toEqual(expected);
      expect(await pageFigures(page)).toEqual(figures);
    });
  }, 180_000);

  it("compiles with the tools a person reviewed: merged reads, reads in parallel, the CLI's numbers", async () => {
    const { root, runs } = await projectWith({ "session.jsonl": fixture("claude-code-session.jsonl") });
    const run = runs["session.jsonl"];
    for (const tool of ["Read", "Grep"]) expect((await runCli(["tools", "review", tool, "--read-only", "--json"], { cwd: root })).code).toBe(0);
    await inBrowser(browser, root, { width: 1400, height: 1100 }, async (page, server) => {
      await openDag(page, server, run);
      // compile.test.ts: n1 Read (toolu_01 + toolu_04), n2 Grep, n3 Task, n4 Grep, n5 Read, n6
      // MultiEdit; the subagent's reads no longer wait for anything, so the Task starts when n2
      // ends (1000 ms), takes its own 3500 ms, and the MultiEdit 300 ms: n2 → n3 → n6, 4800 ms.
      expect(await pathOf(page)).toEqual(["n2", "n3", "n6"]);
      expect(await page.locator("[data-testid=dag-node]").count()).toBe(6);
      const cli = await cliCriticalPath(root, [run]);
      expect(await pageFigures(page)).toEqual({ sequential_ns: cli.sequential_ns, critical_path_ns: cli.critical_path_ns, speedup_bound: cli.speedup_bound });
      expect(cli.critical_path_ns).toBe(4800 * MS);
      expect(await page.locator("[data-testid=blocked-tools] li").allInnerTexts()).toEqual(["MultiEdit", "Task"].map((t) => `emberscope tools review ${t} --read-only`));
      await page.locator("[data-testid=dag-node][data-node=n1]").click();
      expect(await page.locator("[data-testid=node-call-ids]").innerText()).toContain("toolu_01, toolu_04");
      expect(await page.locator("[data-testid=node-side-effect]").innerText()).toContain("reviewed by a person");
    });
  }, 120_000);

  it("shows a Jaeger trace's span critical path (figures, operations, flame graph, trace picker) as the CLI computes it, and marks its spans in the trace window", async () => {
    // The fixture's trace, and a copy of it twice as slow (every span's start and duration
    // scaled about the trace's start) under another trace id, a second later.
    type JaegerSpan = { traceID: string; spanID: string; startTime: number; duration: number; references: { traceID: string; spanID: string }[] };
    const jaeger = JSON.parse(readFileSync(path.join(FIXTURES, "jaeger-checkout.json"), "utf8")) as { data: { traceID: string; spans: JaegerSpan[] }[] };
    const first = jaeger.data[0];
    const slowId = "5c0ffee00000000000000000000000aa";
    const t0 = Math.min(...first.spans.map((s) => s.startTime));
    const slow = structuredClone(first);
    slow.traceID = slowId;
    for (const span of slow.spans) {
      span.traceID = slowId;
      span.spanID = `${span.spanID}x`;
      span.startTime = t0 + 1_000_000 + 2 * (span.startTime - t0);
      span.duration *= 2;
      for (const ref of span.references) Object.assign(ref, { traceID: slowId, spanID: `${ref.spanID}x` });
    }
    const { root, runs } = await projectWith({ "traces.json": (file) => writeFileSync(file, JSON.stringify({ data: [first, slow] })) });
    const run = runs["traces.json"];
    await inBrowser(browser, root, { width: 1400, height: 1100 }, async (page, server) => {
      const view = await openDag(page, server, run);
      expect(await view.getAttribute("data-kind")).toBe("spans");
      // Default: the trace with the longest path, as the CLI picks it.
      const cli = await cliCriticalPath(root, [run]);
      expect(await view.getAttribute("data-trace")).toBe(slowId);
      expect(cli.trace).toBe(slowId);
      expect(await pageFigures(page)).toEqual({ sequential_ns: cli.sequential_ns, critical_path_ns: cli.critical_path_ns, speedup_bound: cli.speedup_bound });
      expect(await pathOf(page)).toEqual(cli.path.map((p) => p.id));
      const operations = await page.locator("[data-testid=cp-operations] tbody tr").evaluateAll((trs) =>
        trs.map((tr) => {
          const td = tr.querySelectorAll("td");
          return { service: td[0].textContent, operation: td[1].textContent, critical_ns: Number(td[2].getAttribute("data-ns")), count: Number(td[3].textContent) };
        }),
      );
      expect(operations).toEqual(cli.operations.map((o) => ({ service: o.service, operation: o.operation, critical_ns: o.critical_ns, count: o.count })));
      await page.locator("[data-testid=cp-flame] [data-testid=flame-canvas]").waitFor({ timeout: 30_000 });

      // The other trace, picked in the page and named to the CLI.
      await page.locator("[data-testid=cp-trace-picker]").selectOption(first.traceID);
      await expect.poll(() => view.getAttribute("data-trace")).toBe(first.traceID);
      const cliFirst = await cliCriticalPath(root, [run, "--trace", first.traceID]);
      expect(await pageFigures(page)).toEqual({ sequential_ns: cliFirst.sequential_ns, critical_path_ns: cliFirst.critical_path_ns, speedup_bound: cliFirst.speedup_bound });
      expect(cliFirst.critical_path_ns * 2).toBe(cli.critical_path_ns);
      await page.screenshot({ path: screenshotPath("dag-view-jaeger"), fullPage: true });

      // The trace window marks the spans on the critical paths, and the toggle takes the marks away.
      await page.locator("[data-testid=tab-trace]").click();
      const toggle = page.locator("[data-testid=trace-cp-toggle][data-state=ready]");
      await toggle.waitFor({ timeout: 60_000 });
      const marked = Number((await toggle.innerText()).match(/\((\d+) spans\)/)![1]);
      expect(marked).toBeGreaterThanOrEqual(cli.path.length + cliFirst.path.length);
      const canvas = page.locator("[data-testid=trace-canvas]");
      await expect.poll(() => canvas.getAttribute("data-marked")).toBe(String(marked));
      await page.screenshot({ path: screenshotPath("trace-window-critical-path"), fullPage: true });
      await toggle.locator("input").uncheck();
      await expect.poll(() => canvas.getAttribute("data-marked")).toBe("0");
      expect(new URL(page.url()).searchParams.get("cp")).toBe("off");
    });
  }, 180_000);

  it("names the calls of a dependency cycle with CYCLE_DETECTED, and offers the view only for runs with spans", async () => {
    const cyclic = {
      format: "emberscope.trace",
      version: 1,
      events: [
        { id: "a", tool: "plan", status: "ok", side_effect: "write", start: 0, duration_ms: 1, after: ["c"], result: "one1" },
        { id: "b", tool: "build", status: "ok", side_effect: "write", start: 2, duration_ms: 1, after: ["a"], result: "two2" },
        { id: "c", tool: "ship", status: "ok", side_effect: "write", start: 4, duration_ms: 1, after: ["b"], result: "three" },
      ],
    };
    const { root, runs } = await projectWith({
      "cycle.trace.json": (file) => writeFileSync(file, JSON.stringify(cyclic)),
      "profile.folded": (file) => writeFileSync(file, "main;work 10\nmain;idle 5\n"),
    });
    await inBrowser(browser, root, { width: 1280, height: 900 }, async (page, server) => {
      const view = await openDag(page, server, runs["cycle.trace.json"]);
      expect(await view.getAttribute("data-state")).toBe("error");
      expect(await page.locator("[data-testid=error-panel] .code").innerText()).toBe("CYCLE_DETECTED");
      expect(await page.locator("[data-testid=cycle-calls] li").allInnerTexts()).toEqual(["a plan", "b build", "c ship"]);
      const cli = await runCli(["critical-path", runs["cycle.trace.json"], "--json"], { cwd: root });
      expect(cli.json.code).toBe("CYCLE_DETECTED");
      await page.screenshot({ path: screenshotPath("dag-view-cycle"), fullPage: true });

      // A profile of samples has no spans: no critical-path tab, and ?view=dag falls back to the flame graph.
      await page.goto(`${server.url}/runs/${runs["profile.folded"]}?view=dag`);
      await page.locator("[data-testid=view-tabs]").waitFor();
      expect(await page.locator("[data-testid=tab-dag]").count()).toBe(0);
      expect(await page.locator("[data-testid=tab-flame]").getAttribute("aria-current")).toBe("page");
    });
  }, 120_000);
});
