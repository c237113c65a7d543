import { InvestigationStatus } from "../../server/domain/notebook";

/** The list's status filter: one status, or every one. */
export const INVESTIGATION_FILTERS = [...InvestigationStatus.options, "all"] as const;
export type InvestigationFilter = (typeof INVESTIGATION_FILTERS)[number];

/** `?status=` as a filter; open when absent or unknown, as an issue tracker opens. */
export function readFilter(value: string | null): InvestigationFilter {
  return INVESTIGATION_FILTERS.find((f) => f === value) ?? "open";
}
