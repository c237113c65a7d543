"use client";

import { useMemo, useState } from "react";
import { formatLocation, formatPercent, formatShortLocation, formatValue } from "../../analysis/flame/format";
import { callersTree, calleesTree } from "../../analysis/flame/sandwich";
import { buildFlameTree, type FlameInputNode } from "../../analysis/flame/tree";
import type { NeighbourRow as QueryNeighbourRow } from "../../analysis/queries/callers";
import { FlameGraphCell } from "../flame/FlameGraphCell";

/** A function with self and total over all call paths: a flame node without its place in the tree. */
export type SandwichFunction = Omit<FlameInputNode, "node_id" | "parent_id">;

/** A direct caller or callee (the fields of evidence.callers / evidence.callees rows this cell reads). */
export type NeighbourRow = Pick<QueryNeighbourRow, "frame_key" | "name" | "file" | "line" | "value">;

export interface SandwichCellProps {
  /** Functions with self and total over all call paths (evidence.hotspots rows). */
  functions: readonly SandwichFunction[];
  grandTotal: number;
  unit: string | null;
  metric: string | null;
  /** The run's flame nodes, from which the caller and callee graphs are drawn. */
  nodes: readonly FlameInputNode[];
  selected: string | null;
  onSelect: (frameKey: string) => void;
  /** Direct callers and callees of the selected function (evidence.callers / evidence.callees). */
  callers: readonly NeighbourRow[] | null;
  callees: readonly NeighbourRow[] | null;
  /** Right-click on a function's row (e.g. the transform menu). */
  onFunctionContextMenu?: (fn: SandwichFunction, x: number, y: number) => void;
  /** A key pressed in the function table, with the selected function; true when handled. */
  onFunctionKey?: (key: string, fn: SandwichFunction | null) => boolean;
  /** Whether the function list was cut at a limit. */
  truncated?: boolean;
}

type SortKey = "self" | "total" | "name";

/**
 * Sandwich: the function table (sortable by self and total) and, for the selected function,
 * its callers (inverted) and callees as flame graphs, beside the server's direct callers/callees.
 */
