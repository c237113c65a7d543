/**
 * Values with their units, as people read them: nanoseconds as ms (s past 10 s), bytes as
 * KB/MB/GB, counts as samples. One function so every view shows the same text for a value.
 */

export function formatValue(value: number, unit: string | null | undefined, metric?: string | null): string {
  const u = (unit ?? "").toLowerCase();
  if (u === "ns" || u === "nanoseconds") return formatNs(value);
  if (u === "us" || u === "µs" || u === "microseconds") return formatNs(value * 1e3);
  if (u === "ms" || u === "milliseconds") return formatNs(value * 1e6);
  if (u === "bytes" || u === "b") return formatBytes(value);
  if (u === "count" || u === "") {
    const noun = metric && metric !== "samples" ? metric.replace(/_/g, " ") : "samples";
    return `${group(value)} ${value === 1 && noun === "samples" ? "sample" : noun}`;
  }
  return `${group(value)} ${unit}`;
}

function formatNs(ns: number): string {
  const ms = ns / 1e6;
  if (Math.abs(ms) >= 10_000) return `${trim(ms / 1000, 2)} s`;
  if (Math.abs(ms) >= 100) return `${trim(ms, 1)} ms`;
  if (Math.abs(ms) >= 1) return `${trim(ms, 2)} ms`;
  return `${trim(ms, 3)} ms`;
}

function formatBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  if (abs >= 1024 ** 3) return `${trim(bytes / 1024 ** 3, 2)} GB`;
  if (abs >= 1024 ** 2) return `${trim(bytes / 1024 ** 2, 2)} MB`;
  if (abs >= 1024) return `${trim(bytes / 1024, 1)} KB`;
  return `${group(bytes)} B`;
}

function trim(value: number, digits: number): string {
  return value.toLocaleString("en-US", { minimumFractionDigits: 0, maximumFractionDigits: digits });
}

function group(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** A share as a percentage, with more digits for small shares. */
export function formatPercent(part: number, whole: number): string {
  if (!(whole > 0)) return "–";
  const pct = (100 * part) / whole;
  if (pct === 0) return "0%";
  if (Math.abs(pct) < 0.1) return `${pct.toFixed(3)}%`;
  return `${pct.toFixed(1)}%`;
}

/** A signed change, e.g. "+12.4 ms" or "−3 samples". */
export function formatDelta(value: number, unit: string | null | undefined, metric?: string | null): string {
  const text = formatValue(Math.abs(value), unit, metric);
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : `±${text}`;
}

/** "file.js:12", or the file alone, or null. */
export function formatLocation(file: string | null, line: number | null): string | null {
  if (!file) return null;
  return line !== null && line !== undefined ? `${file}:${line}` : file;
}

/** The location shortened for a table: the file's own name ("…/app.js:12"); the full one goes in a title. */
export function formatShortLocation(file: string | null, line: number | null): string | null {
  const full = formatLocation(file, line);
  if (full === null) return null;
  const segments = full.split("/");
  return segments.length > 1 ? `…/${segments[segments.length - 1]}` : full;
}
