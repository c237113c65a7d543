"use client";

import { useEffect, useState } from "react";
import { layoutJobFor, prepareFlame, type FlameLayoutRequest, type LaidOut, type PreparedFlame } from "../../analysis/flame/prepare";

type Reply = { id: number; out?: LaidOut; error?: string };

let worker: Worker | null | undefined;
let nextId = 1;
const waiting = new Map<number, { request: FlameLayoutRequest; assemble: (out: LaidOut) => PreparedFlame; done: (p: PreparedFlame) => void; fail: (message: string) => void }>();

/** The one layout worker of the page, started on first use; null where workers do not exist. */
function layoutWorker(): Worker | null {
  if (worker !== undefined) return worker;
  if (typeof Worker === "undefined") return (worker = null);
  try {
    worker = new Worker(new URL("./flame-layout.worker.ts", import.meta.url), { type: "module", name: "flame-layout" });
    worker.onmessage = (event: MessageEvent<Reply>) => {
      const entry = waiting.get(event.data.id);
      waiting.delete(event.data.id);
      if (!entry) return;
      if (event.data.out) entry.done(entry.assemble(event.data.out));
      else entry.fail(event.data.error ?? "the layout worker failed");
    };
    worker.onerror = () => {
      // A worker that cannot start: lay out what waits here, and everything after it too.
      worker = null;
      for (const [id, entry] of waiting) {
        waiting.delete(id);
        try {
          // The job's arrays went to the failed worker: start again from the request.
          entry.done(prepareFlame(entry.request));
        } catch (e) {
          entry.fail(e instanceof Error ? e.message : String(e));
        }
      }
    };
  } catch {
    worker = null;
  }
  return worker;
}

/**
 * Starts the layout worker ahead of its first layout (its script fetched and evaluated while the
 * flame tree is still on its way): the run page as it mounts, the home page as a dropped file uploads.
 */
export function warmLayoutWorker(): void {
  layoutWorker();
}

/** Where layouts run on this page: "worker", or "main" where workers do not exist or failed to start. */
export function layoutThread(): "worker" | "main" {
  return layoutWorker() ? "worker" : "main";
}

/** Lays out a flame graph in the Web Worker, or synchronously where there is none (tests). */
export function prepareOffThread(request: FlameLayoutRequest): Promise<PreparedFlame> {
  const w = layoutWorker();
  if (!w) return Promise.resolve().then(() => prepareFlame(request));
  // Indexing and packing stay here (cheap); the structure, layout and colours run in the worker.
  const { job, transfer, assemble } = layoutJobFor(request);
  return new Promise((done, reject) => {
    const id = nextId++;
    waiting.set(id, { request, assemble, done, fail: (m) => reject(new Error(m)) });
    w.postMessage({ id, job }, transfer);
  });
}

/**
 * The prepared flame graph for a request (memoize the request: a new object lays out again; the
 * one last laid out, asked again, is not). While a new layout is computed the previous one stays;
 * `pending` says so. A null request lays out nothing (pending, the last layout kept).
 */
export function useFlameLayout(request: FlameLayoutRequest | null): { prepared: PreparedFlame | null; pending: boolean; error: string | null } {
  const [state, setState] = useState<{ for: FlameLayoutRequest | null; prepared: PreparedFlame | null; error: string | null }>({ for: null, prepared: null, error: null });
  const laidOut = state.for;
  useEffect(() => {
    if (request === null || request === laidOut) return;
    let live = true;
    prepareOffThread(request).then(
      (prepared) => live && setState({ for: request, prepared, error: null }),
      (e: unknown) => live && setState((s) => ({ ...s, for: request, error: e instanceof Error ? e.message : String(e) })),
    );
    return () => {
      live = false;
    };
    // laidOut is read, not a dependency: a layout that lands must not start another.
  }, [request]);
  return { prepared: state.prepared, pending: request === null || state.for !== request, error: state.error };
}
