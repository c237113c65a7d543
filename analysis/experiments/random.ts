/**
 * A seeded pseudo-random generator (mulberry32): the same seed gives the same sequence in the
 * server, the browser and tests, so an experiment's run order and its bootstrap are reproducible.
 * Not for secrets.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform integer in [0, n). */
export function randomIndex(random: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}

/** Fisher–Yates: a new array with the items in a seeded random order. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomIndex(random, i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
