/**
 * Time order (a flame chart) as one linear pass over a thread's samples in time order: the open
 * cells are the call path of the sample before; a sample closes the cells below the path it
 * shares with it and opens the rest of its own, so consecutive samples that share a stack prefix
 * merge into one cell per frame of that prefix. Work grows with the samples and how often their
 * stacks change, never with samples × depth: a cell's value is the running sum of values at its
 * close minus that at its open.
 *
 * Each sample lasts until the next; the last one for the mean interval of the samples. Pruning
 * as cells close: a cell shorter than `minWidth` is left out with everything under it (counted
 * once, as one cell, under a kept parent), then the `budget` longest cells are kept; ties keep
 * the shallower, then the earlier cell, so the kept set holds every kept cell's parent.
 */

/** The call tree the samples' stacks are nodes of, with nodes merged by call path (frame by frame). */
export interface CallPathTree {
  /** Parent node per node; -1 at a root. */
  parent: Int32Array;
  /** 0 at a root. */
  depth: Int32Array;
  /** Index of the node's frame in the caller's frame list. */
  frame: Int32Array;
  maxDepth: number;
}

export interface TimeOrderOptions {
  /** Cells shorter than this (ns) are left out, with everything under them. */
  minWidth: number;
  /** At most this many cells are kept (the longest). */
  budget: number;
}

/** A kept cell; `parent` indexes the same list (-1 at depth 0). */
export interface TimeOrderCell {
  node: number;
  frame: number;
  depth: number;
  parent: number;
  start: number;
  end: number;
  total: number;
  self: number;
}

export interface TimeOrder {
  /** By depth, then start (the order of the rows `flame_timeline` gives). */
  cells: TimeOrderCell[];
  /** Cells left out: narrower than minWidth under a kept or a dropped-for-budget parent (each counted with all under it as one), or past the budget. */
  droppedCells: number;
  /** The summed value of every sample merged (drawn or not). */
  windowTotal: number;
  samples: number;
  /** Samples a transform dropped (pushed as GAP): each ends the open cells, and is time no cell covers. */
  gaps: number;
}

/** Growable columns of the wide (long enough) cells, in the order they close. */
class WideCells {
  length = 0;
  node = new Int32Array(1024);
  depth = new Int32Array(1024);
  parent = new Int32Array(1024);
  /** Links the wide children that wait for their parent to close (and get its index). */
  nextWaiting = new Int32Array(1024);
  start = new Float64Array(1024);
  end = new Float64Array(1024);
  total = new Float64Array(1024);
  self = new Float64Array(1024);

  add(node: number, depth: number, start: number, end: number, total: number, self: number): number {
    if (this.length === this.node.length) this.grow();
    const i = this.length++;
    this.node[i] = node;
    this.depth[i] = depth;
    this.parent[i] = -1;
    this.nextWaiting[i] = -1;
    this.start[i] = start;
    this.end[i] = end;
    this.total[i] = total;
    this.self[i] = self;
    return i;
  }

  private grow(): void {
    const size = this.node.length * 2;
    const int = (a: Int32Array) => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    const float = (a: Float64Array) => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    this.node = int(this.node);
    this.depth = int(this.depth);
    this.parent = int(this.parent);
    this.nextWaiting = int(this.nextWaiting);
    this.start = float(this.start);
    this.end = float(this.end);
    this.total = float(this.total);
    this.self = float(this.self);
  }
}

/** The node of a sample a transform dropped: pushed, it ends the open cells (time spent elsewhere). */
export const GAP = -2;

export class TimeOrderMerge {
  // The open cells, one per depth of the current call path.
  private open = 0;
  private readonly openNode: Int32Array;
  private readonly openStart: Float64Array;
  private readonly openSum: Float64Array;
  private readonly openSelf: Float64Array;
  private readonly openNarrow: Float64Array;
  private readonly openWaiting: Int32Array;
  private readonly path: Int32Array;
  private readonly wide = new WideCells();
  /** Running sum of the values merged so far. */
  private sum = 0;
  private narrowDropped = 0;
  private count = 0;
  /** Gaps merged (samples a transform dropped): they close cells and count as ticks, not as samples. */
  private gaps = 0;
  private firstTime = 0;
  private lastTime = 0;

