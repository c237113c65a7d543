/**
 * Cell order as fractional keys: each cell's position is a string of base-36 digits read as a
 * fraction in (0, 1), compared as plain strings. A key can always be made between any two, so
 * inserting or moving a cell writes that cell only (one revision of it) and never renumbers the
 * others. Keys never end in "0" (so no two spellings of one fraction exist). Appending and
 * prepending step one digit, so a notebook of n appended cells has keys of about n/35 digits.
 */

const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";
const BASE = DIGITS.length;

export const POSITION_PATTERN = /^[0-9a-z]*[1-9a-z]$/;

export function isPosition(key: string): boolean {
  return key.length <= 4096 && POSITION_PATTERN.test(key);
}

function digit(key: string, i: number): number {
  return i < key.length ? DIGITS.indexOf(key[i]) : 0;
}

/**
 * A key strictly between `low` (or 0) and `high` (or 1). Appends step up from `low` and prepends
 * down from `high` by one digit (runs of them stay short); inserts between two cells halve the gap.
 */
function between(low: string, high: string | null, step: "up" | "down" | "half"): string {
  if (high !== null) {
    let n = 0;
    while (n < high.length && digit(low, n) === digit(high, n)) n++;
    if (n > 0) return high.slice(0, n) + between(low.slice(n), high.slice(n), step);
  }
  const lo = digit(low, 0);
  const hi = high !== null ? digit(high, 0) : BASE;
  if (hi - lo > 1) return DIGITS[step === "up" ? lo + 1 : step === "down" ? hi - 1 : Math.floor((lo + hi) / 2)];
  // Neighbouring first digits: high's first digit alone lies between when high goes on.
  if (high !== null && high.length > 1) return high[0];
  return DIGITS[lo] + between(low.slice(1), null, step);
}

/**
 * A position after `before` and before `after` (null: the start or the end). Throws when
 * `before` is not below `after` or either is no position.
 */
export function positionBetween(before: string | null, after: string | null): string {
  if (before !== null && !isPosition(before)) throw new Error(`not a position: ${before}`);
  if (after !== null && !isPosition(after)) throw new Error(`not a position: ${after}`);
  if (before !== null && after !== null && before >= after) throw new Error(`positions out of order: ${before} >= ${after}`);
  if (before === null && after === null) return DIGITS[BASE / 2];
  return between(before ?? "", after, before === null ? "down" : after === null ? "up" : "half");
}

/** `count` positions in order after `before` (for a notebook built at once, e.g. by an upgrade). */
export function positionsAfter(before: string | null, count: number): string[] {
  const out: string[] = [];
  let last = before;
  for (let i = 0; i < count; i++) out.push((last = positionBetween(last, null)));
  return out;
}
