/**
 * Folded ("collapsed") stacks from stackcollapse-*.pl / flamegraph.pl: `root;…;leaf COUNT` per line.
 * Each line → one stack and one aggregate `samples` sample (no time, no track). Frames: perf's
 * `_[k]`/`_[j]` suffixes → kind kernel/js, dtrace's `module`func` → module, py-spy's `f (a.py:3)` → python.
 * difffolded.pl's `stack BEFORE AFTER` (decided by the first valid line) → `samples` = AFTER, which
 * flamegraph.pl draws, plus `samples_base` = BEFORE, and metadata differential = "true".
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { headText as decodeHead, lineBatches } from "../io/text";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "folded";
const SPACE = 0x20;
const TAB = 0x09;
const SEMICOLON = 0x3b;
const NO_STACK = -1;
const FIRST_INVALID_LINES_SHOWN = 5;

const isBlank = (byte: number) => byte === SPACE || byte === TAB || byte === 0x0d;

/** A non-negative integer written only with digits, or -1 ("not a count"). */
function parseCount(bytes: Uint8Array, start: number, end: number): number {
  if (end <= start || end - start > 15) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = bytes[i] - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Start of the whitespace-separated token that ends at `end` (not before `floor`). */
function tokenStart(bytes: Uint8Array, floor: number, end: number): number {
  let at = end;
  while (at > floor && !isBlank(bytes[at - 1])) at--;
  return at;
}

function skipBlanksBack(bytes: Uint8Array, floor: number, end: number): number {
  let at = end;
  while (at > floor && isBlank(bytes[at - 1])) at--;
  return at;
}

// stackcollapse-perf.pl --all marks frames with a suffix; flamegraph.pl colours by it.
const ANNOTATION_KINDS: Record<string, FrameKind> = { k: "kernel", j: "js", i: "other", w: "other" };
const PY_SPY_FRAME = /^(.*) \(([^()]*\.py)(?::(\d+))?\)$/;

/** What a frame's text says: perf's `_[k]` suffixes, dtrace's module`function, py-spy's `func (file.py:12)`. */
function describeFoldedFrame(text: string): FrameInput {
  let name = text;
  let kind: FrameKind = "other";
  let module: string | null = null;
  let file: string | null = null;
  let line: number | null = null;
  const n = name.length;
  if (n > 4 && name.charCodeAt(n - 1) === 0x5d && name.charCodeAt(n - 3) === 0x5b && name.charCodeAt(n - 4) === 0x5f) {
    const annotated = ANNOTATION_KINDS[name[n - 2]];
    if (annotated) {
      kind = annotated;
      name = name.slice(0, n - 4);
    }
  }
  const tick = name.indexOf("`");
  if (tick > 0 && tick < name.length - 1) {
    module = name.slice(0, tick);
    name = name.slice(tick + 1);
  } else if (name.endsWith(")")) {
    const py = PY_SPY_FRAME.exec(name);
    if (py) {
      name = py[1];
      file = py[2];
      line = py[3] ? Number(py[3]) : null;
      kind = "python";
    }
  }
  return { name, kind, module, file, line };
}

/** Whether `a`'s bytes at `at` equal `b`'s at `start`, over `length` bytes; four bytes a step. */
export function sameBytes(a: DataView, at: number, b: DataView, start: number, length: number): boolean {
  let i = 0;
  for (; i + 4 <= length; i += 4) if (a.getInt32(at + i) !== b.getInt32(start + i)) return false;
  for (; i < length; i++) if (a.getUint8(at + i) !== b.getUint8(start + i)) return false;
  return true;
}

/**
 * Where the frame starting at `at` ends: the next `;` before `end`, or `end`. Four bytes a step:
 * XOR with `;;;;` turns a `;` into a zero byte, which the classic has-zero-byte test finds.
 */
function frameEnd(view: DataView, at: number, end: number): number {
  let stop = at;
  for (; stop + 4 <= end; stop += 4) {
    const word = view.getInt32(stop, true) ^ 0x3b3b3b3b;
    if (((word - 0x01010101) & ~word & 0x80808080) !== 0) break;
  }
  while (stop < end && view.getUint8(stop) !== SEMICOLON) stop++;
  return stop;
}

/**
 * The hash of the frame text `[start, end)` of `view`: FxHash's step (rotate, xor, multiply) over
 * four bytes at a time, then murmur3's finalizer, as the frame table indexes by the low bits.
 * With frameEnd, parse of the 220 MB benchmark file took ~0.45 s less CPU than FNV-1a byte by byte.
 */
export function foldedFrameHash(view: DataView, start: number, end: number): number {
  let hash = 0;
  let at = start;
  for (; at + 4 <= end; at += 4) hash = Math.imul(((hash << 5) | (hash >>> 27)) ^ view.getInt32(at, true), 0x9e3779b9);
  for (; at < end; at++) hash = Math.imul(((hash << 5) | (hash >>> 27)) ^ view.getUint8(at), 0x9e3779b9);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

/**
 * Builds stacks line by line, touching each byte about once. Files are usually sorted, so the
 * frames shared with the previous line are reused after one byte comparison; the others are found
 * by the hash of their bytes among the distinct frames, and their node under the parent by the
 * builder, so a frame is decoded only when new.
 */
class FoldedStacks {
  private readonly decoder = new TextDecoder("utf-8", { fatal: false });
  /**
   * Distinct frame texts: builder frame ids, hashes, and their bytes in one arena (to confirm hash
   * hits), found through an open-addressing table of frame index + 1 by hash.
   */
  private readonly frameIds: number[] = [];
  private readonly frameHashes: number[] = [];
  private readonly frameLengths: number[] = [];
  private readonly frameStarts: number[] = [];
  private frameSlots = new Int32Array(1024);
  private arena = new Uint8Array(1 << 16);
  /**
   * DataViews of the arena and of the current batch compare four bytes a step (0.3-0.7 s less CPU
   * than byte by byte for the 11 M frame texts confirmed in the 220 MB benchmark file).
   */
  private arenaView = new DataView(this.arena.buffer);
  private arenaLength = 0;
  private bytes: Uint8Array = new Uint8Array(0);
  private view: DataView = new DataView(this.bytes.buffer);
  /** The previous line of the batch, and per `;`-separated segment: where it ends (from the line start), the node after it, frames so far. */
  private previousStart = 0;
  private previousLength = 0;
  private readonly ends: number[] = [];
  private readonly nodes: number[] = [];
  private readonly framesSoFar: number[] = [];
  private segments = 0;
  truncatedStacks = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  /** Lines come from one batch at a time, so no line is compared with bytes its producer may since have reused. */
  startBatch(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.segments = 0;
    this.previousLength = 0;
  }

  /** The leaf stack node of the batch's `bytes[start, end)`, or NO_STACK when it names no frame. Empty segments (`a;;b`) are skipped. */
  leaf(start: number, end: number): number {
    const bytes = this.bytes;
    const length = end - start;
    const shift = this.previousStart - start;
    const shared = Math.min(length, this.previousLength);
    let same = 0;
    while (same < shared && bytes[start + same] === bytes[start + same + shift]) same++;
    // A previous segment is reusable when its bytes and the `;` after it lie in the common prefix.
    let segment = 0;
    while (segment < this.segments && this.ends[segment] < same) segment++;
    let node = segment > 0 ? this.nodes[segment - 1] : NO_STACK;
    let frames = segment > 0 ? this.framesSoFar[segment - 1] : 0;
    let at = start + (segment > 0 ? this.ends[segment - 1] + 1 : 0);
    while (at <= end) {
      const stop = frameEnd(this.view, at, end);
      if (stop > at) {
        if (frames < this.maxDepth) {
          const frameId = this.frameIds[this.frame(at, stop, foldedFrameHash(this.view, at, stop))];
          node = this.builder.stack(node === NO_STACK ? null : node, frameId);
        }
        frames++;
      }
      this.ends[segment] = stop - start;
      this.nodes[segment] = node;
      this.framesSoFar[segment] = frames;
      segment++;
      at = stop + 1;
    }
    if (frames > this.maxDepth) this.truncatedStacks++;
    this.segments = segment;
    this.previousStart = start;
    this.previousLength = length;
    return node;
  }

  /** The index of the frame text `bytes[start, end)` among the distinct ones, added when new. */
  private frame(start: number, end: number, hash: number): number {
    const slots = this.frameSlots;
    const mask = slots.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot];
      if (entry === 0) break;
      const index = entry - 1;
      if (this.frameHashes[index] === hash && this.frameLengths[index] === length && sameBytes(this.arenaView, this.frameStarts[index], this.view, start, length)) return index;
    }
    const own = this.bytes.slice(start, end);
    const index = this.frameIds.length;
    this.frameIds.push(this.builder.frame(describeFoldedFrame(this.decoder.decode(own))));
    this.frameHashes.push(hash);
    this.frameLengths.push(length);
    this.frameStarts.push(this.arenaLength);
    if (this.arenaLength + length > this.arena.length) {
      const grown = new Uint8Array(Math.max(this.arena.length * 2, this.arenaLength + length));
      grown.set(this.arena.subarray(0, this.arenaLength));
      this.arena = grown;
      this.arenaView = new DataView(grown.buffer);
    }
    this.arena.set(own, this.arenaLength);
    this.arenaLength += length;
    if ((index + 1) * 2 > slots.length) this.growFrameSlots();
    else this.placeFrame(slots, index);
    return index;
  }

  private placeFrame(slots: Int32Array, index: number): void {
    const mask = slots.length - 1;
    let slot = this.frameHashes[index] & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = index + 1;
  }

  private growFrameSlots(): void {
    const slots = (this.frameSlots = new Int32Array(this.frameSlots.length * 2));
    for (let index = 0; index < this.frameIds.length; index++) this.placeFrame(slots, index);
  }
}