  constructor(
    private readonly tree: CallPathTree,
    private readonly options: TimeOrderOptions,
  ) {
    const levels = tree.maxDepth + 1;
    this.openNode = new Int32Array(levels);
    this.openStart = new Float64Array(levels);
    this.openSum = new Float64Array(levels);
    this.openSelf = new Float64Array(levels);
    this.openNarrow = new Float64Array(levels);
    this.openWaiting = new Int32Array(levels);
    this.path = new Int32Array(levels);
  }

  /**
   * Merges the next sample; false (and nothing merged) when it is earlier than the one before. A
   * node of GAP (a sample a transform dropped) ends every open cell, as time spent elsewhere.
   */
  push(node: number, time: number, value: number): boolean {
    const { parent, depth } = this.tree;
    if (this.count > 0 && time < this.lastTime) return false;
    if (node === GAP) {
      for (let d = this.open - 1; d >= 0; d--) this.close(d, time);
      this.open = 0;
      if (this.count === 0) this.firstTime = time;
      this.lastTime = time;
      this.count++;
      this.gaps++;
      return true;
    }
    // The deepest node of this sample's path that is open: the prefix it shares with the last.
    let v = node;
    while (v >= 0 && depth[v] >= this.open) v = parent[v];
    while (v >= 0 && this.openNode[depth[v]] !== v) v = parent[v];
    const shared = v < 0 ? 0 : depth[v] + 1;
    for (let d = this.open - 1; d >= shared; d--) this.close(d, time);
    const leaf = depth[node];
    for (let at = node; at >= 0 && depth[at] >= shared; at = parent[at]) this.path[depth[at]] = at;
    for (let d = shared; d <= leaf; d++) {
      this.openNode[d] = this.path[d];
      this.openStart[d] = time;
      this.openSum[d] = this.sum;
      this.openSelf[d] = 0;
      this.openNarrow[d] = 0;
      this.openWaiting[d] = -1;
    }
    this.open = leaf + 1;
    this.sum += value;
    this.openSelf[leaf] += value;
    if (this.count === 0) this.firstTime = time;
    this.lastTime = time;
    this.count++;
    return true;
  }

  /** Closes the open cells after the last sample and keeps the `budget` longest. */
  finish(): TimeOrder {
    const { wide } = this;
    if (this.count > 0) {
      const lastLasts = this.count > 1 ? (this.lastTime - this.firstTime) / (this.count - 1) : 1;
      for (let d = this.open - 1; d >= 0; d--) this.close(d, this.lastTime + lastLasts);
      this.open = 0;
    }
    let kept: Int32Array = Int32Array.from({ length: wide.length }, (_, i) => i);
    if (wide.length > this.options.budget) {
      kept.sort((a, b) => wide.end[b] - wide.start[b] - (wide.end[a] - wide.start[a]) || wide.depth[a] - wide.depth[b] || wide.start[a] - wide.start[b] || a - b);
      kept = kept.slice(0, this.options.budget);
    }
    // By depth, then start; ties (cells of no length) in the order they were merged.
    kept.sort((a, b) => wide.depth[a] - wide.depth[b] || wide.start[a] - wide.start[b] || a - b);
    const position = new Int32Array(wide.length).fill(-1);
    kept.forEach((c, k) => (position[c] = k));
    const cells: TimeOrderCell[] = Array.from(kept, (c) => ({
      node: wide.node[c],
      frame: this.tree.frame[wide.node[c]],
      depth: wide.depth[c],
      parent: wide.parent[c] < 0 ? -1 : position[wide.parent[c]],
      start: wide.start[c],
      end: wide.end[c],
      total: wide.total[c],
      self: wide.self[c],
    }));
    return { cells, droppedCells: this.narrowDropped + wide.length - kept.length, windowTotal: this.sum, samples: this.count - this.gaps, gaps: this.gaps };
  }

  private close(d: number, end: number): void {
    const start = this.openStart[d];
    if (end - start >= this.options.minWidth) {
      const i = this.wide.add(this.openNode[d], d, start, end, this.sum - this.openSum[d], this.openSelf[d]);
      for (let child = this.openWaiting[d]; child >= 0; child = this.wide.nextWaiting[child]) this.wide.parent[child] = i;
      if (d > 0) {
        this.wide.nextWaiting[i] = this.openWaiting[d - 1];
        this.openWaiting[d - 1] = i;
      }
      this.narrowDropped += this.openNarrow[d];
    } else if (d > 0) {
      // A child never outlasts its parent: narrow cells have only narrow cells under them.
      this.openNarrow[d - 1]++;
    } else {
      this.narrowDropped++;
    }
  }
}

