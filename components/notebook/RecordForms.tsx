"use client";

import { useState, type FormEvent } from "react";
import { rowsDigest } from "../../analysis/notebook/digest";
import type { ErrorDocument } from "../../server/domain/errors";
import type { EvidenceRef, Finding } from "../../server/domain/notebook";
import type { recordFinding } from "../../server/services/findings";
import type { recordHypothesis } from "../../server/services/hypotheses";
import { ErrorPanel } from "../ErrorPanel";
import { callMutation, errorDocumentOf } from "../home/trpc-client";
import { useNotebook, type PageCell } from "./context";

type Relation = EvidenceRef["relation"];

const lines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

/** A form's refusal, if any, then Record and Cancel. */
function FormEnd(props: { error: ErrorDocument | null; submitTestId: string; onCancel: () => void }) {
  return (
    <>
      {props.error ? <ErrorPanel error={props.error} /> : null}
      <div className="nb-form-actions">
        <button type="submit" className="button" data-testid={props.submitTestId}>
          Record
        </button>
        <button type="button" className="plain-button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

/** A hypothesis: the claim, what it predicts, what would refute it. Its cell goes after `afterCellId`. */
export function HypothesisForm(props: { afterCellId: string | null; onDone: (recorded: { cellId: string | null } | null) => void }) {
  const nb = useNotebook();
  const [claim, setClaim] = useState("");
  const [prediction, setPrediction] = useState("");
  const [refutedBy, setRefutedBy] = useState("");
  const [error, setError] = useState<ErrorDocument | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    callMutation<typeof recordHypothesis>("hypotheses.record", { investigation_id: nb.investigationId, claim, prediction, refuted_by: refutedBy, ...(props.afterCellId ? { after_cell_id: props.afterCellId } : {}) })
      .then((r) => props.onDone({ cellId: r.cell?.cell_id ?? null }))
      .catch((x) => setError(errorDocumentOf(x)));
  };
  return (
    <form className="nb-form" onSubmit={submit} data-testid="hypothesis-form">
      <h2>Record a hypothesis</h2>
      <label>
        Claim
        <textarea autoFocus required value={claim} onChange={(e) => setClaim(e.target.value)} rows={2} data-testid="hypothesis-claim" />
      </label>
      <label>
        It predicts
        <textarea value={prediction} onChange={(e) => setPrediction(e.target.value)} rows={2} data-testid="hypothesis-prediction" />
      </label>
      <label>
        It is refuted if
        <textarea value={refutedBy} onChange={(e) => setRefutedBy(e.target.value)} rows={2} data-testid="hypothesis-refuted-by" />
      </label>
      <FormEnd error={error} submitTestId="hypothesis-submit" onCancel={() => props.onDone(null)} />
    </form>
  );
}

/** The evidence a finding may cite from this notebook: each evidence cell at its commit, and each SQL result's rows. */
interface Citable {
  key: string;
  label: string;
  target: () => Promise<EvidenceRef["target"]>;
}

function citables(cells: readonly PageCell[], sqlStates: ReturnType<typeof useNotebook>["sql"]["states"], cellLabel: (id: string) => string): Citable[] {
  const out: Citable[] = [];
  for (const { server: cell } of cells) {
    if (!cell.commit_id) continue;
    const commitId = cell.commit_id;
    out.push({ key: `cell:${cell.cell_id}`, label: `${cell.kind} cell ${cellLabel(cell.cell_id)} @ ${commitId}`, target: async () => ({ kind: "cell", cell_id: cell.cell_id, commit_id: commitId }) });
    const run = sqlStates.get(cell.cell_id);
    if (cell.kind === "sql" && run?.state === "done") {
      const rows = run.result.rows;
      out.push({
        key: `rows:${cell.cell_id}`,
        label: `the ${rows.length.toLocaleString("en-US")} rows of ${cellLabel(cell.cell_id)} @ ${commitId}`,
        target: async () => ({ kind: "query_result", sql: cell.content.sql, commit_id: commitId, rows_digest: await rowsDigest(rows), row_count: rows.length }),
      });
    }
  }
  return out;
}

/** A finding: title, claim, kind, evidence level, and references to this notebook's evidence with their relation. */
export function FindingForm(props: { afterCellId: string | null; onDone: (recorded: { cellId: string | null } | null) => void }) {
  const nb = useNotebook();
  const [title, setTitle] = useState("");
  const [claim, setClaim] = useState("");
  const [kind, setKind] = useState<Finding["kind"]>("observation");
  const [level, setLevel] = useState<Finding["evidence_level"]>("observed");
  const [assessment, setAssessment] = useState<Finding["assessment"]>("unassessed");
  const [relations, setRelations] = useState<Record<string, Relation | "">>({});
  const [limitations, setLimitations] = useState("");
  const [nextSteps, setNextSteps] = useState("");
  const [error, setError] = useState<ErrorDocument | null>(null);
  const options = citables(nb.cells, nb.sql.states, nb.cellLabel);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const references: EvidenceRef[] = [];
      for (const option of options) {
        const relation = relations[option.key];
        if (relation) references.push({ relation, target: await option.target() });
      }
      const recorded = await callMutation<typeof recordFinding>("findings.record", {
        investigation_id: nb.investigationId,
        title,
        claim,
        kind,
        evidence_level: level,
        assessment,
        limitations: lines(limitations),
        next_steps: lines(nextSteps),
        references,
        ...(props.afterCellId ? { after_cell_id: props.afterCellId } : {}),
      });
      props.onDone({ cellId: recorded.cell?.cell_id ?? null });
    } catch (x) {
      setError(errorDocumentOf(x));
    }
  };
  return (
    <form className="nb-form" onSubmit={(e) => void submit(e)} data-testid="finding-form">
      <h2>Record a finding</h2>
      <label>
        Title
        <input autoFocus required value={title} onChange={(e) => setTitle(e.target.value)} data-testid="finding-title" />
      </label>
      <label>
        Claim
        <textarea required value={claim} onChange={(e) => setClaim(e.target.value)} rows={3} data-testid="finding-claim" />
      </label>
      <div className="nb-form-row">
        <label>
          Kind{" "}
          <select value={kind} onChange={(e) => setKind(e.target.value as Finding["kind"])} data-testid="finding-kind">
            {["observation", "regression", "improvement", "root_cause", "other"].map((k) => (
              <option key={k} value={k}>
                {k.replace("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label>
          Evidence level{" "}
          <select value={level} onChange={(e) => setLevel(e.target.value as Finding["evidence_level"])} data-testid="finding-level">
            <option value="observed">observed (seen in the evidence)</option>
            <option value="derived">derived (computed from it)</option>
            <option value="inferred">inferred (reasoned beyond it)</option>
          </select>
        </label>
        <label>
          Assessment{" "}
          <select value={assessment} onChange={(e) => setAssessment(e.target.value as Finding["assessment"])} data-testid="finding-assessment-input">
            {["unassessed", "supported", "refuted", "inconclusive"].map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
      </div>
      <fieldset className="nb-cite">
        <legend>Evidence it cites (each at its pinned commit)</legend>
        {options.length === 0 ? <p className="tip-muted">No evidence cells yet: add a flame graph or a SQL cell first, or record the finding and cite later.</p> : null}
        {options.map((option) => (
          <label key={option.key} className="nb-cite-row">
            <select value={relations[option.key] ?? ""} onChange={(e) => setRelations({ ...relations, [option.key]: e.target.value as Relation | "" })} data-testid={`cite-${option.key}`}>
              <option value="">—</option>
              <option value="supports">supports</option>
              <option value="contradicts">contradicts</option>
              <option value="context">context</option>
            </select>
            <span>{option.label}</span>
          </label>
        ))}
      </fieldset>
      <label>
        Limitations (one a line)
        <textarea value={limitations} onChange={(e) => setLimitations(e.target.value)} rows={2} />
      </label>
      <label>
        Next steps (one a line)
        <textarea value={nextSteps} onChange={(e) => setNextSteps(e.target.value)} rows={2} />
      </label>
      <FormEnd error={error} submitTestId="finding-submit" onCancel={() => props.onDone(null)} />
    </form>
  );
}
