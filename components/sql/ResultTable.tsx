"use client";

import type { QueryResult } from "./duckdb-session";

const MAX_ROWS = 1000;

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toLocaleString("en-US", { maximumFractionDigits: 4 });
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A query result as a dense table; every cell keeps its exact value in data-value. */
export function ResultTable({ result }: { result: QueryResult }) {
  const rows = result.rows.slice(0, MAX_ROWS);
  return (
    <div className="sql-table-wrap">
      <table className="data sql-table" data-testid="sql-result">
        <thead>
          <tr>
            {result.columns.map((c) => (
              <th key={c.name} title={c.type}>
                {c.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {result.columns.map((c) => {
                const value = row[c.name];
                return (
                  <td key={c.name} className={typeof value === "number" ? "num" : undefined} data-column={c.name} data-value={JSON.stringify(value ?? null)}>
                    {formatCell(value)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {result.rows.length > MAX_ROWS ? (
        <p className="muted">
          Showing the first {MAX_ROWS.toLocaleString("en-US")} of {result.rows.length.toLocaleString("en-US")} rows; add a LIMIT or aggregate to see the rest.
        </p>
      ) : null}
    </div>
  );
}
