import { formatValue } from "../../analysis/flame/format";

/** A result column's unit, as far as the result says: a one-valued `unit` column, else the column's name. */
export interface MeasureUnit {
  /** What the axis title shows in parentheses (ns, bytes, count…). */
  unit: string | null;
  /** A value with its unit, as every view writes it (ms/s for time, KB/MB for bytes). */
  format(value: number): string;
}

const SUFFIXES: [RegExp, string][] = [
  [/(^|_)ns$/i, "ns"],
  [/(^|_)(us|µs)$/i, "µs"],
  [/(^|_)ms$/i, "ms"],
  [/(^|_)bytes$/i, "bytes"],
];

const COUNTS = /^(n|count|samples|rows|calls|hits)$|_count$|^count_|_samples$/i;

export function measureUnit(column: string, rows: readonly Record<string, unknown>[]): MeasureUnit {
  const plain = (v: number) => (Number.isInteger(v) ? v.toLocaleString("en-US") : v.toLocaleString("en-US", { maximumFractionDigits: 4 }));
  const units = new Set(rows.map((r) => r.unit).filter((u): u is string => typeof u === "string" && u.length > 0));
  const named = units.size === 1 ? [...units][0] : (SUFFIXES.find(([pattern]) => pattern.test(column))?.[1] ?? null);
  if (named && named !== "count") return { unit: named, format: (v) => formatValue(v, named === "µs" ? "us" : named) };
  if (named === "count" || COUNTS.test(column)) return { unit: "count", format: plain };
  return { unit: null, format: plain };
}

/** The axis title of a measure: its name and unit. */
export function axisTitle(column: string, unit: MeasureUnit): string {
  return unit.unit ? `${column} (${unit.unit})` : column;
}
