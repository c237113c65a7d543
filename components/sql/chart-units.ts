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

const suffixUnit = (name: string) => SUFFIXES.find(([pattern]) => pattern.test(name))?.[1] ?? null;

/**
 * `metric`: the metric a preset's query reads (cpu_ns, samples, alloc_bytes…), which gives the unit
 * of its value columns (self, total…) when their names do not.
 */
export function measureUnit(column: string, rows: readonly Record<string, unknown>[], metric?: string | null): MeasureUnit {
  const plain = (v: number) => (Number.isInteger(v) ? v.toLocaleString("en-US") : v.toLocaleString("en-US", { maximumFractionDigits: 4 }));
  if (/(^|_)pct$|percent/i.test(column)) return { unit: "%", format: (v) => `${v.toLocaleString("en-US", { maximumFractionDigits: 2 })} %` };
  const units = new Set(rows.map((r) => r.unit).filter((u): u is string => typeof u === "string" && u.length > 0));
  const fromMetric = metric ? (suffixUnit(metric) ?? (COUNTS.test(metric) ? "count" : null)) : null;
  const named = units.size === 1 ? [...units][0] : (suffixUnit(column) ?? (COUNTS.test(column) ? "count" : fromMetric));
  if (named && named !== "count") return { unit: named, format: (v) => formatValue(v, named === "µs" ? "us" : named) };
  if (named === "count") return { unit: metric && fromMetric === "count" && !COUNTS.test(column) ? metric : "count", format: plain };
  return { unit: null, format: plain };
}

/** The axis title of a measure: its name and unit. */
export function axisTitle(column: string, unit: MeasureUnit): string {
  return unit.unit ? `${column} (${unit.unit})` : column;
}
