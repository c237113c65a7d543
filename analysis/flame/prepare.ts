import { colourIndex, NEUTRAL_BASE } from "./colour";
import { layoutFlame, type FlameLayout } from "./layout";
import { timelineLayout, type TimelineInputCell } from "./timeline";
import { assembleTree, indexNodes, treeStructure, valuesOf, type FlameInputNode, type FlameTree, type TreeStructure } from "./tree";

/** What to lay out: the aggregated tree (left-heavy) or time-ordered cells (time order). */
export type FlameLayoutRequest = { kind: "left-heavy"; nodes: readonly FlameInputNode[]; rootName?: string } | { kind: "time-order"; cells: readonly TimelineInputCell[]; rootName?: string };

export interface PreparedFlame {
  kind: FlameLayoutRequest["kind"];
  tree: FlameTree;
  layout: FlameLayout;
  /** Stable palette index per node (module/kind family, shade by name). */
  colours: Uint8Array;
  /** Time of each node in time order; null for left-heavy. */
  time: { start: Float64Array; end: Float64Array } | null;
}

/**
 * The layout work in a form that is cheap to post to a worker: typed arrays and a few long
 * strings (one string clones as one copy; a hundred thousand objects do not).
 */
export interface LayoutJob {
  kind: FlameLayoutRequest["kind"];
  parent: Int32Array;
  self: Float64Array;
  total: Float64Array;
  /** Names, modules ("" for none) and kinds of nodes 1…n, joined by SEP; node 0 is the root. */
  names: string;
  modules: string;
  kinds: string;
  /** 1 for the explicit "(pruned)" remainder nodes (drawn neutral). */
  pruned: Uint8Array;
  start: Float64Array | null;
  end: Float64Array | null;
}

/** What a worker sends back: numbers only (the strings stay on the main thread). */
export interface LaidOut {
  structure: TreeStructure;
  layout: FlameLayout;
  colours: Uint8Array;
  time: { start: Float64Array; end: Float64Array } | null;
}

const SEP = "\u0001";

/** Palette index per node: by module/kind and name, the same in every view; "(pruned)" is neutral. */
export function stableColourIndices(tree: Pick<FlameTree, "count" | "names" | "modules" | "kinds" | "frameKeys">): Uint8Array {
  const out = new Uint8Array(tree.count);
  out[0] = NEUTRAL_BASE;
  for (let i = 1; i < tree.count; i++) {
    out[i] = tree.frameKeys[i] === "(pruned)" ? NEUTRAL_BASE : colourIndex(tree.names[i], tree.modules[i], tree.kinds[i]);
  }
  return out;
}

/** Main thread, cheap part: index the nodes and pack the job; `assemble` adds the strings back. */
export function layoutJobFor(request: FlameLayoutRequest): { job: LayoutJob; transfer: ArrayBuffer[]; assemble: (out: LaidOut) => PreparedFlame } {
  const items: readonly (FlameInputNode | TimelineInputCell)[] = request.kind === "time-order" ? request.cells : request.nodes;
  const keyed = request.kind === "time-order" ? request.cells.map((c) => ({ node_id: c.cell_id, parent_id: c.parent_id })) : request.nodes;
  const { indexById, parent } = indexNodes(keyed);
  const { self, total } = valuesOf(items);
  const pruned = new Uint8Array(items.length + 1);
  const names: string[] = [];
  const modules: string[] = [];
  const kinds: string[] = [];
  items.forEach((n, i) => {
    names.push(n.name);
    modules.push(n.module ?? "");
    kinds.push(n.kind);
    if (n.frame_key === "(pruned)") pruned[i + 1] = 1;
  });
  let start: Float64Array | null = null;
  let end: Float64Array | null = null;
  if (request.kind === "time-order") {
    start = new Float64Array(items.length + 1);
    end = new Float64Array(items.length + 1);
    request.cells.forEach((c, i) => {
      start![i + 1] = c.start_ns;
      end![i + 1] = c.end_ns;
    });
  }
  const job: LayoutJob = { kind: request.kind, parent, self, total, names: names.join(SEP), modules: modules.join(SEP), kinds: kinds.join(SEP), pruned, start, end };
  const transfer = [parent, self, total, pruned, ...(start && end ? [start, end] : [])].map((a) => a.buffer as ArrayBuffer);
  const ids = request.kind === "time-order" ? request.cells.map((c) => c.cell_id) : request.nodes.map((n) => n.node_id);
  return {
    job,
    transfer,
    assemble: (out) => ({
      kind: request.kind,
      tree: assembleTree(items, ids, indexById, out.structure, request.rootName),
      layout: out.layout,
      colours: out.colours,
      time: out.time,
    }),
  };
}

/** The heavy part, run in the worker: tree structure, layout and colours. */
export function runLayoutJob(job: LayoutJob): LaidOut {
  const split = (s: string) => (s.length || job.parent.length > 1 ? s.split(SEP) : []);
  const names = ["", ...split(job.names)];
  const modules = [null, ...split(job.modules).map((m) => m || null)];
  const kinds = ["program", ...split(job.kinds)];
  const structure = treeStructure(job.parent, job.self, job.total, names);
  const colours = stableColourIndices({ count: structure.count, names, modules, kinds, frameKeys: Array.from(job.pruned, (p) => (p ? "(pruned)" : "")) });
  if (job.kind === "time-order" && job.start && job.end) {
    return { structure, layout: timelineLayout(structure, job.start, job.end), colours, time: { start: job.start, end: job.end } };
  }
  return { structure, layout: layoutFlame(structure), colours, time: null };
}

/** Everything the renderer needs, in one synchronous step (where there is no worker, and in tests). */
export function prepareFlame(request: FlameLayoutRequest): PreparedFlame {
  const { job, assemble } = layoutJobFor(request);
  return assemble(runLayoutJob(job));
}

/** The typed arrays of a layout result, to transfer (not copy) from a worker. */
export function transferablesOf(out: LaidOut): ArrayBuffer[] {
  const s = out.structure;
  const arrays = [s.parent, s.depth, s.self, s.total, s.childStart, s.childIndex, out.layout.x, out.layout.w, ...out.layout.byDepth, out.colours];
  if (out.time) arrays.push(out.time.start, out.time.end);
  return arrays.map((a) => a.buffer as ArrayBuffer);
}
