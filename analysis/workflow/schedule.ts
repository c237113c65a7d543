/**
 * Event-driven scheduling of a DAG of calls: a node starts the moment its last dependency has
 * finished (not at a layer barrier), within a global concurrency limit and a limit per group
 * (a tool). Among ready nodes, the one with the longest remaining path goes first (its
 * "bottom level"), so a bounded run keeps the critical path moving.
 *
 * Partial failure: when a node fails, its dependants (transitively) are skipped, naming it; with
 * `onFailure: "continue"` everything else still runs, with "cancel" the running nodes are aborted
 * and nothing new starts. A cancel of the whole run (`signal`) aborts the running nodes and skips
 * the rest. Pure: no Node imports (timers and AbortController are the platform's).
 */

export interface ScheduleNode {
  /** Indexes of the nodes this one waits for. */
  deps: readonly number[];
  /** Its concurrency group (the tool's name). */
  group: string;
  /** Its expected duration, for the priority of ready nodes (any unit; 0 when unknown). */
  weight: number;
}

export type NodeState = "succeeded" | "failed" | "skipped" | "cancelled";

export interface NodeOutcome {
  state: NodeState;
  /** What `run` threw (failed), or the abort reason (cancelled). */
  error?: unknown;
  /** For skipped nodes: the failed node that stopped them (null when the run was cancelled). */
  blockedBy?: number | null;
  startMs?: number;
  endMs?: number;
}

export interface ScheduleOptions {
  concurrency: number;
  groupLimit: (group: string) => number;
  onFailure: "continue" | "cancel";
  signal?: AbortSignal;
  /** Runs node `index`; rejects when it fails. `signal` aborts on a cancel (of the run, or after a failure with onFailure "cancel"). */
  run: (index: number, signal: AbortSignal) => Promise<void>;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  onSettled?: (index: number, outcome: NodeOutcome) => void;
}

export function scheduleByEvents(nodes: readonly ScheduleNode[], options: ScheduleOptions): Promise<NodeOutcome[]> {
  const n = nodes.length;
  const now = options.now ?? (() => performance.now());
  const waiting = new Int32Array(n);
  const dependants: number[][] = nodes.map(() => []);
  nodes.forEach((node, i) => {
    for (const d of node.deps) {
      waiting[i]++;
      dependants[d].push(i);
    }
  });
  const priority = bottomLevels(nodes, dependants);
  const outcomes: (NodeOutcome | undefined)[] = new Array(n);
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  const running = new Map<number, AbortController>();
  const inGroup = new Map<string, number>();
  let settled = 0;
  let stopping: unknown = undefined;

  return new Promise((resolve) => {
    const settle = (i: number, outcome: NodeOutcome) => {
      if (outcomes[i]) return;
      outcomes[i] = outcome;
      settled++;
      options.onSettled?.(i, outcome);
    };
    const skipDependants = (from: number, blockedBy: number | null) => {
      const stack = [...dependants[from]];
      while (stack.length) {
        const d = stack.pop()!;
        if (outcomes[d] || running.has(d)) continue;
        settle(d, { state: "skipped", blockedBy });
        stack.push(...dependants[d]);
      }
    };
    const finishIfDone = () => {
      if (running.size > 0) return;
      if (stopping !== undefined) for (let i = 0; i < n; i++) if (!outcomes[i]) settle(i, { state: "skipped", blockedBy: null });
      if (settled === n) {
        options.signal?.removeEventListener("abort", onAbort);
        resolve(outcomes as NodeOutcome[]);
      }
    };
    const stop = (reason: unknown) => {
      if (stopping !== undefined) return;
      stopping = reason;
      ready.length = 0;
      for (const controller of running.values()) controller.abort(reason);
    };
    const onAbort = () => {
      stop(options.signal!.reason);
      finishIfDone();
    };
    const pump = () => {
      if (stopping !== undefined) return finishIfDone();
      if (ready.length > 1) ready.sort((a, b) => priority[b] - priority[a] || a - b);
      for (let k = 0; k < ready.length && running.size < options.concurrency; ) {
        const i = ready[k];
        const group = nodes[i].group;
        const used = inGroup.get(group) ?? 0;
        if (used >= options.groupLimit(group)) {
          k++;
          continue;
        }
        ready.splice(k, 1);
        inGroup.set(group, used + 1);
        start(i);
      }
      finishIfDone();
    };
    const start = (i: number) => {
      const controller = new AbortController();
      running.set(i, controller);
      const startMs = now();
      let outcome: NodeOutcome;
      const done = () => {
        running.delete(i);
        inGroup.set(nodes[i].group, inGroup.get(nodes[i].group)! - 1);
        settle(i, outcome);
        if (outcome.state === "succeeded") {
          for (const d of dependants[i]) if (--waiting[d] === 0 && !outcomes[d]) ready.push(d);
        } else if (outcome.state === "failed") {
          skipDependants(i, i);
          if (options.onFailure === "cancel") stop(outcome.error);
        } else skipDependants(i, null);
        pump();
      };
      let call: Promise<void>;
      try {
        call = options.run(i, controller.signal);
      } catch (error) {
        call = Promise.reject(error);
      }
      call.then(
        () => {
          outcome = controller.signal.aborted ? { state: "cancelled", error: controller.signal.reason, startMs, endMs: now() } : { state: "succeeded", startMs, endMs: now() };
          done();
        },
        (error: unknown) => {
          outcome = controller.signal.aborted ? { state: "cancelled", error: controller.signal.reason, startMs, endMs: now() } : { state: "failed", error, startMs, endMs: now() };
          done();
        },
      );
    };
    if (options.signal?.aborted) stop(options.signal.reason);
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    pump();
  });
}

/** Each node's longest weighted path to a sink, itself included (nodes given in any order; the DAG is acyclic). */
function bottomLevels(nodes: readonly ScheduleNode[], dependants: readonly number[][]): Float64Array {
  const n = nodes.length;
  const out = new Float64Array(n);
  const remaining = new Int32Array(n);
  for (let i = 0; i < n; i++) remaining[i] = dependants[i].length;
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (remaining[i] === 0) queue.push(i);
  for (let h = 0; h < queue.length; h++) {
    const i = queue[h];
    let best = 0;
    for (const d of dependants[i]) best = Math.max(best, out[d]);
    out[i] = best + Math.max(0, nodes[i].weight);
    for (const p of nodes[i].deps) if (--remaining[p] === 0) queue.push(p);
  }
  return out;
}