type LineVerdict = "no count" | "a negative count" | "a non-integer count" | "a count too large" | "an empty stack" | "one count in a differential file";

/** Why the last token is not a count. */
function countProblem(bytes: Uint8Array, start: number, end: number): LineVerdict {
  const token = new TextDecoder().decode(bytes.subarray(start, end));
  if (/^\d+$/.test(token)) return "a count too large";
  if (/^-\d/.test(token)) return "a negative count";
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+(?=e))(e[+-]?\d+)?$/i.test(token)) return "a non-integer count";
  return "no count";
}

export const foldedImporter: FormatImporter = {
  id: "folded",
  title: "Folded stacks (flamegraph.pl / stackcollapse)",
  extensions: ["folded", "collapsed", "stacks", "txt"],
  version: "1",

  sniff(head, headText, fileName) {
    try {
      const text = head[0] === 0xff || head[0] === 0xfe ? decodeHead(head) : headText;
      if (/^\s*[{[<]/.test(text)) return 0;
      const lines = text.split("\n");
      if (head.length >= 64 * 1024) lines.pop();
      let valid = 0;
      let withSeparator = 0;
      let checked = 0;
      for (const raw of lines) {
        const line = raw.replace(/\r$/, "");
        if (line.trim() === "") continue;
        if (++checked > 50) break;
        if (/^\S.*\s\d+$/.test(line)) valid++;
        if (line.includes(";")) withSeparator++;
      }
      const named = /\.(folded|collapsed)$/i.test(fileName ?? "");
      if (checked === 0) return 0;
      if (valid < checked * 0.9) return named && valid > 0 ? 0.3 : 0;
      if (withSeparator === 0) return named ? 0.6 : 0.1;
      return named ? 0.95 : 0.8;
    } catch {
      return 0;
    }
  },

  async parse({ source, builder, limits }: ImportContext) {
    const stacks = new FoldedStacks(builder, limits.maxDepth);
    let samples = -1;
    let samplesBase = -1;
    let differential: boolean | null = null;
    let lineNo = 0;
    let validLines = 0;
    let invalidLines = 0;
    let lineOffset = 0;
    const firstInvalid: { line: number; offset: number; why: LineVerdict }[] = [];
    const invalid = (why: LineVerdict) => {
      invalidLines++;
      if (firstInvalid.length < FIRST_INVALID_LINES_SHOWN) firstInvalid.push({ line: lineNo, offset: lineOffset, why });
    };

    // Lines are parsed as bytes, not decoded: string scanning costs about twice a byte's cost.
    for await (const batch of lineBatches(source.chunks(), limits.maxLineLength)) {
      const bytes = batch.bytes;
      stacks.startBatch(bytes);
      while (batch.nextLine()) {
        const start = batch.start;
        lineNo = batch.line;
        lineOffset = batch.lineOffset;
        const end = skipBlanksBack(bytes, start, batch.end);
        if (end === start) continue;
        const countStart = tokenStart(bytes, start, end);
        const count = parseCount(bytes, countStart, end);
        if (count < 0) {
          invalid(countProblem(bytes, countStart, end));
          continue;
        }
        let stackEnd = skipBlanksBack(bytes, start, countStart);
        let before = -1;
        if (differential !== false && stackEnd > start) {
          const beforeStart = tokenStart(bytes, start, stackEnd);
          const value = parseCount(bytes, beforeStart, stackEnd);
          const rest = skipBlanksBack(bytes, start, beforeStart);
          if (value >= 0 && rest > start) {
            before = value;
            stackEnd = rest;
          }
        }
        if (stackEnd === start) {
          invalid("an empty stack");
          continue;
        }
        if (differential === true && before < 0) {
          invalid("one count in a differential file");
          continue;
        }
        const leaf = stacks.leaf(start, stackEnd);
        if (leaf === NO_STACK) {
          invalid("an empty stack");
          continue;
        }
        // The first valid line decides: two counts make the whole file differential (difffolded.pl).
        if (differential === null) differential = before >= 0;
        if (samples < 0) {
          samples = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
          if (differential) samplesBase = builder.metric({ name: "samples_base", unit: "count", kind: "sampled" });
        }
        builder.sample(leaf, null, null, samples, count);
        if (differential) builder.sample(leaf, null, null, samplesBase, before);
        validLines++;
        if ((validLines & 0x3fff) === 0) await builder.checkpoint();
      }
    }

    if (validLines === 0) {
      if (invalidLines === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0, line: 1 });
      const first = firstInvalid[0];
      throw new EvidenceParseError(FORMAT, `no valid folded stack line (line ${first.line} has ${first.why})`, { line: first.line, offset: first.offset });
    }
    if (invalidLines > 0) {
      const shown = firstInvalid.map((l) => `line ${l.line} (${l.why})`).join(", ");
      const message = `${invalidLines} line(s) were not folded stacks and were skipped: ${shown}${invalidLines > firstInvalid.length ? ", …" : ""}.`;
      // One limitation whose count is the number of skipped lines.
      for (let i = 0; i < invalidLines; i++) builder.limit("FOLDED_INVALID_LINES", message);
    }
    if (stacks.truncatedStacks > 0) {
      builder.limit("STACK_TRUNCATED", `${stacks.truncatedStacks} stack(s) were deeper than ${limits.maxDepth} frames; their leaf-most frames were dropped.`);
    }
    if (differential) {
      builder.metadata.differential = "true";
      builder.metadata.differential_metrics = "samples_base = first count (before), samples = second count (after), as flamegraph.pl draws it";
    }
  },
};
