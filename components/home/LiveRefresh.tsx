"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import type { workspaceStatus } from "../../server/services/workspace";
import { statusSignature } from "./status-signature";
import { callQuery } from "./trpc-client";

/** How often the home page asks whether the workspace changed. */
const POLL_MS = 1500;

/**
 * Keeps a server-rendered page current without a reload: polls workspace.status and, when the
 * runs, operations or HEAD changed (an import or capture from the CLI, another tab, a worker),
 * re-renders the page's server parts (the facts with the active-operations count, the runs list).
 * Client state (an import in progress, a plan under review) is kept across the refresh.
 */
export function LiveRefresh(props: { signature: string }) {
  const router = useRouter();
  const seen = useRef(props.signature);
  seen.current = props.signature;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      try {
        const status = await callQuery<typeof workspaceStatus>("workspace.status", {});
        const now = statusSignature(status);
        if (!stopped && now !== seen.current) {
          seen.current = now;
          router.refresh();
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
  }, [router]);
  return null;
}
