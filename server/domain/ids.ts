import { randomBytes } from "node:crypto";

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix = "ws" | "run" | "reg" | "gen" | "cmt" | "op" | "plan" | "gcm";

/** Time-sortable ids: `<prefix>_` + 10 chars of milliseconds + 16 random chars (Crockford base32). */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let random = "";
  for (const byte of bytes) random += CROCKFORD[byte % 32];
  return `${prefix}_${time}${random}`;
}

export function nowIso(now = Date.now()): string {
  return new Date(now).toISOString();
}
