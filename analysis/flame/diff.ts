import { diffIndex } from "./colour";
import { formatDelta, formatValue } from "./format";
import type { FlameInputNode } from "./tree";

/** A node of the merged tree: both sides' values, and `self`/`total` taken from the drawn side. */
export interface DiffNode extends FlameInputNode {
  base_self: number;
  base_total: number;
  candidate_self: number;
  candidate_total: number;
  /** Change of the node's share of its run's total (candidate − base), in [−1, 1]. */
  share_change: number;
}

export interface FlameDiff {
  nodes: DiffNode[];
  baseTotal: number;
  candidateTotal: number;
  /** Largest |share_change| among nodes, for colour strength. */
  maxChange: number;
}

/**
 * Merges two flame trees by call path (the chain of frame_keys from the root), so the same stack
 * in two runs is one node. `from` picks which side's values are drawn: "candidate" (default;
 * stacks that vanished have no width) or "base" (vanished stacks visible, new ones not).
 */
export function diffFlameTrees(base: readonly FlameInputNode[], candidate: readonly FlameInputNode[], from: "base" | "candidate" = "candidate"): FlameDiff {
  const merged = new Map<string, DiffNode>();
  const add = (nodes: readonly FlameInputNode[], side: "base" | "candidate") => {
    const paths = pathKeys(nodes);
    for (const n of nodes) {
      const key = paths.get(n.node_id)!;
      let node = merged.get(key);
      if (!node) {
        const parentKey = n.parent_id === null ? null : (paths.get(n.parent_id) ?? null);
        node = { ...n, node_id: key, parent_id: parentKey, self: 0, total: 0, base_self: 0, base_total: 0, candidate_self: 0, candidate_total: 0, share_change: 0 };
        merged.set(key, node);
      }
      if (side === "base") {
        node.base_self += n.self;
        node.base_total += n.total;
      } else {
        node.candidate_self += n.self;
        node.candidate_total += n.total;
      }
    }
  };
  add(base, "base");
  add(candidate, "candidate");
  const rootSum = (nodes: readonly FlameInputNode[]) => nodes.reduce((s, n) => (n.parent_id === null ? s + n.total : s), 0);
  const baseTotal = rootSum(base);
  const candidateTotal = rootSum(candidate);
  let maxChange = 0;
  const out: DiffNode[] = [];
  for (const node of merged.values()) {
    node.share_change = (candidateTotal > 0 ? node.candidate_total / candidateTotal : 0) - (baseTotal > 0 ? node.base_total / baseTotal : 0);
    node.self = from === "base" ? node.base_self : node.candidate_self;
    node.total = from === "base" ? node.base_total : node.candidate_total;
    if (node.total <= 0) continue;
    maxChange = Math.max(maxChange, Math.abs(node.share_change));
    out.push(node);
  }
  return { nodes: out, baseTotal, candidateTotal, maxChange };
}

/** Palette indices for diff nodes in layout order (colour.ts diffPalette). */
export function diffColourScale(diff: FlameDiff): number {
  // Changes of 2 points of the total or more are never drawn as faint.
  return Math.max(diff.maxChange, 0.02);
}

export function diffColourOf(node: DiffNode, scale: number): number {
  return diffIndex(node.share_change, scale);
}

/** node_id → the chain of frame_keys from the root, joined; stable across runs. */
function pathKeys(nodes: readonly FlameInputNode[]): Map<string, string> {
  const byId = new Map(nodes.map((n) => [n.node_id, n]));
  const keys = new Map<string, string>();
  const keyOf = (id: string): string => {
    const known = keys.get(id);
    if (known !== undefined) return known;
    const chain: FlameInputNode[] = [];
    let at: FlameInputNode | undefined = byId.get(id);
    while (at && !keys.has(at.node_id)) {
      chain.push(at);
      at = at.parent_id === null ? undefined : byId.get(at.parent_id);
    }
    let prefix = at ? keys.get(at.node_id)! : "";
    for (let i = chain.length - 1; i >= 0; i--) {
      prefix = prefix ? `${prefix}/${chain[i].frame_key}` : chain[i].frame_key;
      keys.set(chain[i].node_id, prefix);
    }
    return keys.get(id)!;
  };
  for (const n of nodes) keyOf(n.node_id);
  return keys;
}

/** One compared value as text: both sides, the change and the relative change. */
export interface ChangeTexts {
  base: string;
  candidate: string;
  change: string;
  relative: string;
}

/** The fields of an `evidence.compare` row that its texts are made of. */
export interface CompareValues {
  base_self: number;
  candidate_self: number;
  base_total: number;
  candidate_total: number;
  delta: number;
  relative: number | null;
  total_delta: number;
  total_relative: number | null;
  status: "changed" | "added" | "removed" | "unchanged";
}

/**
 * A function's self and total change as the compare table and the differential graph's tooltip
 * both show them (one function, so the two never disagree): values with units, the change (in
 * points of each run's total when normalized) and the relative change.
 */
export function compareTexts(row: CompareValues, normalized: boolean, unit: string | null, metric: string | null): { self: ChangeTexts; total: ChangeTexts } {
  const change = (delta: number) => (normalized ? `${delta > 0 ? "+" : delta < 0 ? "−" : "±"}${Math.abs(100 * delta).toFixed(2)} pts` : formatDelta(delta, unit, metric));
  const relative = (r: number | null) => (row.status === "added" ? "new" : r === null ? "–" : `${r > 0 ? "+" : r < 0 ? "−" : "±"}${Math.abs(100 * r).toFixed(1)}%`);
  return {
    self: { base: formatValue(row.base_self, unit, metric), candidate: formatValue(row.candidate_self, unit, metric), change: change(row.delta), relative: relative(row.relative) },
    total: { base: formatValue(row.base_total, unit, metric), candidate: formatValue(row.candidate_total, unit, metric), change: change(row.total_delta), relative: relative(row.total_relative) },
  };
}
