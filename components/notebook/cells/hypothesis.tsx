"use client";

import { useState } from "react";
import type { ErrorDocument } from "../../../server/domain/errors";
import type { Hypothesis } from "../../../server/domain/notebook";
import type { changeHypothesis } from "../../../server/services/hypotheses";
import { ErrorPanel } from "../../ErrorPanel";
import { callMutation, errorDocumentOf } from "../../home/trpc-client";
import { useNotebook, type CellViewProps } from "../context";

const STATUSES = ["open", "supported", "refuted", "inconclusive"] as const;

/** A hypothesis: its claim, what it predicts and what would refute it; its status is set here (compare-and-set). */
export function HypothesisCellView({ content }: CellViewProps<"hypothesis">) {
  const nb = useNotebook();
  const hypothesis = nb.hypotheses.get(content.hypothesis_id);
  const [error, setError] = useState<ErrorDocument | null>(null);
  if (!hypothesis) return <p className="tip-muted">Hypothesis {content.hypothesis_id} is not in this page; reload to read it.</p>;
  const setStatus = (status: Hypothesis["status"]) => {
    setError(null);
    callMutation<typeof changeHypothesis>("hypotheses.update", { hypothesis_id: hypothesis.hypothesis_id, expected_revision: hypothesis.revision, status })
      .then((h) => nb.recordChanged({ hypothesis: h }))
      .catch((e) => setError(errorDocumentOf(e)));
  };
  return (
    <div className="nb-record" data-testid="hypothesis" data-status={hypothesis.status}>
      <p className="nb-claim">{hypothesis.claim}</p>
      <dl className="nb-record-facts">
        {hypothesis.prediction ? (
          <>
            <dt>Predicts</dt>
            <dd>{hypothesis.prediction}</dd>
          </>
        ) : null}
        {hypothesis.refuted_by ? (
          <>
            <dt>Refuted if</dt>
            <dd>{hypothesis.refuted_by}</dd>
          </>
        ) : null}
      </dl>
      <div className="nb-record-actions">
        <span className={`nb-badge nb-status-${hypothesis.status}`}>{hypothesis.status}</span>
        <span className="spacer" />
        <label>
          Status{" "}
          <select value={hypothesis.status} onChange={(e) => setStatus(e.target.value as Hypothesis["status"])} data-testid="hypothesis-status">
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {error ? <ErrorPanel error={error} /> : null}
    </div>
  );
}
