import type { UrlState } from "../../components/url-state";

/** What the compare page's URL carries besides base, candidate and commit (/compare?…), with defaults. */
export const COMPARE_URL_STATE = {
  metric: null,
  from: "candidate",
  norm: "0",
  zoom: null,
  q: null,
} as const satisfies Record<string, string | null>;

export type CompareUrlState = UrlState<typeof COMPARE_URL_STATE>;