export function SandwichCell(props: SandwichCellProps) {
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: "self", desc: true });
  const [filter, setFilter] = useState("");
  const rows = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const list = props.functions.filter((r) => !f || r.name.toLowerCase().includes(f) || (r.file ?? "").toLowerCase().includes(f));
    const dir = sort.desc ? -1 : 1;
    return [...list].sort((a, b) => (sort.key === "name" ? a.name.localeCompare(b.name) * dir : (a[sort.key] - b[sort.key]) * dir || a.name.localeCompare(b.name)));
  }, [props.functions, filter, sort]);
  const tree = useMemo(() => buildFlameTree(props.nodes), [props.nodes]);
  const selectedRow = props.functions.find((f) => f.frame_key === props.selected) ?? null;
  const callerNodes = useMemo(() => (props.selected ? callersTree(tree, props.selected) : []), [tree, props.selected]);
  const calleeNodes = useMemo(() => (props.selected ? calleesTree(tree, props.selected) : []), [tree, props.selected]);
  const v = (x: number) => formatValue(x, props.unit, props.metric);
  const header = (key: SortKey, label: string) => (
    <th className={key === "name" ? undefined : "num"} aria-sort={sort.key === key ? (sort.desc ? "descending" : "ascending") : "none"}>
      <button type="button" className="sort-button" onClick={() => setSort({ key, desc: sort.key === key ? !sort.desc : key !== "name" })} data-testid={`sort-${key}`}>
        {label}
        {sort.key === key ? (sort.desc ? " ▾" : " ▴") : ""}
      </button>
    </th>
  );

  return (
    <div className="sandwich" data-testid="sandwich-cell">
      <section className="sandwich-table" aria-label="Functions">
        <label className="field">
          <span>Filter</span>
          <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="function or file" data-testid="sandwich-filter" />
        </label>
        <div className="scroll-table">
          <table
            className="data compact"
            data-testid="sandwich-table"
            onKeyDown={(e) => {
              if ((e.target as HTMLElement).tagName === "INPUT") return;
              if (props.onFunctionKey?.(e.key, selectedRow)) e.preventDefault();
            }}
          >
            <thead>
              <tr>
                {header("self", "Self")}
                <th className="num">%</th>
                {header("total", "Total")}
                <th className="num">%</th>
                {header("name", "Function")}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.frame_key} className={r.frame_key === props.selected ? "selected" : undefined} data-testid="sandwich-row" data-frame-key={r.frame_key}
                  aria-selected={r.frame_key === props.selected}
                  onContextMenu={(e) => {
                    if (!props.onFunctionContextMenu) return;
                    e.preventDefault();
                    props.onSelect(r.frame_key);
                    props.onFunctionContextMenu(r, e.clientX, e.clientY);
                  }}
                >
                  <td className="num">{v(r.self)}</td>
                  <td className="num">{formatPercent(r.self, props.grandTotal)}</td>
                  <td className="num">{v(r.total)}</td>
                  <td className="num">{formatPercent(r.total, props.grandTotal)}</td>
                  <td className="wide">
                    <button type="button" className="row-button" onClick={() => props.onSelect(r.frame_key)}>
                      {r.name}
                    </button>{" "}
                    <span className="tip-muted mono" title={formatLocation(r.file, r.line) ?? undefined}>
                      {formatShortLocation(r.file, r.line) ?? ""}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length === 0 ? <p className="tip-muted">No function matches “{filter}”. Clear the filter to see all {props.functions.length}.</p> : null}
          {props.truncated ? <p className="tip-muted">Showing the {props.functions.length} functions with the most self value.</p> : null}
        </div>
      </section>
      <section className="sandwich-detail" aria-label="Selected function">
        {!selectedRow ? (
          <div className="empty" data-testid="sandwich-none">
            <strong>Pick a function</strong> in the table to see who calls it and what it calls.
          </div>
        ) : (
          <>
            <h3 data-testid="sandwich-selected">
              {selectedRow.name} <span className="tip-muted mono">{formatLocation(selectedRow.file, selectedRow.line) ?? ""}</span>
            </h3>
            <p className="tabular">
              self {v(selectedRow.self)} ({formatPercent(selectedRow.self, props.grandTotal)}) · total {v(selectedRow.total)} ({formatPercent(selectedRow.total, props.grandTotal)})
            </p>
            <div className="neighbours">
              <NeighbourList
                title="Direct callers"
                hint="of its outermost call under recursion: each sample once, adding up to its total"
                rows={props.callers}
                unit={props.unit}
                metric={props.metric}
                whole={selectedRow.total}
                testId="sandwich-callers"
                onSelect={props.onSelect}
              />
              <NeighbourList
                title="Direct callees"
                hint="of its innermost call under recursion: each sample once, adding up with its self to its total"
                rows={props.callees}
                self={selectedRow.self}
                unit={props.unit}
                metric={props.metric}
                whole={selectedRow.total}
                testId="sandwich-callees"
                onSelect={props.onSelect}
              />
            </div>
            <h4>Callers (inverted: the function at the bottom, its callers above)</h4>
            {callerNodes.length ? (
              <FlameGraphCell nodes={callerNodes} unit={props.unit} metric={props.metric} rootName="all calls" orientation="flame" compact maxHeight={260} testId="sandwich-callers-flame" label={`Callers of ${selectedRow.name}`} />
            ) : (
              <p className="tip-muted">Not in the drawn flame tree (pruned by the node budget); the direct callers above are exact.</p>
            )}
            <h4>Callees</h4>
            {calleeNodes.length ? (
              <FlameGraphCell nodes={calleeNodes} unit={props.unit} metric={props.metric} rootName="all calls" orientation="icicle" compact maxHeight={260} testId="sandwich-callees-flame" label={`Callees of ${selectedRow.name}`} />
            ) : null}
          </>
        )}
      </section>
    </div>
  );
}

/**
 * Direct callers or callees with their shares of the function's total. Each sample counts once
 * (see analysis/queries/callers.ts), so callers add up to 100 %, and callees with the function's
 * own self value (its last row) too.
 */
function NeighbourList(props: { title: string; hint: string; rows: readonly NeighbourRow[] | null; self?: number; unit: string | null; metric: string | null; whole: number; testId: string; onSelect: (k: string) => void }) {
  return (
    <div className="neighbour-list" data-testid={props.testId}>
      <h4 title={props.hint}>{props.title}</h4>
      {props.rows === null ? (
        <p className="tip-muted">Loading…</p>
      ) : props.rows.length === 0 ? (
        <p className="tip-muted">None.</p>
      ) : (
        <table className="data compact">
          <tbody>
            {props.rows.map((r) => (
              <tr key={r.frame_key} data-testid={`${props.testId}-row`}>
                <td className="wide">
                  {r.frame_key === "(root)" ? (
                    <span className="tip-muted">(root: called from no frame)</span>
                  ) : (
                    <button type="button" className="row-button" onClick={() => props.onSelect(r.frame_key)}>
                      {r.name}
                    </button>
                  )}
                </td>
                <td className="num">{formatValue(r.value, props.unit, props.metric)}</td>
                <td className="num">{formatPercent(r.value, props.whole)}</td>
              </tr>
            ))}
            {props.self !== undefined && props.self > 0 ? (
              <tr data-testid={`${props.testId}-self`}>
                <td className="wide tip-muted">(self: in the function itself)</td>
                <td className="num">{formatValue(props.self, props.unit, props.metric)}</td>
                <td className="num">{formatPercent(props.self, props.whole)}</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      )}
    </div>
  );
}
