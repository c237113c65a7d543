"use client";

import { useCallback, useEffect, useState } from "react";
import { applyUrlState, type UrlState, type UrlStateSpec } from "./url-state";

/**
 * A page's URL-carried view state (see components/url-state.ts): the state, and a function to patch
 * it. The address follows with history.replaceState (no reload, no history entry) as soon as the
 * state changes. Components that change their view continuously (wheel zoom) report it debounced:
 * browsers throttle frequent replaceState calls.
 */
export function useUrlState<S extends UrlStateSpec>(spec: S, initial: UrlState<S>): [UrlState<S>, (patch: Partial<UrlState<S>>) => void] {
  const [state, setState] = useState<UrlState<S>>(initial);
  useEffect(() => {
    const url = applyUrlState(new URL(window.location.href), spec, state);
    if (url.href !== window.location.href) window.history.replaceState(null, "", url.href);
  }, [spec, state]);
  // A patch that changes nothing keeps the same state object (no re-render, no URL write).
  const patch = useCallback(
    (p: Partial<UrlState<S>>) => setState((s) => (Object.entries(p).some(([k, v]) => s[k as keyof S] !== v) ? { ...s, ...p } : s)),
    [],
  );
  return [state, patch];
}
