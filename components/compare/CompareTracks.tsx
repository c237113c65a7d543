"use client";

import type { CompareData } from "../evidence/use-evidence";
import { TrackSelector, type TrackSelection } from "../flame/TrackSelector";

/**
 * Each compared run's thread/process/profile selector (shown for a run with more than one sampled
 * track): the compare page's toolbar and the notebook's compare cell both use it, the page keeping
 * the choice in its URL and the cell in its content.
 */
export function CompareTracks(props: {
  trees: Pick<CompareData, "baseTracks" | "candidateTracks" | "unit" | "metric">;
  base: TrackSelection;
  candidate: TrackSelection;
  onBase: (next: TrackSelection) => void;
  onCandidate: (next: TrackSelection) => void;
  /** Each side's total on its tracks, said on the element (tests read it). */
  totals?: { base: number; candidate: number };
}) {
  const { trees } = props;
  return (
    <>
      {trees.baseTracks.choices.length > 1 ? (
        <span className="compare-side" data-testid="compare-base-tracks" data-total={props.totals?.base}>
          <span className="tip-muted">Base</span>
          <TrackSelector choices={trees.baseTracks.choices} covered={trees.baseTracks.covered} selection={props.base} onChange={props.onBase} unit={trees.unit} metric={trees.metric} />
        </span>
      ) : null}
      {trees.candidateTracks.choices.length > 1 ? (
        <span className="compare-side" data-testid="compare-candidate-tracks" data-total={props.totals?.candidate}>
          <span className="tip-muted">Candidate</span>
          <TrackSelector choices={trees.candidateTracks.choices} covered={trees.candidateTracks.covered} selection={props.candidate} onChange={props.onCandidate} unit={trees.unit} metric={trees.metric} />
        </span>
      ) : null}
    </>
  );
}
