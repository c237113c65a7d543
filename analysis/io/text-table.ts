import { InputBoundError } from "../formats/errors";
import { writtenZeros } from "./bytes";
/**
 * Interned texts kept in typed arrays: each distinct text once, in one byte buffer (Latin-1, a
 * byte a character, or UTF-16 code units for a text with a character past U+00FF), found by an
 * open-addressing table of ints over a hash of its characters. Millions of distinct texts (a
 * callgrind file's function names) then cost their characters and about 30 bytes each, where a
 * Map of JS strings cost about 110 (the string, its Map entry and its slot in an array).
 * Each slot holds the text's hash beside its id, so a probe reads one place in memory: past a few
 * million texts the table outgrows the CPU's caches, and a probe that also read the hash from a
 * column by id took a second cache miss (callgrind's name lookups grew 12× for 5× the input).
 */
export class TextTable {
  private bytes = new Uint8Array(64 * 1024);
  private used = 0;
  /** Per id: where its bytes end (they start where the previous id's end), whether it is UTF-16. */
  private ends = new Int32Array(1024);
  private wide = new Uint8Array(1024);
  private count = 0;
  /** Open addressing, at most half full: slot k is [2k] the text's hash, [2k + 1] its id + 1 (0: empty). */
  private slots = new Int32Array(2 * 2048);
  private sealed = false;

  /** Texts interned so far; ids run from 0 to this, less one. */
  get size(): number {
    return this.count;
  }

  /** The id of `text`, interning it if it is new (ids are given in order of first use). */
  id(text: string): number {
    if (this.sealed) throw new Error("no text can be interned once the table is sealed");
    const hash = textHash(text);
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    let slot = mix(hash) & mask;
    for (let entry = slots[2 * slot + 1]; entry !== 0; entry = slots[2 * slot + 1]) {
      if (slots[2 * slot] === hash && this.holds(entry - 1, text)) return entry - 1;
      slot = (slot + 1) & mask;
    }
    const id = this.add(text);
    slots[2 * slot] = hash;
    slots[2 * slot + 1] = id + 1;
    if (this.count * 4 > slots.length) this.rehash();
    return id;
  }

  /** No text is interned after this: the lookup's memory goes (ids and texts stay). */
  seal(): void {
    this.sealed = true;
    this.slots = new Int32Array(0);
  }

  /** The text of `id`. */
  text(id: number): string {
    if (id < 0 || id >= this.count) throw new RangeError(`no text ${id} in a table of ${this.count}`);
    const start = id > 0 ? this.ends[id - 1] : 0;
    const end = this.ends[id];
    const bytes = this.bytes;
    const wide = this.wide[id] === 1;
    const codes: number[] = [];
    let out = "";
    for (let at = start; at < end; at += wide ? 2 : 1) {
      codes.push(wide ? bytes[at] | (bytes[at + 1] << 8) : bytes[at]);
      // In pieces: fromCharCode's arguments are bounded.
      if (codes.length === 4096) {
        out += String.fromCharCode(...codes);
        codes.length = 0;
      }
    }
    return codes.length > 0 ? out + String.fromCharCode(...codes) : out;
  }

  private holds(id: number, text: string): boolean {
    const start = id > 0 ? this.ends[id - 1] : 0;
    const wide = this.wide[id] === 1;
    if (this.ends[id] - start !== (wide ? 2 : 1) * text.length) return false;
    const bytes = this.bytes;
    if (wide) {
      for (let i = 0; i < text.length; i++) if ((bytes[start + 2 * i] | (bytes[start + 2 * i + 1] << 8)) !== text.charCodeAt(i)) return false;
    } else {
      for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false;
    }
    return true;
  }

  private add(text: string): number {
    let wide = false;
    for (let i = 0; i < text.length && !wide; i++) wide = text.charCodeAt(i) > 0xff;
    const size = wide ? 2 * text.length : text.length;
    // A typed refusal (the import fails as INPUT_BOUND_EXCEEDED, not as an internal error).
    if (this.used + size > MAX_BYTES) throw new InputBoundError("size", MAX_BYTES, `The input's distinct names pass ${MAX_BYTES} bytes, more than an import holds.`);
    if (this.used + size > this.bytes.length) this.bytes = grown(this.bytes, this.used + size, this.used);
    const bytes = this.bytes;
    let at = this.used;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      bytes[at++] = code & 0xff;
      if (wide) bytes[at++] = code >>> 8;
    }
    this.used = at;
    const id = this.count++;
    if (id === this.ends.length) {
      this.ends = grown(this.ends, id + 1, id);
      this.wide = grown(this.wide, id + 1, id);
    }
    this.ends[id] = at;
    this.wide[id] = wide ? 1 : 0;
    return id;
  }

  private rehash(): void {
    const old = this.slots;
    const slots = writtenZeros(new Int32Array(old.length * 2));
    const mask = (slots.length >> 1) - 1;
    for (let k = 0; k < old.length; k += 2) {
      if (old[k + 1] === 0) continue;
      let slot = mix(old[k]) & mask;
      while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      slots[2 * slot] = old[k];
      slots[2 * slot + 1] = old[k + 1];
    }
    this.slots = slots;
  }
}

/** Offsets are int32. */
const MAX_BYTES = 2 ** 31 - 1;

/** FNV-1a over the UTF-16 code units, as an int32. */
export function textHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  // As an int32, as the table keeps it (the empty text's would otherwise be the offset, unsigned).
  return h | 0;
}

/** Spreads a hash's high bits into the low ones the table indexes by. */
function mix(hash: number): number {
  const h = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** Half as large again (not twice: the largest table is tens of megabytes), and at least `needed`. */
function grown<T extends Uint8Array | Int32Array>(array: T, needed: number, used: number): T {
  const capacity = Math.min(MAX_BYTES, Math.max(needed, array.length + (array.length >> 1)));
  const bigger = new (array.constructor as new (length: number) => T)(capacity);
  bigger.set(array.subarray(0, used));
  return bigger;
}
