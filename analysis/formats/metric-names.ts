/**
 * Metric names from format-native names: the schema's names are lower_snake_case (DESIGN.md §3),
 * so `cpu-clock:ppp` → `cpu_clock` and pprof's `AllocSpace` → `alloc_space`.
 */

/** `text` in lower_snake_case (runs of anything but letters and digits become one `_`), or `fallback` when nothing is left. */
export function lowerSnake(text: string, fallback: string): string {
  return (
    text
      .replace(/[^A-Za-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .toLowerCase() || fallback
  );
}

/** Puts a `_` between a lower-case letter or digit and the capital after it: `allocSpace` → `alloc_Space`. */
export function splitCamelCase(text: string): string {
  return text.replace(/([a-z0-9])([A-Z])/g, "$1_$2");
}
