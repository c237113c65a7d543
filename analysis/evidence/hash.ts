/**
 * A stable 64-bit key as 16 hex chars: two FNV-1a 32-bit hashes with different offsets over the
 * UTF-8 bytes. Pure (no crypto module), identical in server, worker and browser.
 */
const encoder = new TextEncoder();
const words = new Int32Array(2);

export function stableKey(text: string): string {
  stableKeyWords(text, words);
  return stableKeyText(words[0], words[1]);
}

/**
 * stableKey's two 32-bit hashes, into out[0] and out[1] (as int32): equal words are equal keys,
 * so a table of many keys can hold ints instead of their strings.
 */
export function stableKeyWords(text: string, out: Int32Array): void {
  const bytes = encoder.encode(text);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 0x01000193);
    b = Math.imul(b ^ bytes[i], 0x01000193) ^ (b >>> 15);
  }
  out[0] = a;
  out[1] = b;
}

/** The key stableKey writes for these words. */
export function stableKeyText(a: number, b: number): string {
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
