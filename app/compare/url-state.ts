import type { UrlState } from "../../components/url-state";

/** What the compare page's URL carries besides base, candidate and commit (/compare?…), with defaults. */
export const COMPARE_URL_STATE = {
  metric: null,
  from: "candidate",
  norm: "0",
  zoom: null,
  q: null,
  /** Each run's tracks (threads, processes, profiles): absent, every track merged; `busiest`; or its track keys joined by commas. */
  btracks: null,
  ctracks: null,
} as const satisfies Record<string, string | null>;

export type CompareUrlState = UrlState<typeof COMPARE_URL_STATE>;
