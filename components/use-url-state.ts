"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { applyUrlState, readUrlState, type UrlState, type UrlStateSpec } from "./url-state";

/** How a change enters the browser's history: a deliberate one is a step Back returns from; a transient one replaces the current step. */
export interface UrlChange {
  transient?: boolean;
}

/**
 * A page's URL-carried view state (see components/url-state.ts): the state, and a function to patch
 * it. The address follows as soon as the state changes: a deliberate change (a view, a zoom, a
 * selection) with history.pushState, so Back and Forward step through them; a transient one
 * (wheel zoom, typing a search) with history.replaceState. Back and Forward bring the state the
 * address holds. Components that change their view continuously report it debounced: browsers
 * throttle frequent history calls.
 */
export function useUrlState<S extends UrlStateSpec>(spec: S, initial: UrlState<S>): [UrlState<S>, (patch: Partial<UrlState<S>>, change?: UrlChange) => void] {
  const [state, setState] = useState<UrlState<S>>(initial);
  // Whether the pending write is a step of its own (any deliberate patch since the last write makes it one).
  const push = useRef(false);
  useEffect(() => {
    const url = applyUrlState(new URL(window.location.href), spec, state);
    if (url.href !== window.location.href) {
      if (push.current) window.history.pushState(null, "", url.href);
      else window.history.replaceState(null, "", url.href);
    }
    push.current = false;
  }, [spec, state]);
  useEffect(() => {
    const onPop = () => {
      const next = readUrlState(spec, new URL(window.location.href).searchParams);
      setState((s) => (Object.keys(spec).some((k) => s[k as keyof S] !== next[k as keyof S]) ? next : s));
    };
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [spec]);
  // A patch that changes nothing keeps the same state object (no re-render, no URL write).
  const patch = useCallback((p: Partial<UrlState<S>>, change?: UrlChange) => {
    setState((s) => {
      if (!Object.entries(p).some(([k, v]) => s[k as keyof S] !== v)) return s;
      if (!change?.transient) push.current = true;
      return { ...s, ...p };
    });
  }, []);
  return [state, patch];
}
