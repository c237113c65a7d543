"use client";

import { useCallback, useMemo } from "react";
import { diffPalette } from "../../analysis/flame/colour";
import { diffColourOf, diffColourScale, diffFlameTrees, type DiffNode } from "../../analysis/flame/diff";
import { formatDelta, formatPercent, formatValue } from "../../analysis/flame/format";
import type { FlameInputNode, FlameTree } from "../../analysis/flame/tree";
import { FlameGraphCell } from "../flame/FlameGraphCell";

export interface CompareRow {
  frame_key: string;
  name: string;
  file: string | null;
  base_self: number;
  candidate_self: number;
  base_total: number;
  candidate_total: number;
  delta: number;
  relative: number | null;
  status: "changed" | "added" | "removed" | "unchanged";
}

export interface CompareCellProps {
  baseNodes: readonly FlameInputNode[];
  candidateNodes: readonly FlameInputNode[];
  rows: readonly CompareRow[];
  unit: string | null;
  metric: string | null;
  /** Which run's widths are drawn: the candidate (default) or the base (vanished stacks visible). */
  from: "base" | "candidate";
  onFromChange: (from: "base" | "candidate") => void;
  /** Whether the table compares shares of each run's total (evidence.compare normalize). */
  normalized: boolean;
  onNormalizedChange: (normalized: boolean) => void;
  zoom?: string | null;
  onZoomChange?: (nodeId: string | null) => void;
  search?: string;
  onSearchChange?: (q: string) => void;
}

const PALETTES = { light: diffPalette(false), dark: diffPalette(true) };

/** Differential flame graph (red grew, blue shrank) and the table of the largest changes. */
export function CompareCell(props: CompareCellProps) {
  const diff = useMemo(() => diffFlameTrees(props.baseNodes, props.candidateNodes, props.from), [props.baseNodes, props.candidateNodes, props.from]);
  const byId = useMemo(() => new Map<string, DiffNode>(diff.nodes.map((n) => [n.node_id, n])), [diff]);
  const scale = diffColourScale(diff);
  const colours = useCallback(
    (tree: FlameTree) => {
      const out = new Uint8Array(tree.count);
      const neutral = diffColourOf({ share_change: 0 } as DiffNode, scale);
      out[0] = neutral;
      // The tree may still be the previous layout's (layouts arrive from a worker after `from` changes):
      // nodes it has that this diff lacks are drawn neutral until the new layout lands.
      for (let i = 1; i < tree.count; i++) {
        const node = byId.get(tree.ids[i]);
        out[i] = node ? diffColourOf(node, scale) : neutral;
      }
      return out;
    },
    [byId, scale],
  );
  const v = (x: number) => formatValue(x, props.unit, props.metric);
  const describe = useCallback(
    (id: string) => {
      const n = byId.get(id);
      if (!n) return null;
      const change = n.share_change;
      return (
        <table className="tip-values" data-testid="diff-tooltip">
          <tbody>
            <tr>
              <th>base</th>
              <td className="num">{v(n.base_total)}</td>
              <td className="num">{formatPercent(n.base_total, diff.baseTotal)}</td>
            </tr>
            <tr>
              <th>candidate</th>
              <td className="num">{v(n.candidate_total)}</td>
              <td className="num">{formatPercent(n.candidate_total, diff.candidateTotal)}</td>
            </tr>
            <tr>
              <th>change</th>
              <td className="num" colSpan={2} data-testid="diff-change">
                {change > 0 ? "grew" : change < 0 ? "shrank" : "unchanged"} {change >= 0 ? "+" : "−"}
                {Math.abs(100 * change).toFixed(1)} points of the total
              </td>
            </tr>
          </tbody>
        </table>
      );
    },
    [byId, diff, props.unit, props.metric],
  );

  const legend = (
    <div className="diff-legend" data-testid="diff-legend">
      <span className="swatch-row" aria-hidden="true">
        {PALETTES.light.slice(0, -1).map((c, i) => (
          <span key={i} className="swatch" style={{ background: c }} />
        ))}
      </span>
      <span>
        <strong className="shrank">blue = shrank</strong>, <strong className="grew">red = grew</strong>; stronger colour = larger change of the frame’s share of its run’s total (inclusive). Widths are the{" "}
        {props.from === "candidate" ? "candidate’s: stacks that vanished have no width — draw from the base to see them" : "base’s: stacks that are new in the candidate are not drawn"}.
      </span>
    </div>
  );

  const toolbar = (
    <div className="segmented" role="group" aria-label="Draw widths from">
      <button type="button" aria-pressed={props.from === "candidate"} onClick={() => props.onFromChange("candidate")} data-testid="from-candidate">
        Candidate widths
      </button>
      <button type="button" aria-pressed={props.from === "base"} onClick={() => props.onFromChange("base")} data-testid="from-base">
        Base widths
      </button>
    </div>
  );

  return (
    <div className="compare-cell" data-testid="compare-cell">
      <FlameGraphCell
        nodes={diff.nodes}
        unit={props.unit}
        metric={props.metric}
        colours={colours}
        palettes={PALETTES}
        describe={describe}
        legend={legend}
        toolbar={toolbar}
        zoom={props.zoom}
        onZoomChange={props.onZoomChange}
        search={props.search}
        onSearchChange={props.onSearchChange}
        globalShortcuts
        label={`Differential flame graph: ${props.from} widths, red grew, blue shrank.`}
        testId="compare-flame"
      />
      <div className="compare-table-head">
        <h2>Largest changes</h2>
        <label className="check">
          <input type="checkbox" checked={props.normalized} onChange={(e) => props.onNormalizedChange(e.target.checked)} data-testid="normalize-toggle" />
          normalized by each run’s total (shares instead of absolute values)
        </label>
      </div>
      {props.rows.length === 0 ? (
        <div className="empty">
          <strong>No frame changed.</strong> The two runs have the same self values for every function{props.normalized ? " share" : ""}.
        </div>
      ) : (
        <table className="data compact" data-testid="compare-table">
          <thead>
            <tr>
              <th>Function</th>
              <th>Status</th>
              <th className="num">Base self</th>
              <th className="num">Candidate self</th>
              <th className="num">Change{props.normalized ? " (share)" : ""}</th>
              <th className="num">Relative</th>
              <th className="num">Base total</th>
              <th className="num">Candidate total</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => {
              const direction = r.delta > 0 ? "grew" : r.delta < 0 ? "shrank" : "same";
              return (
                <tr key={r.frame_key} data-testid="compare-row" data-name={r.name} data-direction={direction}>
                  <td className="wide">
                    {r.name} <span className="tip-muted mono">{r.file ?? ""}</span>
                  </td>
                  <td>
                    <span className={`status diff-${direction}`}>
                      {r.status === "changed" ? direction : r.status}
                    </span>
                  </td>
                  <td className="num">{v(r.base_self)}</td>
                  <td className="num">{v(r.candidate_self)}</td>
                  <td className={`num diff-${direction}`}>{props.normalized ? `${r.delta > 0 ? "+" : r.delta < 0 ? "−" : "±"}${Math.abs(100 * r.delta).toFixed(2)} pts` : formatDelta(r.delta, props.unit, props.metric)}</td>
                  <td className="num">{r.relative === null ? "new" : `${r.relative > 0 ? "+" : ""}${(100 * r.relative).toFixed(1)}%`}</td>
                  <td className="num">{v(r.base_total)}</td>
                  <td className="num">{v(r.candidate_total)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}
