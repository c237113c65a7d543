/**
 * A stable 64-bit key as 16 hex chars: two FNV-1a 32-bit hashes with different offsets over the
 * UTF-8 bytes. Pure (no crypto module), identical in server, worker and browser.
 */
const encoder = new TextEncoder();

export function stableKey(text: string): string {
  const bytes = encoder.encode(text);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 0x01000193);
    b = Math.imul(b ^ bytes[i], 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
