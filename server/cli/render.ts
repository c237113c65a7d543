/** Plain-text rendering for people; --json output never goes through here. */

export function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Milliseconds as seconds for people: "0.04 s", "12.3 s". */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${s < 10 ? s.toFixed(2) : s.toFixed(1)} s`;
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return "";
  const cells = rows.map((row) => columns.map((c) => String(row[c] ?? "")));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd();
  return [line(columns), ...cells.map(line)].join("\n");
}

export function keyValues(entries: [string, unknown][]): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`).join("\n");
}

export function pageFooter(page: { next_cursor: string | null; items: unknown[] }, command: string): string {
  return page.next_cursor ? `\n(more: ${command} --cursor ${page.next_cursor})` : "";
}
