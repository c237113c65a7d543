import { request } from "node:http";
import path from "node:path";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { hotspotsQuery } from "../../analysis/queries";
import { openEvidence } from "../../server/evidence/engine";
import { analyzeHotspots, callService, importArtifact, listCorpusFiles } from "../../server/services";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { cpuprofileFile } from "../bench/generators";
import { DUCKDB_WASM_VERSION, engineUrls } from "../../components/sql/engine";
import { PRESET_QUERIES } from "../../components/sql/presets";
import { launchChromium, screenshotPath, newWatchedPage } from "../helpers/browser";
import { tempProject } from "../helpers/project";
import { startServer } from "../helpers/server";

function rawRequest(url: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

const ctxFor = (root: string) => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });

/** The result table as rows of exact values (each cell keeps its value in data-value). */
async function resultRows(page: Page): Promise<Record<string, unknown>[]> {
  return page.locator("[data-testid=sql-result] tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Object.fromEntries([...tr.querySelectorAll("td")].map((td) => [td.dataset.column!, JSON.parse(td.dataset.value!)]))),
  );
}

describe("SQL over a pinned commit with DuckDB-WASM in the browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("the hotspots preset run by DuckDB-WASM returns exactly the rows the server's engine returns for the same query and parameters", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const file = path.join(root, "busy.cpuprofile");
    await cpuprofileFile(file, 20_000, 400);
    const ctx = ctxFor(root);
    const imported = await callService(importArtifact, ctx, { path: file });
    const serverHotspots = await callService(analyzeHotspots, ctx, { run_id: imported.run_id, limit: 20 });

    const server = await startServer(root);
    try {
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 1000 } });
      await page.goto(`${server.url}/sql?run=${imported.run_id}&preset=hotspots`);
      await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 60_000 });
      const params = JSON.parse(await page.locator("[data-testid=sql-preset-params]").innerText());
      expect(params).toMatchObject({ generations: [imported.generation_id], metric: serverHotspots.metric, limit: 20 });
      await page.locator("[data-testid=sql-run]").click();
      await page.locator("[data-testid=sql-result]").waitFor({ timeout: 30_000 });

      const meta = await page.locator("[data-testid=sql-result-meta]").innerText();
      expect(meta).toContain("DuckDB-WASM");
      expect(meta).toContain(imported.commit_id);
      expect(meta).toContain("rows match the hotspots row schema");

      const ws = openWorkspace(ctx.locator);
      try {
        const reader = await openEvidence(ws, imported.commit_id);
        const expected = await reader.run(hotspotsQuery, params);
        const actual = await resultRows(page);
        expect(actual.length).toBe(expected.length);
        expect(actual.length).toBe(20);
        for (let i = 0; i < expected.length; i++) {
          for (const [key, value] of Object.entries(expected[i])) {
            if (typeof value === "number" && !Number.isInteger(value)) expect(actual[i][key] as number).toBeCloseTo(value, 9);
            else expect(actual[i][key], `${key} of row ${i}`).toEqual(value);
          }
        }
        // The service the rest of the app uses agrees too (same frames, same order).
        expect(actual.map((r) => r.frame_key)).toEqual(serverHotspots.rows.map((r) => r.frame_key));
      } finally {
        ws.close();
      }
      await page.screenshot({ path: screenshotPath("sql-hotspots-preset"), fullPage: true });

      // Free SQL over the registered views, with an error state that says what to do.
      await page.locator("[data-testid=sql-preset]").selectOption("");
      await page.locator("[data-testid=sql-editor]").fill("SELECT count(*) AS samples FROM samples");
      await page.locator("[data-testid=sql-run]").click();
      await expect.poll(async () => (await resultRows(page))[0]?.samples).toBe(imported.rows.samples);
      await page.locator("[data-testid=sql-editor]").fill("SELECT nope FROM samples");
      await page.locator("[data-testid=sql-run]").click();
      expect(await page.locator("[data-testid=sql-error]").innerText()).toContain("Fix the SQL");
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("runs every preset in DuckDB-WASM with the rows the server's engine returns (samples, spans, flows and counters in one run)", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    // One trace with nested slices on three threads, a flow, counters and a V8 CPU profile.
    const events: object[] = [];
    for (let i = 0; i < 200; i++) {
      const tid = 1 + (i % 3);
      events.push({ name: `task${i % 9}`, cat: "work", ph: "X", pid: 1, tid, ts: i * 100, dur: 80, args: { i } });
      events.push({ name: `step${i % 4}`, cat: "work", ph: "X", pid: 1, tid, ts: i * 100 + 10, dur: 30 });
      events.push({ name: "Heap", ph: "C", pid: 1, ts: i * 100, args: { used: 1000 + i } });
    }
    events.push({ name: "send", ph: "s", id: 1, pid: 1, tid: 1, ts: 20 }, { name: "send", ph: "f", bp: "e", id: 1, pid: 1, tid: 2, ts: 120 });
    const nodes = [
      { id: 1, callFrame: { functionName: "(root)", url: "", scriptId: 0, lineNumber: -1, columnNumber: -1 } },
      { id: 2, parent: 1, callFrame: { functionName: "main", url: "file:///app.js", scriptId: 1, lineNumber: 1, columnNumber: 0 } },
      { id: 3, parent: 2, callFrame: { functionName: "hot", url: "file:///app.js", scriptId: 1, lineNumber: 9, columnNumber: 2 } },
      { id: 4, parent: 2, callFrame: { functionName: "cold", url: "file:///app.js", scriptId: 1, lineNumber: 20, columnNumber: 2 } },
    ];
    const samples = Array.from({ length: 150 }, (_, i) => (i % 5 === 0 ? 4 : 3));
    events.push({ name: "Profile", ph: "P", id: "0x1", pid: 1, tid: 1, ts: 0, args: { data: { startTime: 0 } } });
    events.push({ name: "ProfileChunk", ph: "P", id: "0x1", pid: 1, tid: 1, ts: 1, args: { data: { cpuProfile: { nodes, samples }, timeDeltas: samples.map(() => 100) } } });
    const file = path.join(root, "mixed.json");
    writeFileSync(file, JSON.stringify({ traceEvents: events }));
    const ctx = ctxFor(root);
    const imported = await callService(importArtifact, ctx, { path: file });
    // 150 samples, each a row per metric (samples and wall_ns).
    expect(imported.rows).toMatchObject({ samples: 300, spans: 400 });
    expect(imported.rows.edges).toBeGreaterThan(0);
    expect(imported.rows.measurements).toBeGreaterThan(0);

    const server = await startServer(root);
    const ws = openWorkspace(ctx.locator);
    try {
      const reader = await openEvidence(ws, imported.commit_id);
      const { page, errors } = await newWatchedPage(browser, { viewport: { width: 1280, height: 1000 } });
      await page.goto(`${server.url}/sql?run=${imported.run_id}`);
      await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 60_000 });
      const offered = await page.locator("[data-testid=sql-preset] option:not([disabled])").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
      // Every preset can be filled from a run that has every kind of evidence.
      expect(offered.sort()).toEqual(PRESET_QUERIES.map((q) => q.name).sort());
      for (const name of offered) {
        await page.locator("[data-testid=sql-preset]").selectOption(name);
        const params = JSON.parse(await page.locator("[data-testid=sql-preset-params]").innerText());
        await page.locator("[data-testid=sql-run]").click();
        // Until this preset's answer (or an error) replaces the previous one.
        const settled = async () => ((await page.locator("[data-testid=sql-error]").count()) > 0 ? "error" : ((await page.locator("[data-testid=sql-result-meta]").textContent()) ?? ""));
        await expect.poll(settled, { timeout: 30_000 }).toMatch(new RegExp(`error|the ${name} row schema`));
        expect(await page.locator("[data-testid=sql-error]").count(), `${name} failed in DuckDB-WASM: ${await page.locator("[data-testid=sql-error]").allInnerTexts()}`).toBe(0);
        const meta = await page.locator("[data-testid=sql-result-meta]").innerText();
        const query = PRESET_QUERIES.find((q) => q.name === name)!;
        const expected = (await reader.run(query, params)) as Record<string, unknown>[];
        const shown = Number(/^([\d,]+) row/.exec(meta)![1].replace(/,/g, ""));
        expect(shown, `${name}: row count`).toBe(expected.length);
        if (expected.length > 0 && expected.length <= 500) {
          // Same rows; compared as sets where a query leaves ties unordered.
          const actual = await resultRows(page);
          const canonical = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(Object.keys(expected[0]).map((k) => (typeof r[k] === "number" && !Number.isInteger(r[k]) ? Number((r[k] as number).toPrecision(9)) : r[k])))).sort();
          expect(canonical(actual), `${name}: rows`).toEqual(canonical(expected));
        }
      }
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      ws.close();
      await server.stop();
    }
  }, 240_000);

  it("an empty commit says how to get evidence", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const server = await startServer(root);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 700 } });
      await page.goto(`${server.url}/sql`);
      expect(await page.locator("[data-testid=sql-no-evidence]").innerText()).toContain("npx emberscope import");
      await page.locator("[data-testid=sql-console][data-state=ready]").waitFor({ timeout: 60_000 });
      await page.locator("[data-testid=sql-run]").click();
      await page.locator("[data-testid=sql-empty]").waitFor();
      await page.screenshot({ path: screenshotPath("sql-empty-commit") });
      await page.close();
    } finally {
      await server.stop();
    }
  }, 90_000);

  it("serves the engine itself at versioned URLs: immutable, application/wasm, never recompressed; the SQL page preloads the wasm", async () => {
    // The version in the URLs is the installed package's (scripts/copy-duckdb-wasm.js copies it there).
    const installed = JSON.parse(readFileSync(path.join(import.meta.dirname, "..", "..", "node_modules", "@duckdb", "duckdb-wasm", "package.json"), "utf8")).version;
    expect(DUCKDB_WASM_VERSION).toBe(installed);
    const urls = engineUrls();
    const root = tempProject();
    initWorkspace(root).close();
    const server = await startServer(root);
    try {
      for (const [file, type] of [
        [urls.eh.mainModule, "application/wasm"],
        [urls.eh.mainWorker, "application/javascript"],
        [urls.mvp.mainModule, "application/wasm"],
      ] as const) {
        const size = statSync(path.join(import.meta.dirname, "..", "..", "public", file)).size;
        // A browser asks for gzip/br; on-the-fly gzip of the 34 MB wasm cost ~2 s per cold start here.
        const res = await rawRequest(`${server.url}${file}`, { headers: { "Accept-Encoding": "gzip, deflate, br" } });
        expect(res.status, file).toBe(200);
        expect(res.headers["content-type"]).toContain(type);
        expect(res.headers["content-encoding"], file).toBeUndefined();
        expect(res.body.length).toBe(size);
        expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable, no-transform");
      }
      // Served on loopback, pages go uncompressed too (gzip on the fly costs the server's CPU, not the wire).
      const page = await rawRequest(`${server.url}/sql`, { headers: { "Accept-Encoding": "gzip, deflate, br" } });
      expect(page.headers["content-encoding"]).toBeUndefined();
      const html = page.body.toString();
      expect(html).toMatch(new RegExp(`<link rel="preload" href="${urls.eh.mainModule.replace(/\./g, "\\.")}" as="fetch" crossorigin=""`));
    } finally {
      await server.stop();
    }
    // --compress: a browser behind a tunnel to the loopback port gets gzip again (the wasm still never).
    const tunnelled = await startServer(root, ["--compress"]);
    try {
      const page = await rawRequest(`${tunnelled.url}/sql`, { headers: { "Accept-Encoding": "gzip, deflate, br" } });
      expect(page.status).toBe(200);
      expect(page.headers["content-encoding"]).toBe("gzip");
    } finally {
      await tunnelled.stop();
    }
  }, 90_000);

  it("serves each evidence file by content hash: immutable, ETag, byte ranges, loopback only, nothing else", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const file = path.join(root, "stacks.folded");
    await import("node:fs").then((fs) => fs.writeFileSync(file, "main;work 5\nmain;idle 2\n"));
    const ctx = ctxFor(root);
    const imported = await callService(importArtifact, ctx, { path: file });
    const listing = await callService(listCorpusFiles, ctx, { commit_id: "HEAD", run_id: imported.run_id });
    expect(listing.run_generations).toEqual([imported.generation_id]);
    const frames = listing.files.find((f) => f.table === "frames")!;
    const ws = openWorkspace(ctx.locator);
    const bytes = readFileSync(ws.objects.pathOf(frames.object_id as `sha256:${string}`));
    ws.close();
    const server = await startServer(root);
    try {
      const url = `${server.url}${frames.url}`;
      const whole = await rawRequest(url);
      expect(whole.status).toBe(200);
      expect(whole.body.equals(bytes)).toBe(true);
      expect(whole.headers["cache-control"]).toContain("immutable");
      expect(whole.headers["accept-ranges"]).toBe("bytes");
      const etag = whole.headers.etag as string;
      expect(etag).toContain(frames.object_id.slice(7));
      // Parquet readers start at the footer: the last 8 bytes are the footer length and "PAR1".
      const tail = await rawRequest(url, { headers: { Range: "bytes=-8" } });
      expect(tail.status).toBe(206);
      expect(tail.headers["content-range"]).toBe(`bytes ${bytes.length - 8}-${bytes.length - 1}/${bytes.length}`);
      expect(tail.body.subarray(4).toString()).toBe("PAR1");
      const middle = await rawRequest(url, { headers: { Range: "bytes=4-9" } });
      expect(middle.body.equals(bytes.subarray(4, 10))).toBe(true);
      expect((await rawRequest(url, { headers: { Range: `bytes=${bytes.length + 5}-` } })).status).toBe(416);
      expect((await rawRequest(url, { headers: { "If-None-Match": etag } })).status).toBe(304);
      const head = await rawRequest(url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      // Native artifacts are not evidence files: not served. Neither are unknown or malformed hashes.
      const native = await rawRequest(`${server.url}/api/corpus/objects/sha256/${imported.artifact_id.slice(7)}`);
      expect(native.status).toBe(404);
      expect(JSON.parse(native.body.toString()).error.code).toBe("ARTIFACT_NOT_FOUND");
      expect((await rawRequest(`${server.url}/api/corpus/objects/sha256/${"0".repeat(64)}`)).status).toBe(404);
      expect((await rawRequest(`${server.url}/api/corpus/objects/sha256/xyz`)).status).toBe(400);
      expect((await rawRequest(url, { headers: { Host: "attacker.example" } })).status).toBe(403);
      expect((await rawRequest(url, { headers: { Origin: "http://attacker.example" } })).status).toBe(403);
      // The upload transport is guarded the same way.
      const upload = await rawRequest(`${server.url}/api/imports?name=x.folded`, { method: "POST", headers: { Origin: "http://attacker.example" } });
      expect(upload.status).toBe(403);
      const otherLocalPort = await rawRequest(`${server.url}/api/imports?name=x.folded`, { method: "POST", headers: { Origin: "http://127.0.0.1:1" } });
      expect(otherLocalPort.status).toBe(403);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
