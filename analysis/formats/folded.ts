/**
 * Folded ("collapsed") stacks from stackcollapse-*.pl / flamegraph.pl: `root;…;leaf COUNT` per line.
 * Each line → one stack and one aggregate `samples` sample (no time, no track). Frames: perf's
 * `_[k]`/`_[j]` suffixes → kind kernel/js, dtrace's `module`func` → module, py-spy's `f (a.py:3)` → python.
 * difffolded.pl's `stack BEFORE AFTER` (decided by the first valid line) → `samples` = AFTER, which
 * flamegraph.pl draws, plus `samples_base` = BEFORE, and metadata differential = "true".
 * Comment lines (`#` or `//` first) are skipped; other lines that are no folded stack are skipped
 * and counted in a limitation, with the first few line numbers (never their text).
 */
import { frameKey, IntList, NumberColumn, StackChildren, type EvidenceBuilder, type FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { detectEncoding, headText as decodeHead, lineBatches } from "../io/text";
import { demangledFrame } from "../symbols/demangle";
import { EvidenceParseError, InputBoundError } from "./errors";
import type { FormatImporter, ImportContext, RangeParse, SplittableInput } from "./types";

const FORMAT = "folded";
const SPACE = 0x20;
const TAB = 0x09;
const SEMICOLON = 0x3b;
const NO_STACK = -1;
const FIRST_INVALID_LINES_SHOWN = 5;

const isBlank = (byte: number) => byte === SPACE || byte === TAB || byte === 0x0d;

/** Whether the line [start, end) is a comment: `#` or `//` after any blanks (some tools head their output with them). */
function isComment(bytes: Uint8Array, start: number, end: number): boolean {
  let at = start;
  while (at < end && isBlank(bytes[at])) at++;
  return at < end && (bytes[at] === 0x23 || (bytes[at] === 0x2f && at + 1 < end && bytes[at + 1] === 0x2f));
}

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
  // A mangled symbol (C++, Rust) is compiled code: shown demangled, the mangled name kept.
  const frame = demangledFrame({ name, kind, module, file, line });
  return frame.mangledName && kind === "other" ? { ...frame, kind: "native" } : frame;
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

/** Where a stack walk puts its nodes: the builder (whole-file parse) or a part's own tree. */
interface StackTree {
  /** `outermost`: whether `frameId` is absent from the path above (see EvidenceBuilder.stack). */
  stack(parentStackId: number | null, frameId: number, outermost: boolean): number;
}

/** Distinct frame texts: their bytes one after another, and per text its start, length and foldedFrameHash. */
export interface FoldedFrameTexts {
  bytes: Uint8Array;
  starts: Int32Array;
  lengths: Int32Array;
  hashes: Int32Array;
}

/**
 * Builds stacks line by line, touching each byte about once. Files are usually sorted, so the
 * frames shared with the previous line are reused after one byte comparison; the others are found
 * by the hash of their bytes among the distinct frames, and their node under the parent by the
 * builder, so a frame is decoded only when new.
 */
class FoldedStacks {
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
  /** Per segment, the recursion class of its frame (-1: none, or past maxDepth). */
  private readonly segmentClasses: number[] = [];
  private segments = 0;
  /**
   * Per recursion class, the last line (by `lineSerial`) whose path has it so far: a frame is
   * outermost on its path when its class is not stamped with the current line yet.
   */
  private classStamps = new Int32Array(1024);
  private lineSerial = 0;
  truncatedStacks = 0;

  constructor(
    /** Where nodes go: the builder, or a part's own tree. */
    private readonly tree: StackTree,
    /** The frame id of a text not seen before. */
    private readonly newFrame: (text: Uint8Array) => number,
    private readonly maxDepth: number,
    /**
     * The recursion class of a frame id: frames of one class are one frame in the evidence (the
     * builder's frame ids are; a part's texts are not, as `f` and `f_[i]` describe one frame).
     */
    private readonly frameClass: (frameId: number) => number = (frameId) => frameId,
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
    // The path's frames so far: those of the reused segments, then each new one as it is walked.
    if (this.lineSerial === 2 ** 30) {
      // Stamps are int32: start the count again rather than let it wrap.
      this.classStamps.fill(0);
      this.lineSerial = 0;
    }
    const serial = ++this.lineSerial;
    for (let reused = 0; reused < segment; reused++) {
      const recursionClass = this.segmentClasses[reused];
      if (recursionClass >= 0) this.classStamps[recursionClass] = serial;
    }
    while (at <= end) {
      const stop = frameEnd(this.view, at, end);
      let recursionClass = -1;
      if (stop > at) {
        if (frames < this.maxDepth) {
          const frameId = this.frameIds[this.frame(at, stop, foldedFrameHash(this.view, at, stop))];
          recursionClass = this.frameClass(frameId);
          if (recursionClass >= this.classStamps.length) this.growClassStamps(recursionClass);
          const outermost = this.classStamps[recursionClass] !== serial;
          this.classStamps[recursionClass] = serial;
          node = this.tree.stack(node === NO_STACK ? null : node, frameId, outermost);
        }
        frames++;
      }
      this.ends[segment] = stop - start;
      this.nodes[segment] = node;
      this.framesSoFar[segment] = frames;
      this.segmentClasses[segment] = recursionClass;
      segment++;
      at = stop + 1;
    }
    if (frames > this.maxDepth) this.truncatedStacks++;
    this.segments = segment;
    this.previousStart = start;
    this.previousLength = length;
    return node;
  }

  private growClassStamps(recursionClass: number): void {
    const grown = new Int32Array(Math.max(this.classStamps.length * 2, recursionClass + 1));
    grown.set(this.classStamps);
    this.classStamps = grown;
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
    this.frameIds.push(this.newFrame(own));
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

  /** How many distinct frame texts there are so far. */
  get textCount(): number {
    return this.frameIds.length;
  }

  /**
   * The distinct frame texts from the `first` on, in first-seen order (a part's, to send). Their
   * bytes are copied, unless `last`: then they are a view of the arena, which sending may move.
   */
  textsFrom(first: number, last: boolean): FoldedFrameTexts {
    const base = first < this.frameStarts.length ? this.frameStarts[first] : this.arenaLength;
    return {
      bytes: last ? this.arena.subarray(base, this.arenaLength) : this.arena.slice(base, this.arenaLength),
      starts: Int32Array.from(this.frameStarts.slice(first), (start) => start - base),
      lengths: Int32Array.from(this.frameLengths.slice(first)),
      hashes: Int32Array.from(this.frameHashes.slice(first)),
    };
  }

  /** The frame id of each of a part's texts, in their order: found among these, or added as `frame` adds a new one. */
  adopt(texts: FoldedFrameTexts): Int32Array {
    this.startBatch(texts.bytes);
    const ids = new Int32Array(texts.starts.length);
    for (let i = 0; i < ids.length; i++) ids[i] = this.frameIds[this.frame(texts.starts[i], texts.starts[i] + texts.lengths[i], texts.hashes[i])];
    return ids;
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

interface InvalidLine {
  line: number;
  offset: number;
  why: LineVerdict;
}

/**
 * The one line parser, of the whole-file parse and of a part alike: classifies each line, walks its
 * stack, and hands a valid line's leaf and counts to `emit` (`before` is -1 unless differential).
 */
class FoldedLines {
  validLines = 0;
  invalidLines = 0;
  readonly firstInvalid: InvalidLine[] = [];

  constructor(
    readonly stacks: FoldedStacks,
    /** Whether lines carry two counts: decided by the first valid line (difffolded.pl), null before it. */
    public differential: boolean | null,
    readonly emit: (leaf: number, count: number, before: number) => void,
  ) {}

  /** Line `lineNo`, at `offset` in the input: `bytes[start, lineEnd)` of the current batch, without its line ending. */
  line(bytes: Uint8Array, start: number, lineEnd: number, lineNo: number, offset: number): void {
    const end = skipBlanksBack(bytes, start, lineEnd);
    if (end === start || isComment(bytes, start, end)) return;
    const countStart = tokenStart(bytes, start, end);
    const count = parseCount(bytes, countStart, end);
    if (count < 0) return this.invalid(countProblem(bytes, countStart, end), lineNo, offset);
    let stackEnd = skipBlanksBack(bytes, start, countStart);
    let before = -1;
    if (this.differential !== false && stackEnd > start) {
      const beforeStart = tokenStart(bytes, start, stackEnd);
      const value = parseCount(bytes, beforeStart, stackEnd);
      const rest = skipBlanksBack(bytes, start, beforeStart);
      if (value >= 0 && rest > start) {
        before = value;
        stackEnd = rest;
      }
    }
    if (stackEnd === start) return this.invalid("an empty stack", lineNo, offset);
    if (this.differential === true && before < 0) return this.invalid("one count in a differential file", lineNo, offset);
    const leaf = this.stacks.leaf(start, stackEnd);
    if (leaf === NO_STACK) return this.invalid("an empty stack", lineNo, offset);
    // The first valid line decides: two counts make the whole file differential (difffolded.pl).
    if (this.differential === null) this.differential = before >= 0;
    this.validLines++;
    this.emit(leaf, count, before);
  }

  private invalid(why: LineVerdict, line: number, offset: number): void {
    this.invalidLines++;
    if (this.firstInvalid.length < FIRST_INVALID_LINES_SHOWN) this.firstInvalid.push({ line, offset, why });
  }
}

/** What a part's parse must be told of the file before it. */
export interface FoldedPartOptions {
  /** The whole-file parse's `differential` at the part's first line (see mergeFoldedPart). */
  differential: boolean | null;
  maxDepth: number;
  maxLineLength: number;
  /** A piece is handed out each time the part has read this many more bytes (see FoldedPiece). */
  pieceBytes: number;
}

/**
 * The frame texts and nodes a part made since its previous piece (the first: since its start), so
 * that the whole-file parse can merge them while the part parses on. Ids are the part's own, from
 * its start: a frame id indexes every text the part found, in first-seen order; a node id every
 * node it made, in creation order.
 */
export interface FoldedPiece {
  /** The new distinct frame texts, in first-seen order. */
  frames: FoldedFrameTexts;
  /** Per new node in creation order: its parent (-1 at a root), frame, and 1 when that frame is outermost on its path. */
  nodeParents: Int32Array;
  nodeFrames: Int32Array;
  nodeOutermost: Int32Array;
}

/**
 * The lines of a folded file from `start` (a line start) to its end, parsed on their own: what the
 * whole-file parse would do with them, with frame and node ids of the part's own. As a piece, it
 * holds the texts and nodes made after the last piece handed out.
 */
export interface FoldedPart extends FoldedPiece {
  start: number;
  /** The `differential` the part ended with (it started from options.differential). */
  differential: boolean | null;
  /** Per valid line in order: its leaf node, count and first count (-1 unless differential). */
  sampleLeaves: Int32Array;
  sampleCounts: Int32Array | Float64Array;
  sampleBefores: Int32Array | Float64Array;
  validLines: number;
  invalidLines: number;
  /** Line numbers from 1 at `start`; offsets in the file. */
  firstInvalid: InvalidLine[];
  truncatedStacks: number;
  lineCount: number;
}

/**
 * A part's own prefix tree: node ids in creation order, as the builder assigns them. Its lists
 * hold only the nodes made since they were last taken (for a piece); the child lookup holds all.
 */
class PartTree implements StackTree {
  private parents = new IntList();
  private frames = new IntList();
  private outermost = new IntList();
  private readonly children = new StackChildren();
  /** Nodes taken before those in the lists. */
  private taken = 0;

  stack(parentStackId: number | null, frameId: number, outermost: boolean): number {
    const parent = parentStackId === null ? -1 : parentStackId;
    const id = this.taken + this.parents.length;
    const known = this.children.childOrAdd(parent, frameId, id);
    if (known !== id) return known;
    this.parents.push(parent);
    this.frames.push(frameId);
    this.outermost.push(outermost ? 1 : 0);
    return id;
  }

  /** The nodes made since the last take, as arrays of their own (sending moves them), and forgets them. */
  take(): Pick<FoldedPiece, "nodeParents" | "nodeFrames" | "nodeOutermost"> {
    const made = { nodeParents: this.parents.data.subarray(0, this.parents.length), nodeFrames: this.frames.data.subarray(0, this.frames.length), nodeOutermost: this.outermost.data.subarray(0, this.outermost.length) };
    this.taken += this.parents.length;
    this.parents = new IntList();
    this.frames = new IntList();
    this.outermost = new IntList();
    return made;
  }
}

/**
 * Parses a part (see FoldedPart): `chunks` are the file's bytes from `start` on. Hands a piece to
 * `onPiece` each time it has read `options.pieceBytes` more bytes.
 */
export async function parseFoldedPart(chunks: AsyncIterable<Uint8Array>, start: number, options: FoldedPartOptions, onPiece: (piece: FoldedPiece) => void = () => undefined): Promise<FoldedPart> {
  const tree = new PartTree();
  // Texts that the builder will take for one frame (same key) are one recursion class, so that
  // the part says "outermost" exactly as the whole-file parse would.
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const classByKey = new Map<string, number>();
  const classes: number[] = [];
  const newFrame = (text: Uint8Array) => {
    const key = frameKey(describeFoldedFrame(decoder.decode(text)));
    let recursionClass = classByKey.get(key);
    if (recursionClass === undefined) classByKey.set(key, (recursionClass = classByKey.size));
    classes.push(recursionClass);
    return classes.length - 1;
  };
  const stacks = new FoldedStacks(tree, newFrame, options.maxDepth, (frameId) => classes[frameId]);
  const leaves = new IntList();
  const counts = new NumberColumn();
  const befores = new NumberColumn();
  const lines = new FoldedLines(stacks, options.differential, (leaf, count, before) => {
    leaves.push(leaf);
    counts.push(count);
    befores.push(before);
  });
  let lineCount = 0;
  // The texts the pieces so far held, and the bytes read since the last one.
  let textsSent = 0;
  let sincePiece = 0;
  const piece = (last: boolean): FoldedPiece => {
    const made = { frames: stacks.textsFrom(textsSent, last), ...tree.take() };
    textsSent = stacks.textCount;
    return made;
  };
  for await (const batch of lineBatches(chunks, options.maxLineLength, { offset: start })) {
    const bytes = batch.bytes;
    stacks.startBatch(bytes);
    while (batch.nextLine()) {
      // Whether the whole-file parse refuses a line this long depends on where its chunks end
      // (see lineBatches), which a part cannot know: the main thread reads such a part itself.
      if (batch.end - batch.start >= options.maxLineLength) {
        throw new InputBoundError("line_length", options.maxLineLength, `Line ${batch.line} of the part at byte ${start} may be longer than ${options.maxLineLength} bytes.`);
      }
      lines.line(bytes, batch.start, batch.end, batch.line, batch.lineOffset);
      lineCount = batch.line;
    }
    sincePiece += bytes.length;
    if (sincePiece >= options.pieceBytes) {
      onPiece(piece(false));
      sincePiece = 0;
    }
  }
  return {
    ...piece(true),
    start,
    differential: lines.differential,
    sampleLeaves: leaves.data.subarray(0, leaves.length),
    sampleCounts: counts.view(),
    sampleBefores: befores.view(),
    validLines: lines.validLines,
    invalidLines: lines.invalidLines,
    firstInvalid: lines.firstInvalid,
    truncatedStacks: stacks.truncatedStacks,
    lineCount,
  };
}

/** A part handed out to be parsed elsewhere: its pieces as they come, then its result. */
class HandedOutPart {
  readonly job: RangeParse<FoldedPart>;
  private readonly pieces: FoldedPiece[] = [];
  private settled = false;
  private arrived: (() => void) | null = null;

  constructor(
    split: SplittableInput,
    start: number,
    readonly options: FoldedPartOptions,
  ) {
    this.job = split.parseRange("folded", start, split.byteLength, options, (piece) => {
      this.pieces.push(piece);
      this.arrived?.();
    });
    // Also keeps a failure that comes after this parse failed first from going unhandled.
    const settle = () => {
      this.settled = true;
      this.arrived?.();
    };
    this.job.result.then(settle, settle);
  }

  /** The next piece, or null once the result has settled (every piece comes before it). */
  async nextPiece(): Promise<FoldedPiece | null> {
    while (this.pieces.length === 0 && !this.settled) await new Promise<void>((resolve) => (this.arrived = resolve));
    this.arrived = null;
    return this.pieces.shift() ?? null;
  }
}

/**
 * Adds a part to a whole-file parse that has read every line before it (`linesBefore` of them), as
 * if it had read the part's lines itself; false when the part fails.
 *
 * Why this gives the sequential parse's ids and row order: reading the part's lines itself, the
 * parse would intern each frame text at its first use in the part (when not known before), and
 * create a node at the first walk through its (parent, frame) pair in the part (when not known
 * before); samples follow line order. The part records exactly those firsts in the same order
 * (texts in first-seen order, nodes in creation order, each node after its parent), so interning
 * its texts in their order and replaying its nodes in creation order through `stack` creates the
 * new frames and nodes in the same order, and looks up the known ones: two part nodes that map to
 * one (two texts that describe one frame, say `f` and `f_[i]`) resolve to the node the first made.
 * The texts go through this parse's own text table, so `builder.frame` (and a FIELD_TRUNCATED it
 * counts) runs once per text new to the file, as reading the lines would. Depth truncation is per
 * line. The one thing carried from line to line, `differential`, the part took from this parse:
 * it is handed out once the first valid line decided it (it never changes after) or at the split,
 * so it started from what this parse has at the split. A line the part cannot judge (its length
 * bound) fails the part (see parseFoldedPart).
 *
 * Pieces are merged as they come, while the part parses on; samples and line counts only from its
 * result. When the part fails after some pieces were merged, their frames and nodes stay, and the
 * caller reads the part's lines itself: they are the frames and nodes its first lines make first,
 * in the same order, so it finds them instead of making them, and goes on as one parse would.
 */
async function mergeFoldedPart(part: HandedOutPart, lines: FoldedLines, linesBefore: number, builder: EvidenceBuilder): Promise<boolean> {
  // Per part text and per part node, its id here.
  const frameIds = new IntList();
  const nodes = new IntList();
  const add = async (piece: FoldedPiece) => {
    for (const id of lines.stacks.adopt(piece.frames)) frameIds.push(id);
    for (let node = 0; node < piece.nodeParents.length; node++) {
      const parent = piece.nodeParents[node];
      nodes.push(builder.stack(parent < 0 ? null : nodes.data[parent], frameIds.data[piece.nodeFrames[node]], piece.nodeOutermost[node] === 1));
      if ((nodes.length & 0xffff) === 0) await builder.checkpoint();
    }
  };
  for (let piece = await part.nextPiece(); piece !== null; piece = await part.nextPiece()) await add(piece);
  const result = await part.job.result.catch(() => null);
  if (result === null) return false;
  await add(result);
  lines.differential = result.differential;
  for (let line = 0; line < result.sampleLeaves.length; line++) {
    lines.emit(nodes.data[result.sampleLeaves[line]], result.sampleCounts[line], result.sampleBefores[line]);
    if ((line & 0x3fff) === 0x3fff) await builder.checkpoint();
  }
  lines.validLines += result.validLines;
  lines.invalidLines += result.invalidLines;
  for (const invalid of result.firstInvalid) {
    if (lines.firstInvalid.length < FIRST_INVALID_LINES_SHOWN) lines.firstInvalid.push({ ...invalid, line: invalid.line + linesBefore });
  }
  lines.stacks.truncatedStacks += result.truncatedStacks;
  return true;
}

/**
 * Inputs from this size are parsed in two parts when they can be. Per thread CPU for the 220 MB
 * benchmark file: first 40% 1.45 s, merge 0.9 s, part (60%) 1.6 s plus 0.3-1 s to start its
 * thread; by those rates a split wins only above about 80-90 MB.
 */
export const FOLDED_SPLIT_FROM_BYTES = 96 * 1024 * 1024;
/**
 * Where the second part starts, as a fraction of the input: the main thread merges the part after
 * its own (about 0.65 s of CPU per 100 MB of part), and the part's thread starts late, so its own
 * is smaller. A third measured no better than 0.4 with pieces (4 alternating imports each).
 */
export const FOLDED_SPLIT_FRACTION = 0.4;
/**
 * A part hands out what it made each time it has read this much more (see FoldedPiece), so the
 * merge starts before the part ends. On the 220 MB benchmark file, nine alternating CLI imports:
 * median 5.05 s merging the whole part at its end, 4.76 s in pieces (about 100 MB more RSS, the
 * pieces waiting while the main thread reads its own lines).
 */
export const FOLDED_PIECE_BYTES = 8 * 1024 * 1024;
/** How far after the chosen place a line start is looked for. */
const SPLIT_SEARCH_BYTES = 1024 * 1024;

/** The byte offset of the input's second part (a line start), or null when it is not split. */
async function foldedSplitPoint(input: SplittableInput): Promise<number | null> {
  const target = input.splitNear ?? (input.byteLength >= FOLDED_SPLIT_FROM_BYTES ? Math.floor(input.byteLength * FOLDED_SPLIT_FRACTION) : -1);
  if (target < 0) return null;
  // UTF-16 is re-encoded for the parse: its offsets are not the file's.
  if (detectEncoding(await input.read(0, 4)).encoding !== "utf-8") return null;
  // A line start after a newline, never the input's start (where a BOM may be).
  const window = 64 * 1024;
  for (let from = Math.max(target - 1, 0); from < Math.min(input.byteLength, target + SPLIT_SEARCH_BYTES); from += window) {
    const bytes = await input.read(from, Math.min(from + window, input.byteLength));
    const newline = bytes.indexOf(0x0a);
    if (newline >= 0) return from + newline + 1 < input.byteLength ? from + newline + 1 : null;
  }
  return null;
}

export const foldedImporter: FormatImporter = {
  id: "folded",
  title: "Folded stacks (flamegraph.pl / stackcollapse)",
  extensions: ["folded", "collapsed", "stacks", "txt"],
  version: "2",

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
        // Blank and comment lines say nothing either way.
        if (line.trim() === "" || /^\s*(#|\/\/)/.test(line)) continue;
        if (++checked > 50) break;
        if (!/^\S.*\s\d+$/.test(line)) continue;
        valid++;
        if (line.includes(";")) withSeparator++;
      }
      const named = /\.(folded|collapsed)$/i.test(fileName ?? "");
      if (checked === 0 || valid === 0) return 0;
      // A few bad lines (a truncated last line, a stray message) do not make it another format;
      // mostly bad lines do, unless the name says folded.
      if (valid < checked * 0.5) return named ? 0.3 : 0;
      if (withSeparator === 0) return named ? 0.6 : 0.1;
      if (valid < checked * 0.9) return named ? 0.9 : 0.6;
      return named ? 0.95 : 0.8;
    } catch {
      return 0;
    }
  },

  splitsFromBytes: FOLDED_SPLIT_FROM_BYTES,

  async parse({ source, builder, limits, split }: ImportContext) {
    const decoder = new TextDecoder("utf-8", { fatal: false });
    const stacks = new FoldedStacks(builder, (text) => builder.frame(describeFoldedFrame(decoder.decode(text))), limits.maxDepth);
    let samples = -1;
    let samplesBase = -1;
    const lines = new FoldedLines(stacks, null, (leaf, count, before) => {
      if (samples < 0) {
        samples = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
        if (before >= 0) samplesBase = builder.metric({ name: "samples_base", unit: "count", kind: "sampled" });
      }
      builder.sample(leaf, null, null, samples, count);
      if (before >= 0) builder.sample(leaf, null, null, samplesBase, before);
    });

    // A large plain file's second part is parsed on another thread while this one reads the first;
    // it is handed out once the first valid line decided `differential` (or at the split, undecided).
    let splitAt = split ? await foldedSplitPoint(split) : null;
    let part: HandedOutPart | null = null;
    const handOut = (at: number) =>
      new HandedOutPart(split!, at, { differential: lines.differential, maxDepth: limits.maxDepth, maxLineLength: limits.maxLineLength, pieceBytes: FOLDED_PIECE_BYTES });
    try {
      // Lines are parsed as bytes, not decoded: string scanning costs about twice a byte's cost.
      reading: for await (const batch of lineBatches(source.chunks(), limits.maxLineLength)) {
        const bytes = batch.bytes;
        stacks.startBatch(bytes);
        while (batch.nextLine()) {
          if (splitAt !== null && batch.lineOffset >= splitAt) {
            part ??= handOut(splitAt);
            if (await mergeFoldedPart(part, lines, batch.line - 1, builder)) break reading;
            // A part that failed (or could not decide, see parseFoldedPart) is read here instead,
            // from this batch again: merging its pieces may have pointed the stacks elsewhere.
            stacks.startBatch(bytes);
            splitAt = null;
          }
          lines.line(bytes, batch.start, batch.end, batch.line, batch.lineOffset);
          if (part === null && splitAt !== null && lines.differential !== null) part = handOut(splitAt);
        }
        await builder.checkpoint();
      }
    } finally {
      part?.job.cancel();
    }

    const { validLines, invalidLines, firstInvalid, differential } = lines;
    if (validLines === 0) {
      if (invalidLines === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0, line: 1 });
      const first = firstInvalid[0];
      throw new EvidenceParseError(FORMAT, `no valid folded stack line (line ${first.line} has ${first.why})`, { line: first.line, offset: first.offset });
    }
    if (invalidLines > 0) {
      const shown = firstInvalid.map((l) => `line ${l.line} (${l.why})`).join(", ");
      const message = `${invalidLines} line(s) were not folded stacks and were skipped: ${shown}${invalidLines > firstInvalid.length ? ", …" : ""}.`;
      // One limitation whose count is the number of skipped lines.
      builder.limit("FOLDED_INVALID_LINES", message, invalidLines);
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
