/**
 * View state carried in a page's URL, so a copied link reproduces the view. A page declares its keys
 * once with their defaults (a spec); the server page reads the initial state from its search params
 * with readUrlState, and the client keeps the address in step with useUrlState
 * (components/use-url-state.ts). Default values are left out of the URL. Pure: no React, no DOM.
 */
export type UrlStateSpec = Readonly<Record<string, string | null>>;
export type UrlState<S extends UrlStateSpec> = { [K in keyof S]: string | null };
export type SearchParams = Record<string, string | string[] | undefined>;

/** The first value of a search parameter (Next gives arrays for repeated keys). */
export function firstParam(value: string | string[] | undefined | null): string | null {
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

/** The state a URL describes: each key's value, or its default when absent or empty. */
export function readUrlState<S extends UrlStateSpec>(spec: S, search: SearchParams | URLSearchParams): UrlState<S> {
  const get = (key: string) => (search instanceof URLSearchParams ? search.get(key) : firstParam(search[key]));
  return Object.fromEntries(Object.keys(spec).map((key) => [key, get(key) || spec[key]])) as UrlState<S>;
}

/** The URL with the state written in: default, null and empty values removed, other parameters kept. */
export function applyUrlState<S extends UrlStateSpec>(url: URL, spec: S, state: UrlState<S>): URL {
  const next = new URL(url.href);
  for (const key of Object.keys(spec)) {
    const value = state[key];
    if (value === null || value === undefined || value === "" || value === spec[key]) next.searchParams.delete(key);
    else next.searchParams.set(key, value);
  }
  return next;
}

/** A time range in nanoseconds as a URL value: `START..END` (integers; either may be negative). */
export interface TimeRange {
  start: number;
  end: number;
}

export function formatTimeRange(range: TimeRange | null): string | null {
  if (!range) return null;
  return `${Math.round(range.start)}..${Math.round(range.end)}`;
}

export function parseTimeRange(value: string | null | undefined): TimeRange | null {
  const m = /^(-?\d+)\.\.(-?\d+)$/.exec(value ?? "");
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  return Number.isSafeInteger(start) && Number.isSafeInteger(end) && end > start ? { start, end } : null;
}

/** A DAG view's what-if as a URL value: `NODE:MS` (a workflow node id, a duration in ms ≥ 0). */
export interface WhatIfValue {
  node: string;
  ms: number;
}

export function formatWhatIf(whatIf: WhatIfValue | null): string | null {
  return whatIf ? `${whatIf.node}:${whatIf.ms}` : null;
}

export function parseWhatIf(value: string | null | undefined): WhatIfValue | null {
  const m = /^(n\d{1,9}):(\d+(?:\.\d+)?)$/.exec(value ?? "");
  if (!m) return null;
  const ms = Number(m[2]);
  return Number.isFinite(ms) && ms <= 1e12 ? { node: m[1], ms } : null;
}
