/**
 * Failures of a critical-path computation. Like analysis/formats/errors.ts, these are plain
 * classes (analysis/ cannot import server/); each carries the catalog code the services map it
 * to, so the mapping is by code, not by guess. Messages name nodes by index, never by observed text.
 */

/** The dependencies form a cycle, so there is no critical path. Mapped to CYCLE_DETECTED. */
export class CycleError extends Error {
  readonly code = "CYCLE_DETECTED" as const;

  constructor(
    /** The nodes of one cycle in dependency order: each depends on the one before, the first on the last. Starts at its lowest index. */
    readonly cycle: readonly number[],
  ) {
    super(`the dependencies form a cycle: ${[...cycle, cycle[0]].map((n) => `node ${n}`).join(" → ")}`);
    this.name = "CycleError";
  }
}

/**
 * An input that cannot be read: an edge naming no node, a duration or start that is not a finite
 * number (durations also ≥ 0). Mapped to INVALID_ARGUMENTS.
 */
export class CriticalPathInputError extends Error {
  readonly code = "INVALID_ARGUMENTS" as const;

  constructor(
    readonly reason: string,
    /** Which node (its duration), edge (its index in the edge arrays) or span (its index in the span list) is wrong. */
    readonly at: { node?: number; edge?: number; span?: number },
  ) {
    const where = Object.entries(at).map(([what, index]) => ` (${what} ${index})`).join("");
    super(`${reason}${where}`);
    this.name = "CriticalPathInputError";
  }
}