/**
 * Builds the call-path tree from the stack rows of one or more generations (any order) and their
 * frames: within a generation the stack tree already merges call paths; across generations nodes
 * with the same parent path and frame_key become one.
 */
export class CallPathTreeBuilder {
  private readonly frameIndex = new Map<string, number>();
  /** Per generation: the global frame index of each frame_id. */
  private readonly framesOf: Int32Array[] = [];
  private rows = { g: [] as number[], stack: [] as number[], parent: [] as number[], frame: [] as number[], depth: [] as number[] };
  private nodeOf: Int32Array[] = [];

  /** The frame_keys in index order: CallPathTree.frame values index this list. */
  readonly frameKeys: string[] = [];

  addFrame(g: number, frameId: number, frameKey: string): void {
    let index = this.frameIndex.get(frameKey);
    if (index === undefined) {
      index = this.frameKeys.length;
      this.frameIndex.set(frameKey, index);
      this.frameKeys.push(frameKey);
    }
    let map = this.framesOf[g];
    if (!map || map.length <= frameId) {
      const grown = new Int32Array(Math.max(16, frameId + 1, 2 * (map?.length ?? 0))).fill(-1);
      if (map) grown.set(map);
      this.framesOf[g] = map = grown;
    }
    map[frameId] = index;
  }

  addStack(g: number, stackId: number, parentStackId: number | null, frameId: number, depth: number): void {
    const { rows } = this;
    rows.g.push(g);
    rows.stack.push(stackId);
    rows.parent.push(parentStackId ?? -1);
    rows.frame.push(frameId);
    rows.depth.push(depth);
  }

  /** The tree, and a function from (generation, stack_id) to its node (-1 for an unknown stack). */
  build(): { tree: CallPathTree; node: (g: number, stackId: number) => number } {
    const { rows } = this;
    const n = rows.g.length;
    let maxDepth = 0;
    for (let i = 0; i < n; i++) if (rows.depth[i] > maxDepth) maxDepth = rows.depth[i];
    const single = rows.g.every((g) => g === 0);
    if (single) {
      // One generation: its stack ids are the nodes.
      let size = 0;
      for (let i = 0; i < n; i++) size = Math.max(size, rows.stack[i] + 1);
      const parent = new Int32Array(size).fill(-1);
      const depth = new Int32Array(size);
      const frame = new Int32Array(size).fill(-1);
      const known = new Uint8Array(size);
      for (let i = 0; i < n; i++) {
        const s = rows.stack[i];
        parent[s] = rows.parent[i];
        depth[s] = rows.depth[i];
        frame[s] = this.framesOf[0]?.[rows.frame[i]] ?? -1;
        known[s] = 1;
      }
      return { tree: { parent, depth, frame, maxDepth }, node: (_g, stackId) => (stackId >= 0 && stackId < size && known[stackId] ? stackId : -1) };
    }
    // Several generations: parents first (by depth), each node keyed by its parent node and frame.
    const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => rows.depth[a] - rows.depth[b] || a - b);
    let generations = 0;
    for (let i = 0; i < n; i++) if (rows.g[i] + 1 > generations) generations = rows.g[i] + 1;
    const sizes = new Array<number>(generations).fill(0);
    for (let i = 0; i < n; i++) sizes[rows.g[i]] = Math.max(sizes[rows.g[i]], rows.stack[i] + 1);
    this.nodeOf = sizes.map((size) => new Int32Array(size).fill(-1));
    const byKey = new Map<number, number>();
    const parent: number[] = [];
    const depth: number[] = [];
    const frame: number[] = [];
    const frames = this.frameKeys.length + 1;
    for (const i of order) {
      const g = rows.g[i];
      const up = rows.parent[i] < 0 ? -1 : this.nodeOf[g][rows.parent[i]];
      const f = this.framesOf[g]?.[rows.frame[i]] ?? -1;
      const key = (up + 1) * frames + (f + 1);
      let node = byKey.get(key);
      if (node === undefined) {
        node = parent.length;
        byKey.set(key, node);
        parent.push(up);
        depth.push(rows.depth[i]);
        frame.push(f);
      }
      this.nodeOf[g][rows.stack[i]] = node;
    }
    const nodeOf = this.nodeOf;
    return {
      tree: { parent: Int32Array.from(parent), depth: Int32Array.from(depth), frame: Int32Array.from(frame), maxDepth },
      node: (g, stackId) => (g >= 0 && g < nodeOf.length && stackId >= 0 && stackId < nodeOf[g].length ? nodeOf[g][stackId] : -1),
    };
  }
}
