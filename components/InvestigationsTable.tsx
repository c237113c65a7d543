import type { z } from "zod";
import type { InvestigationListItem } from "../server/services/investigations";

export type InvestigationRow = z.infer<typeof InvestigationListItem>;

/** `YYYY-MM-DD HH:MM` of an ISO time (UTC, as stored); the full time is the cell's title. */
function minute(iso: string): string {
  return iso.slice(0, 16).replace("T", " ");
}

/** Who started it: a person, or an agent by the client name its MCP handshake gave (kept on one line when the column wraps). */
function author(row: InvestigationRow) {
  if (row.created_by.actor === "person") return "person";
  return row.created_by.client ? (
    <>
      agent · <span className="investigation-client">{row.created_by.client}</span>
    </>
  ) : (
    "agent"
  );
}

/**
 * Investigations, newest first: title and question, status, how many cells, hypotheses and
 * findings each holds, who started it and when it last changed (newest first by creation). `compact`
 * leaves out the question and the time (the home page).
 */
export function InvestigationsTable({ rows, compact = false }: { rows: InvestigationRow[]; compact?: boolean }) {
  return (
    <table className="data investigations-table" data-testid="investigations-table">
      <thead>
        <tr>
          <th>Investigation</th>
          <th>Status</th>
          <th className="num">Cells</th>
          <th className="num">Hypotheses</th>
          <th className="num">Findings</th>
          <th>Started by</th>
          {compact ? null : (
            <th className="num" title="When the title, question or status last changed">
              Updated (UTC)
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.investigation_id} data-testid="investigation-row" data-investigation-id={row.investigation_id}>
            <td className="wide investigation-title">
              <a href={`/investigations/${encodeURIComponent(row.investigation_id)}`} data-testid="investigation-link">
                {row.title}
              </a>
              {!compact && row.question ? <div className="investigation-question">{row.question}</div> : null}
            </td>
            <td>
              <span className={`status investigation-status-${row.status}`}>{row.status}</span>
            </td>
            <td className="num" data-testid="investigation-cells">
              {row.counts.cells}
            </td>
            <td className="num" data-testid="investigation-hypotheses">
              {row.counts.hypotheses}
            </td>
            <td className="num" data-testid="investigation-findings">
              {row.counts.findings}
            </td>
            <td className="investigation-author" data-testid="investigation-author">
              {author(row)}
            </td>
            {compact ? null : (
              <td className="num" title={`created ${row.created_at}, updated ${row.updated_at}`} data-testid="investigation-updated">
                {minute(row.updated_at)}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
