"use client";

import { useMemo, useState } from "react";
import { formatLocation, formatPercent, formatValue } from "../../analysis/flame/format";
import { buildFlameTree, childrenOf, pathTo, type FlameInputNode, type FlameTree } from "../../analysis/flame/tree";

export interface CallTreeCellProps {
  nodes: readonly FlameInputNode[];
  unit: string | null;
  metric: string | null;
  /** A node to reveal and select (e.g. the flame graph's zoom). */
  selected?: string | null;
  onSelect?: (nodeId: string) => void;
  /** Right-click on a row (e.g. the transform menu), with its index in the tree. */
  onNodeContextMenu?: (tree: FlameTree, index: number, x: number, y: number) => void;
  /** A key the tree does not use itself, with the focused row's index; true when handled. */
  onNodeKey?: (key: string, tree: FlameTree, index: number) => boolean;
  /** Rows rendered at most (the heaviest paths are expanded first). */
  maxRows?: number;
}

/**
 * How deep the heaviest path opens by itself: as many rows as fit in the window below the toolbar
 * (a 30-level path opened off-screen hid the rest of the tree), never fewer than 4.
 */
function depthThatFits(): number {
  if (typeof window === "undefined") return 8;
  return Math.max(4, Math.floor((window.innerHeight - 320) / 26));
}

/** Expands the heaviest path down while a child holds at least half of its parent, as deep as fits. */
function initialExpansion(tree: FlameTree, selected: number, maxDepth: number): Set<number> {
  const open = new Set<number>([0]);
  for (let at = 0; tree.depth[at] < maxDepth; ) {
    const kids = childrenOf(tree, at);
    if (!kids.length || tree.total[kids[0]] < 0.5 * tree.total[at]) break;
    open.add(kids[0]);
    at = kids[0];
  }
  if (selected > 0) for (const i of pathTo(tree, selected)) open.add(i);
  return open;
}

/** Call tree: an expandable table with self and total, each with its share of the total. */
export function CallTreeCell(props: CallTreeCellProps) {
  const tree = useMemo(() => buildFlameTree(props.nodes), [props.nodes]);
  const selectedIndex = props.selected ? (tree.indexById.get(props.selected) ?? -1) : -1;
  const [open, setOpen] = useState(() => initialExpansion(tree, selectedIndex, depthThatFits()));
  const [focused, setFocused] = useState(selectedIndex > 0 ? selectedIndex : 0);
  const maxRows = props.maxRows ?? 2000;
  const rows = useMemo(() => {
    const out: number[] = [];
    const stack = [0];
    while (stack.length && out.length < maxRows) {
      const i = stack.pop()!;
      out.push(i);
      if (open.has(i)) {
        const kids = childrenOf(tree, i);
        for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
      }
    }
    return out;
  }, [tree, open, maxRows]);
  const total = tree.total[0];
  const v = (x: number) => formatValue(x, props.unit, props.metric);
  const toggle = (i: number, to?: boolean) => {
    const next = new Set(open);
    if (to ?? !next.has(i)) next.add(i);
    else next.delete(i);
    setOpen(next);
  };

  if (props.nodes.length === 0) {
    return (
      <div className="empty" data-testid="calltree-empty">
        <strong>No call tree.</strong> This run has no samples for the chosen metric in the pinned commit; pick another metric or import a profile.
      </div>
    );
  }

  const onKey = (e: React.KeyboardEvent) => {
    const pos = rows.indexOf(focused);
    const hasKids = tree.childStart[focused + 1] > tree.childStart[focused];
    let next = focused;
    if (e.key === "ArrowDown") next = rows[Math.min(rows.length - 1, pos + 1)];
    else if (e.key === "ArrowUp") next = rows[Math.max(0, pos - 1)];
    else if (e.key === "ArrowRight" && hasKids) {
      if (!open.has(focused)) toggle(focused, true);
      else next = childrenOf(tree, focused)[0];
    } else if (e.key === "ArrowLeft") {
      if (open.has(focused) && hasKids) toggle(focused, false);
      else next = Math.max(0, tree.parent[focused]);
    } else if (e.key === "Enter" || e.key === " ") {
      toggle(focused);
      props.onSelect?.(tree.ids[focused]);
    } else if (!props.onNodeKey?.(e.key, tree, focused)) return;
    e.preventDefault();
    setFocused(next);
    document.getElementById(`calltree-row-${next}`)?.focus();
  };

  return (
    <div className="calltree" data-testid="calltree-cell">
      <table className="data compact" role="treegrid" aria-label="Call tree" onKeyDown={onKey}>
        <thead>
          <tr>
            <th>Function</th>
            <th className="num">Total</th>
            <th className="num">%</th>
            <th className="num">Self</th>
            <th className="num">%</th>
            <th>Location</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((i) => {
            const hasKids = tree.childStart[i + 1] > tree.childStart[i];
            return (
              <tr
                key={tree.ids[i]}
                id={`calltree-row-${i}`}
                tabIndex={i === focused ? 0 : -1}
                aria-level={tree.depth[i] + 1}
                aria-expanded={hasKids ? open.has(i) : undefined}
                aria-selected={i === selectedIndex}
                className={i === selectedIndex ? "selected" : undefined}
                data-testid="calltree-row"
                onFocus={() => setFocused(i)}
                onContextMenu={(e) => {
                  if (!props.onNodeContextMenu || i <= 0) return;
                  e.preventDefault();
                  setFocused(i);
                  props.onNodeContextMenu(tree, i, e.clientX, e.clientY);
                }}
              >
                <td className="wide">
                  <span style={{ paddingLeft: `min(${tree.depth[i] * 14}px, 28vw)` }} className="tree-indent" title={`depth ${tree.depth[i]}`}>
                    {hasKids ? (
                      <button type="button" className="twisty" tabIndex={-1} aria-label={open.has(i) ? "Collapse" : "Expand"} onClick={() => toggle(i)}>
                        {open.has(i) ? "▾" : "▸"}
                      </button>
                    ) : (
                      <span className="twisty" />
                    )}
                    <span className="tree-bar" style={{ width: `${Math.max(1, (40 * tree.total[i]) / (total || 1))}px` }} aria-hidden="true" />
                    {tree.names[i]}
                  </span>
                </td>
                <td className="num">{v(tree.total[i])}</td>
                <td className="num">{formatPercent(tree.total[i], total)}</td>
                <td className="num">{v(tree.self[i])}</td>
                <td className="num">{formatPercent(tree.self[i], total)}</td>
                <td className="mono tip-muted">{formatLocation(tree.files[i], tree.lines[i]) ?? ""}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {rows.length >= maxRows ? <p className="tip-muted">Showing the first {maxRows} rows; collapse branches to see others.</p> : null}
    </div>
  );
}
