"use client";

import { useCallback, useMemo } from "react";
import { diffPalette } from "../../analysis/flame/colour";
import { compareTexts, diffColourOf, diffColourScale, diffFlameTrees, type ChangeTexts, type CompareValues, type DiffNode } from "../../analysis/flame/diff";
import { formatDelta, formatPercent, formatValue } from "../../analysis/flame/format";
import type { FlameInputNode, FlameTree } from "../../analysis/flame/tree";
import { FlameGraphCell } from "../flame/FlameGraphCell";

/** An `evidence.compare` row (the fields this cell reads). */
export interface CompareRow extends CompareValues {
  frame_key: string;
  name: string;
  file: string | null;
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
  const rowsByKey = useMemo(() => new Map(props.rows.map((r) => [r.frame_key, r])), [props.rows]);
  const describe = useCallback(
    (id: string) => {
      const n = byId.get(id);
      if (!n) return null;
      const change = n.share_change;
      const d = (x: number) => formatDelta(x, props.unit, props.metric);
      const v = (x: number) => formatValue(x, props.unit, props.metric);
      // The function over all its call paths: the table's row, in the table's words.
      const fn = rowsByKey.get(n.frame_key);
      const fnTexts = fn ? compareTexts(fn, props.normalized, props.unit, props.metric) : null;
      return (
        <table className="tip-values diff-values" data-testid="diff-tooltip">
          <thead>
            <tr>
              <th>this path</th>
              <th className="num">base</th>
              <th className="num">candidate</th>
              <th className="num">change</th>
            </tr>
          </thead>
          <tbody>
            <tr data-testid="diff-node-self">
              <th>self</th>
              <td className="num">{v(n.base_self)}</td>
              <td className="num">{v(n.candidate_self)}</td>
              <td className="num">{d(n.candidate_self - n.base_self)}</td>
            </tr>
            <tr data-testid="diff-node-total">
              <th>total</th>
              <td className="num">{v(n.base_total)}</td>
              <td className="num">{v(n.candidate_total)}</td>
              <td className="num">{d(n.candidate_total - n.base_total)}</td>
            </tr>
            <tr>
              <th>total, share</th>
              <td className="num">{formatPercent(n.base_total, diff.baseTotal)}</td>
              <td className="num">{formatPercent(n.candidate_total, diff.candidateTotal)}</td>
              <td className="num" data-testid="diff-change">
                {change > 0 ? "grew" : change < 0 ? "shrank" : "unchanged"} {change >= 0 ? "+" : "−"}
                {Math.abs(100 * change).toFixed(1)} points of the total
              </td>
            </tr>
            {fnTexts ? (
              <>
                <tr>
                  <th colSpan={4} className="tip-sub">
                    function, all call paths{props.normalized ? " (change in points of each run’s total)" : ""}
                  </th>
                </tr>
                <ChangeRow label="self" texts={fnTexts.self} testId="diff-fn-self" />
                <ChangeRow label="total" texts={fnTexts.total} testId="diff-fn-total" />
              </>
            ) : null}
          </tbody>
        </table>
      );
    },
    [byId, diff, rowsByKey, props.unit, props.metric, props.normalized],
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
        <table className="data compact compare-table" data-testid="compare-table">
          <thead>
            <tr>
              <th rowSpan={2}>Function</th>
              <th rowSpan={2}>Status</th>
              <th colSpan={3} className="group">
                Self
              </th>
              <th colSpan={3} className="group">
                Total (inclusive)
              </th>
            </tr>
            <tr>
              <ValueHeads normalized={props.normalized} />
              <ValueHeads normalized={props.normalized} />
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => {
              const direction = r.delta > 0 ? "grew" : r.delta < 0 ? "shrank" : "same";
              const totalDirection = r.total_delta > 0 ? "grew" : r.total_delta < 0 ? "shrank" : "same";
              const texts = compareTexts(r, props.normalized, props.unit, props.metric);
              return (
                <tr key={r.frame_key} data-testid="compare-row" data-name={r.name} data-frame-key={r.frame_key} data-direction={direction} data-total-direction={totalDirection}>
                  <td className="fn" title={r.file ? `${r.name}\n${r.file}` : r.name}>
                    {r.name} <span className="tip-muted mono">{r.file ?? ""}</span>
                  </td>
                  <td>
                    <span className={`status diff-${direction}`}>{r.status === "changed" ? `self ${direction}` : r.status}</span>
                  </td>
                  <ChangeCells texts={texts.self} direction={direction} testId="compare-self" />
                  <ChangeCells texts={texts.total} direction={totalDirection} testId="compare-total" />
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** A value group's column heads: base, candidate, and the change with the relative change under it. */
function ValueHeads(props: { normalized: boolean }) {
  return (
    <>
      <th className="num group-start">Base</th>
      <th className="num">Candidate</th>
      <th className="num">
        Change{props.normalized ? " (share)" : ""}
        <span className="rel">relative</span>
      </th>
    </>
  );
}

/** Base, candidate, and the change with its relative change under it, of one value, as table cells (three columns, not four, keep the table inside 1024 px). */
function ChangeCells(props: { texts: ChangeTexts; direction: string; testId: string }) {
  return (
    <>
      <td className="num group-start" data-testid={`${props.testId}-base`}>
        {props.texts.base}
      </td>
      <td className="num" data-testid={`${props.testId}-candidate`}>
        {props.texts.candidate}
      </td>
      <td className="num">
        <span className={`diff-${props.direction}`} data-testid={`${props.testId}-change`}>
          {props.texts.change}
        </span>
        <span className="rel" data-testid={`${props.testId}-relative`}>
          {props.texts.relative}
        </span>
      </td>
    </>
  );
}

/** The same, as a labelled tooltip row (the relative change after the absolute one). */
function ChangeRow(props: { label: string; texts: ChangeTexts; testId: string }) {
  return (
    <tr data-testid={props.testId}>
      <th>{props.label}</th>
      <td className="num" data-testid={`${props.testId}-base`}>
        {props.texts.base}
      </td>
      <td className="num" data-testid={`${props.testId}-candidate`}>
        {props.texts.candidate}
      </td>
      <td className="num">
        <span data-testid={`${props.testId}-change`}>{props.texts.change}</span> (<span data-testid={`${props.testId}-relative`}>{props.texts.relative}</span>)
      </td>
    </tr>
  );
}
