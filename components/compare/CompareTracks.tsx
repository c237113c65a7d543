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
  const sides = [
    { side: "base", label: "Base", tracks: props.trees.baseTracks, selection: props.base, onChange: props.onBase, total: props.totals?.base },
    { side: "candidate", label: "Candidate", tracks: props.trees.candidateTracks, selection: props.candidate, onChange: props.onCandidate, total: props.totals?.candidate },
  ] as const;
  return (
    <>
      {sides.map((s) =>
        s.tracks.choices.length > 1 ? (
          <span key={s.side} className="compare-side" data-testid={`compare-${s.side}-tracks`} data-total={s.total}>
            <span className="tip-muted">{s.label}</span>
            <TrackSelector choices={s.tracks.choices} covered={s.tracks.covered} selection={s.selection} onChange={s.onChange} unit={props.trees.unit} metric={props.trees.metric} />
          </span>
        ) : null,
      )}
    </>
  );
}
