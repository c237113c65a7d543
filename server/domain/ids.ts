import { randomBytes } from "node:crypto";

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix = "ws" | "run" | "reg" | "gen" | "cmt" | "op" | "plan" | "gcm" | "inv" | "cell" | "hyp" | "fnd" | "wf" | "exp" | "wfr";

let lastTime = -1;
let lastRandom: number[] = [];

function freshRandom(): number[] {
  return Array.from(randomBytes(16), (byte) => byte % 32);
}

/** Adds one to a base-32 digit string, so ids made in the same millisecond still sort by creation. */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i]++;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

/**
 * Time-sortable ids: `<prefix>_` + 10 chars of milliseconds + 16 random chars (Crockford base32),
 * monotonic within a process.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  let time = "";
  let t = lastTime;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return `${prefix}_${time}${lastRandom.map((d) => CROCKFORD[d]).join("")}`;
}

export function nowIso(now = Date.now()): string {
  return new Date(now).toISOString();
}
