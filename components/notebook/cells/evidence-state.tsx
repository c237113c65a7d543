"use client";

import type { ReactNode } from "react";
import { ErrorPanel } from "../../ErrorPanel";
import { isError, type EvidenceStatus, type Fetched } from "../../evidence/use-evidence";

/**
 * What an evidence cell shows before its data: loading, the typed error, or the evidence status
 * (no samples, no evidence) with what would fill it. Null when the data is there to draw.
 */
export function evidencePending<T extends object>(data: Fetched<T>, what: string): ReactNode | null {
  if (data === null) return <p className="tip-muted" data-testid="cell-loading">Loading {what}…</p>;
  if (isError(data)) return <ErrorPanel error={data} />;
  const status = "status" in data ? (data.status as EvidenceStatus) : null;
  if (status && (status.state === "unavailable" || status.state === "empty")) {
    return (
      <div className="empty" data-testid="evidence-status">
        <strong>{status.state === "empty" ? "No samples." : "No evidence."}</strong> {status.reason}
      </div>
    );
  }
  return null;
}
