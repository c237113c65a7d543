/**
 * What the URL's `tracks` value asks for: null (absent) is the busiest track, "all" every track
 * merged, else track keys joined by commas. The services take the same three forms.
 */
export type TrackSelection = "busiest" | "all" | string[];

const KEY = /^[0-9a-f]{12}$/;

export function parseTrackSelection(value: string | null): TrackSelection {
  if (value === null || value === "" || value === "busiest") return "busiest";
  if (value === "all") return "all";
  const keys = [...new Set(value.split(",").filter((k) => KEY.test(k)))].sort();
  return keys.length ? keys : "busiest";
}

export function formatTrackSelection(selection: TrackSelection): string | null {
  if (selection === "busiest") return null;
  if (selection === "all") return "all";
  return [...selection].sort().join(",");
}
