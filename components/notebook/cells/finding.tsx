"use client";

import { useState } from "react";
import type { ErrorDocument } from "../../../server/domain/errors";
import type { Finding } from "../../../server/domain/notebook";
import type { assessFinding } from "../../../server/services/findings";
import { ErrorPanel } from "../../ErrorPanel";
import { callMutation, errorDocumentOf } from "../../home/trpc-client";
import { useNotebook, type CellViewProps } from "../context";
import { describeTarget, referenceUrlOf, workbenchUrlOf } from "../links";

const ASSESSMENTS = ["supported", "refuted", "inconclusive", "unassessed"] as const;

/**
 * A finding with the evidence it cites: each reference opens the cited view at the cited commit.
 * Assessing it is a compare-and-set; `supported` without a `supports` reference is refused by the
 * service, and the refusal is shown here.
 */
export function FindingCellView({ content }: CellViewProps<"finding">) {
  const nb = useNotebook();
  const finding = nb.findings.get(content.finding_id);
  const [error, setError] = useState<ErrorDocument | null>(null);
  if (!finding) return <p className="tip-muted">Finding {content.finding_id} is not in this page; reload to read it.</p>;
  const assess = (assessment: Finding["assessment"]) => {
    setError(null);
    callMutation<typeof assessFinding>("findings.assess", { finding_id: finding.finding_id, expected_revision: finding.revision, assessment })
      .then((f) => nb.recordChanged({ finding: f }))
      .catch((e) => setError(errorDocumentOf(e)));
  };
  return (
    <div className="nb-record" data-testid="finding" data-assessment={finding.assessment}>
      <h3 className="nb-finding-title">{finding.title}</h3>
      <p className="nb-claim">{finding.claim}</p>
      <div className="nb-record-actions">
        <span className={`nb-badge nb-assessment-${finding.assessment}`} data-testid="finding-assessment">
          {finding.assessment}
        </span>
        <span className="nb-badge">{finding.kind.replace("_", " ")}</span>
        <span className="nb-badge">{finding.evidence_level}</span>
        {finding.lifecycle !== "active" ? <span className="nb-badge">{finding.lifecycle}</span> : null}
      </div>
      {finding.references.length ? (
        <ul className="nb-refs" data-testid="finding-refs">
          {finding.references.map((ref, i) => {
            const url = referenceUrlOf(ref.target);
            const text = describeTarget(ref.target, nb.cellLabel);
            // A cited cell also opens in the workbench as it was cited: its view state at the cited commit (it may have been re-pinned since).
            const cited = ref.target.kind === "cell" ? nb.cells.find((c) => c.server.cell_id === (ref.target as { cell_id: string }).cell_id) : undefined;
            const asCited = cited ? workbenchUrlOf({ ...cited.server, commit_id: ref.target.commit_id }) : null;
            return (
              <li key={i}>
                <span className={`nb-relation nb-relation-${ref.relation}`}>{ref.relation}</span> {url ? <a href={url} data-testid="finding-ref-link">{text}</a> : <span>{text}</span>}
                {asCited ? (
                  <>
                    {" "}
                    <a href={asCited} className="nb-open" data-testid="finding-ref-open" title="The cited view at the cited commit">
                      open as cited ↗
                    </a>
                  </>
                ) : null}
                {ref.target.kind === "query_result" ? <code className="nb-ref-sql">{ref.target.sql}</code> : null}
                {ref.note ? <span className="tip-muted"> — {ref.note}</span> : null}
              </li>
            );
          })}
        </ul>
      ) : (
        <p className="tip-muted">No evidence cited yet: a finding cannot be assessed as supported without a “supports” reference.</p>
      )}
      {finding.limitations.length ? (
        <p className="tip-muted">
          <strong>Limitations:</strong> {finding.limitations.join("; ")}
        </p>
      ) : null}
      {finding.next_steps.length ? (
        <p className="tip-muted">
          <strong>Next steps:</strong> {finding.next_steps.join("; ")}
        </p>
      ) : null}
      <div className="nb-record-actions">
        <span>Assess:</span>
        {ASSESSMENTS.map((a) => (
          <button key={a} type="button" className="plain-button" disabled={finding.assessment === a} onClick={() => assess(a)} data-testid={`assess-${a}`}>
            {a}
          </button>
        ))}
      </div>
      {error ? <ErrorPanel error={error} /> : null}
    </div>
  );
}
