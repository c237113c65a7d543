"use client";

import { ErrorPanel } from "../../components/ErrorPanel";
import { CompareCell } from "../../components/compare/CompareCell";
import { useCompareRows, useCompareTrees } from "../../components/evidence/use-evidence";
import { AddToInvestigation, type CellDraft } from "../../components/notebook/AddToInvestigation";
import { useUrlState } from "../../components/use-url-state";
import { COMPARE_URL_STATE, type CompareUrlState } from "./url-state";
import { formatTrackSelection, parseTrackSelection, type TrackSelection } from "../../components/flame/TrackSelector";
import { CompareTracks } from "../../components/compare/CompareTracks";

/** A compare side's tracks from the URL: absent is every track merged (as the comparison always read). */
const sideTracks = (value: string | null): TrackSelection => (value === null ? "all" : parseTrackSelection(value));
const sideValue = (selection: TrackSelection): string | null => (selection === "all" ? null : selection === "busiest" ? "busiest" : formatTrackSelection(selection));

export interface CompareWorkbenchProps {
  base: string;
  candidate: string;
  commitId: string;
  metrics: string[];
  /** The view state the URL carried: readUrlState(COMPARE_URL_STATE, searchParams). */
  initial: CompareUrlState;
}

/** Fetches both flame trees and the per-function comparison, each run on its chosen tracks, and keeps the view in the URL. */
export function CompareWorkbench(props: CompareWorkbenchProps) {
  const [state, patch] = useUrlState(COMPARE_URL_STATE, props.initial);
  const metric = state.metric ?? null;
  const normalized = state.norm === "1";
  const baseTracks = sideTracks(state.btracks);
  const candidateTracks = sideTracks(state.ctracks);
  const trees = useCompareTrees({ base: props.base, candidate: props.candidate, commitId: props.commitId, metric, baseTracks, candidateTracks });
  const table = useCompareRows({ base: props.base, candidate: props.candidate, commitId: props.commitId, metric, normalize: normalized, baseTracks, candidateTracks });

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
      // The tracks each side reads, so the cell shows the numbers the page showed (absent: every track merged).
      ...(baseTracks !== "all" ? { base_tracks: baseTracks } : {}),
      ...(candidateTracks !== "all" ? { candidate_tracks: candidateTracks } : {}),
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
      <div className="flame-toolbar" data-testid="compare-toolbar">
        {metricPicker}
        <CompareTracks
          trees={trees}
          base={baseTracks}
          candidate={candidateTracks}
          onBase={(next) => patch({ btracks: sideValue(next), zoom: null })}
          onCandidate={(next) => patch({ ctracks: sideValue(next), zoom: null })}
          totals={{ base: table.base_total, candidate: table.candidate_total }}
        />
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
        onSearchChange={(q) => patch({ q }, { transient: true })}
      />
    </>
  );
}
