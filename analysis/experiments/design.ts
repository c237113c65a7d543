/**
 * The run order of an experiment: randomized complete blocks. Each block runs every variant once,
 * in an order drawn from the seed; warm-up blocks come first and are discarded from the estimate.
 * Interleaving the variants this way makes a slow drift of the machine (thermal state, a growing
 * background load) hit every variant alike, and pairing within a block cancels it — what a
 * sequential A…A B…B run (hyperfine's) cannot do.
 */
import { seededRandom, shuffled } from "./random";

export interface DesignInput {
  /** Variant names, ≥ 2, distinct. */
  variants: readonly string[];
  /** Measured blocks (trials per variant), ≥ 2. */
  blocks: number;
  /** Warm-up blocks before them. */
  warmups: number;
  seed: number;
}

export interface PlannedTrial {
  /** Position in run order, from 0. */
  index: number;
  /** Measured blocks from 0; warm-up blocks are negative (-warmups … -1). */
  block: number;
  /** Position within its block. */
  order: number;
  variant: string;
  warmup: boolean;
}

export const DESIGN_LIMITS = { variants: 16, blocks: 1000, warmups: 20 };

export class DesignError extends Error {
  readonly code = "INVALID_ARGUMENTS" as const;
  constructor(
    message: string,
    readonly argument: string,
  ) {
    super(message);
    this.name = "DesignError";
  }
}

/** Every trial in run order: the same input and seed give the same order. */
export function randomizedBlocks(input: DesignInput): PlannedTrial[] {
  const { variants, blocks, warmups } = input;
  if (variants.length < 2 || variants.length > DESIGN_LIMITS.variants) throw new DesignError(`an experiment has 2–${DESIGN_LIMITS.variants} variants`, "variants");
  if (new Set(variants).size !== variants.length) throw new DesignError("variant names must differ", "variants");
  if (!Number.isInteger(blocks) || blocks < 2 || blocks > DESIGN_LIMITS.blocks) throw new DesignError(`trials per variant is a whole number from 2 to ${DESIGN_LIMITS.blocks}`, "trials");
  if (!Number.isInteger(warmups) || warmups < 0 || warmups > DESIGN_LIMITS.warmups) throw new DesignError(`warm-ups is a whole number from 0 to ${DESIGN_LIMITS.warmups}`, "warmups");
  const random = seededRandom(input.seed);
  const trials: PlannedTrial[] = [];
  for (let block = -warmups; block < blocks; block++) {
    shuffled(variants, random).forEach((variant, order) => trials.push({ index: trials.length, block, order, variant, warmup: block < 0 }));
  }
  return trials;
}
