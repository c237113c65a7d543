"use client";

import { useEffect, useState } from "react";

/**
 * View state carried in the URL (so a copied link reproduces the view): written with
 * history.replaceState, which changes the address without reloading the page.
 */
export function useUrlState<T extends Record<string, string | null>>(initial: T, defaults: Partial<T>): [T, (patch: Partial<T>) => void] {
  const [state, setState] = useState<T>(initial);
  useEffect(() => {
    const url = new URL(window.location.href);
    for (const [key, value] of Object.entries(state)) {
      if (value === null || value === "" || value === defaults[key]) url.searchParams.delete(key);
      else url.searchParams.set(key, value);
    }
    if (url.toString() !== window.location.href) window.history.replaceState(null, "", url.toString());
  }, [state, defaults]);
  return [state, (patch) => setState((s) => ({ ...s, ...patch }))];
}
