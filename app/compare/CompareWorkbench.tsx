"use client";

import { useEffect, useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import { ErrorPanel } from "../../components/ErrorPanel";
import { CompareCell, type CompareRow } from "../../components/compare/CompareCell";
import { AddToInvestigation, type CellDraft } from "../../components/notebook/AddToInvestigation";
import { errorDocumentOf, queryService } from "../../components/trpc-client";
import type { FlameInputNode } from "../../analysis/flame/tree";
import { useUrlState } from "../../components/use-url-state";
import { COMPARE_URL_STATE, type CompareUrlState } from "./url-state";

interface Loaded {
  base: FlameInputNode[];
  candidate: FlameInputNode[];
  unit: string | null;
  metric: string | null;
}

export interface CompareWorkbenchProps {
  base: string;
  candidate: string;
  commitId: string;
  metrics: string[];
  /** The view state the URL carried: readUrlState(COMPARE_URL_STATE, searchParams). */
  initial: CompareUrlState;
}

/** Fetches both flame trees and the per-function comparison, and keeps the view in the URL. */
export function CompareWorkbench(props: CompareWorkbenchProps) {
  const [state, patch] = useUrlState(COMPARE_URL_STATE, props.initial);
  const [trees, setTrees] = useState<Loaded | ErrorDocument | null>(null);
  const [table, setTable] = useState<{ rows: CompareRow[] } | ErrorDocument | null>(null);
  const metric = state.metric ?? undefined;
  const normalized = state.norm === "1";

  useEffect(() => {
    let live = true;
    setTrees(null);
    const q = (run: string) => queryService("evidence.flame_tree", { run_id: run, metric, commit_id: props.commitId, budget: 20_000 });
    Promise.all([q(props.base), q(props.candidate)])
      .then(([b, c]) => {
        if (!live) return;
        if (b.status.state === "unavailable" || c.status.state === "unavailable") {
          const which = b.status.state === "unavailable" ? b : c;
          setTrees({ code: "INVALID_ARGUMENTS", message: which.status.reason ?? "A run has no evidence in this commit.", retryable: false, details: {} } as ErrorDocument);
          return;
        }
        setTrees({ base: b.nodes, candidate: c.nodes, unit: c.unit ?? b.unit, metric: c.metric ?? b.metric });
      })
      .catch((e) => live && setTrees(errorDocumentOf(e)));
    return () => {
      live = false;
    };
  }, [props.base, props.candidate, props.commitId, metric]);

  useEffect(() => {
    let live = true;
    queryService("evidence.compare", { base_run_id: props.base, candidate_run_id: props.candidate, metric, normalize: normalized, collection: "changed", limit: 50, commit_id: props.commitId })
      .then((r) => live && setTable({ rows: r.rows }))
      .catch((e) => live && setTable(errorDocumentOf(e)));
    return () => {
      live = false;
    };
  }, [props.base, props.candidate, props.commitId, metric, normalized]);

  const metricPicker = props.metrics.length ? (
    <label className="field">
      <span>Metric</span>
      <select value={state.metric ?? ""} onChange={(e) => patch({ metric: e.target.value || null, zoom: null })} data-testid="metric-picker">
        <option value="">default</option>
        {props.metrics.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
    </label>
  ) : null;

  /** The comparison as a notebook cell with the differential graph's view state, at the page's commit. */
  const viewAsCell = (): CellDraft => ({
    kind: "compare",
    content: {
      base_run_id: props.base,
      candidate_run_id: props.candidate,
      ...(metric ? { metric } : {}),
      normalize: normalized,
      from: state.from === "base" ? "base" : "candidate",
      zoom: state.zoom,
      ...(state.q ? { search: state.q } : {}),
    },
    commit_id: props.commitId,
  });

  if (!trees || !table) return <p className="tip-muted" data-testid="loading">Loading both runs at {props.commitId}…</p>;
  if ("code" in trees) return <ErrorPanel error={trees} />;
  if ("code" in table) return <ErrorPanel error={table} />;
  return (
    <>
      <div className="flame-toolbar">
        {metricPicker}
        <span className="spacer" />
        <AddToInvestigation cell={viewAsCell} />
      </div>
      <CompareCell
        baseNodes={trees.base}
        candidateNodes={trees.candidate}
        rows={table.rows}
        unit={trees.unit}
        metric={trees.metric}
        from={state.from === "base" ? "base" : "candidate"}
        onFromChange={(from) => patch({ from, zoom: null })}
        normalized={normalized}
        onNormalizedChange={(n) => patch({ norm: n ? "1" : "0" })}
        zoom={state.zoom}
        onZoomChange={(zoom) => patch({ zoom })}
        search={state.q ?? ""}
        onSearchChange={(q) => patch({ q })}
      />
    </>
  );
}
