"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import type { workspaceStatus } from "../../server/services/workspace";
import { statusSignature } from "./status-signature";
import { callQuery } from "./trpc-client";

/** How often the home page asks whether the workspace changed. */
const POLL_MS = 1500;

/**
 * Set while the page's own import panel works (the page shows that import itself) and while it
 * leaves for the run it imported: a refresh then renders the home page again under the upload, or
 * — queued behind the navigation — the run page a second time. Cleared by the next page's poll.
 */
let paused = false;

/** Holds the page's live refresh until `resumeLiveRefresh` or the next page. */
export function pauseLiveRefresh(): void {
  paused = true;
}

export function resumeLiveRefresh(): void {
  paused = false;
}

/**
 * Calls `onChange` when workspace.status says the runs, operations or HEAD changed (an import or
 * capture from the CLI, another tab, a worker, a capture ending): polled every second and a half
 * (slower in a hidden tab). `signature` is what the page last showed.
 */
export function useWorkspaceChanges(signature: string, onChange: () => void): void {
  const seen = useRef(signature);
  seen.current = signature;
  const changed = useRef(onChange);
  changed.current = onChange;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    paused = false;
    const tick = async () => {
      try {
        const status = await callQuery<typeof workspaceStatus>("workspace.status", {});
        const now = statusSignature(status);
        if (!stopped && !paused && now !== seen.current) {
          seen.current = now;
          changed.current();
        }
      } catch {
        // the server is restarting or busy: the next tick asks again
      }
      if (!stopped) timer = setTimeout(tick, document.hidden ? POLL_MS * 4 : POLL_MS);
    };
    timer = setTimeout(tick, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
}

/**
 * Keeps a server-rendered page current without a reload: when the workspace changes, re-renders
 * the page's server parts (the facts with the active-operations count, the runs list). Client
 * state (an import in progress, a plan under review) is kept across the refresh.
 */
export function LiveRefresh(props: { signature: string }) {
  const router = useRouter();
  useWorkspaceChanges(props.signature, () => router.refresh());
  return null;
}
