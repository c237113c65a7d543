"use client";

import type { AsyncDuckDB } from "@duckdb/duckdb-wasm";

/**
 * Starting DuckDB-WASM in the browser: the worker and the wasm come from this app (public/duckdb/
 * <version>/, copied at build, served immutable), never a CDN. Kept apart from the session code so
 * that instrumentation-client.ts can start the engine before React hydrates without loading Arrow
 * and hyparquet first.
 */

/** The pinned @duckdb/duckdb-wasm version: its files are served from /duckdb/<version>/ (scripts/copy-duckdb-wasm.js). */
export const DUCKDB_WASM_VERSION = "1.32.0";

/** The app's own URLs of the engine's files (versioned, immutable). */
export function engineUrls(origin?: string) {
  const base = `${origin ?? ""}/duckdb/${DUCKDB_WASM_VERSION}/`;
  return {
    eh: { mainModule: `${base}duckdb-eh.wasm`, mainWorker: `${base}duckdb-browser-eh.worker.js` },
    mvp: { mainModule: `${base}duckdb-mvp.wasm`, mainWorker: `${base}duckdb-browser-mvp.worker.js` },
  };
}

let engine: Promise<{ db: AsyncDuckDB; version: string }> | null = null;
let started = false;

/** Whether DuckDB-WASM is up in this page (a query then answers without waiting for it to start). */
export function engineStarted(): boolean {
  return started;
}

/** Start-up stages as performance marks ("duckdb:<stage>"), so a benchmark can say where the time goes. */
export function mark(stage: string): void {
  if (typeof performance !== "undefined" && typeof performance.mark === "function") performance.mark(`duckdb:${stage}`);
}

/** Starts DuckDB-WASM once per page (worker + wasm from this app's /duckdb/, never a CDN). */
export function loadEngine(): Promise<{ db: AsyncDuckDB; version: string }> {
  engine ??= (async () => {
    mark("engine-start");
    // The worker script loads while the module is imported: eh is what current browsers select.
    const urls = engineUrls(window.location.origin);
    let worker = new Worker(urls.eh.mainWorker);
    try {
      const duckdb = await import("@duckdb/duckdb-wasm");
      mark("engine-module");
      if (duckdb.PACKAGE_VERSION !== DUCKDB_WASM_VERSION) {
        throw new Error(`@duckdb/duckdb-wasm is ${duckdb.PACKAGE_VERSION} but the app serves ${DUCKDB_WASM_VERSION}: update DUCKDB_WASM_VERSION and rebuild (npm run build)`);
      }
      // eh (wasm exceptions; smaller and faster) wherever the browser supports it, else mvp.
      const bundle = await duckdb.selectBundle(urls);
      if (bundle.mainWorker !== urls.eh.mainWorker) {
        worker.terminate();
        worker = new Worker(bundle.mainWorker!);
      }
      const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
      mark("engine-worker");
      await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
      mark("engine-instantiated");
      await db.open({ query: { castBigIntToDouble: true, castDecimalToDouble: true } });
      const version = await db.getVersion();
      mark("engine-open");
      return { db, version };
    } catch (error) {
      worker.terminate();
      throw error;
    }
  })();
  engine.then(
    () => (started = true),
    () => {
      engine = null;
    },
  );
  return engine;
}

/** Starts fetching and compiling the engine early (e.g. when a page with an SQL cell opens). */
export function preloadEngine(): void {
  void loadEngine().catch(() => undefined);
}

