import { EvidenceParseError } from "../formats/errors";

/**
 * The one checked conversion of a number bound for an int64 column (samples.time_ns and value,
 * spans.start_ns and dur_ns). Every double in [-2^63, 2^63) is an integer an int64 holds (the
 * largest below 2^63 is 2^63 − 1024), so the check is two comparisons; NaN fails both.
 */
const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;

/** Whether `value` (already rounded) fits an int64 cell. */
export function isInt64(value: number): boolean {
  return value >= INT64_MIN && value < INT64_END;
}

/**
 * `value` rounded, for an int64 cell; one that none holds (beyond ±2^63: in nanoseconds about 292
 * years), or no number at all, fails the import naming the input's `field`, as malformed input
 * does, instead of failing the write. Importers call it where they know which field a value came from;
 * the builder checks every cell again, naming the column, for any that did not.
 */
export function int64(value: number | bigint, format: string, field: string, at: { offset?: number; line?: number } = {}): number {
  // A bigint is judged as the double it becomes: 2^63 − 1 becomes 2^63, which no int64 holds.
  const rounded = typeof value === "bigint" ? Number(value) : Math.round(value);
  if (isInt64(rounded)) return rounded;
  throw outOfInt64Range(format, field, at);
}

/** The parse error for a value of `field` that no int64 cell holds. */
export function outOfInt64Range(format: string, field: string, at: { offset?: number; line?: number } = {}): EvidenceParseError {
  return new EvidenceParseError(format, `${field}: a value is out of range, beyond what a 64-bit integer holds once converted (±2^63; in nanoseconds, about 292 years)`, { ...at, field });
}
