/**
 * Folded ("collapsed") stacks, as written by Brendan Gregg's stackcollapse-*.pl and read by
 * flamegraph.pl: one line per distinct stack, `root;…;leaf COUNT`. Each line becomes one stack
 * (frames interned by text) and one aggregate sample of metric `samples` (no time, no track).
 * The differential form `stack COUNT_BEFORE COUNT_AFTER` (difffolded.pl) is drawn by flamegraph.pl
 * with the second count, so it becomes `samples` (after) plus `samples_base` (before).
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { detectEncoding, headText as decodeHead } from "../io/text";
import { EvidenceParseError, InputBoundError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "folded";
const SPACE = 0x20;
const TAB = 0x09;
const SEMICOLON = 0x3b;
const NO_STACK = -1;
const FIRST_INVALID_LINES_SHOWN = 5;

const isBlank = (code: number) => code === SPACE || code === TAB || code === 0x0d;

/** A non-negative integer written only with digits, or -1 ("not a count"). */
function parseCount(text: string, start: number, end: number): number {
  if (end <= start || end - start > 15) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Start of the whitespace-separated token that ends at `end`. */
function tokenStart(text: string, end: number): number {
  let at = end;
  while (at > 0 && !isBlank(text.charCodeAt(at - 1))) at--;
  return at;
}

function skipBlanksBack(text: string, end: number): number {
  let at = end;
  while (at > 0 && isBlank(text.charCodeAt(at - 1))) at--;
  return at;
}

// stackcollapse-perf.pl --all marks frames with a suffix; flamegraph.pl colours by it.
const ANNOTATION_KINDS: Record<string, FrameKind> = { k: "kernel", j: "js", i: "other", w: "other" };
const PY_SPY_FRAME = /^(.*) \(([^()]*\.py)(?::(\d+))?\)$/;

/** What a frame's text says: perf's `_[k]` suffixes, dtrace's module`function, py-spy's `func (file.py:12)`. */
export function describeFolderFrame(text: string): FrameInput {
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

/**
 * Lines of the input, decoded a whole chunk at a time. readLines decodes each line separately,
 * which caps inputs of short lines near 45 MB/s; splitting decoded text keeps this above 200 MB/s.
 */
async function* foldedLines(chunks: AsyncIterable<Uint8Array>, maxLineLength: number): AsyncGenerator<string[]> {
  let decoder: TextDecoder | null = null;
  let carry = "";
  for await (const raw of chunks) {
    let chunk = raw;
    if (decoder === null) {
      const { encoding, bomLength } = detectEncoding(chunk);
      decoder = new TextDecoder(encoding, { fatal: false });
      chunk = chunk.subarray(bomLength);
    }
    const text = carry + decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      lines.push(text.slice(start, nl));
      start = nl + 1;
    }
    carry = text.slice(start);
    if (carry.length > maxLineLength) {
      throw new InputBoundError("line_length", maxLineLength, `A line is longer than ${maxLineLength} characters.`);
    }
    yield lines;
  }
  const tail = carry + (decoder ? decoder.decode() : "");
  if (tail.length > 0) yield [tail];
}

/** Builds stacks line by line, reusing the part of the stack shared with the previous line (files are usually sorted). */
class FoldedStacks {
  private readonly frameIds = new Map<string, number>();
  private previous = "";
  private previousLength = 0;
  /** For each frame of the previous stack: where its text ends, and the stack node after it. */
  private ends: number[] = [];
  private nodes: number[] = [];
  private frameCount = 0;
  truncatedStacks = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  /** The leaf stack node of `text[0, end)`, or NO_STACK when it names no frame. */
  leaf(text: string, end: number): number {
    let reused = 0;
    const shared = Math.min(end, this.previousLength);
    let same = 0;
    while (same < shared && text.charCodeAt(same) === this.previous.charCodeAt(same)) same++;
    // A previous frame is shared when its text and the separator after it are both in the common prefix.
    while (reused < this.frameCount && this.ends[reused] < same) reused++;
    let node = reused > 0 ? this.nodes[reused - 1] : NO_STACK;
    let start = reused > 0 ? this.ends[reused - 1] + 1 : 0;
    let count = reused;
    let depth = 0;
    if (node !== NO_STACK) for (let i = 0; i < reused; i++) if (this.nodes[i] !== (i > 0 ? this.nodes[i - 1] : NO_STACK)) depth++;
    while (start <= end) {
      let stop = text.indexOf(";", start);
      if (stop < 0 || stop > end) stop = end;
      if (stop > start) {
        if (depth < this.maxDepth) {
          node = this.builder.stack(node === NO_STACK ? null : node, this.frameId(text.slice(start, stop)));
          depth++;
        } else if (this.ends.length === count || this.ends[count] !== stop) {
          this.truncatedStacks++;
        }
      }
      this.ends[count] = stop;
      this.nodes[count] = node;
      count++;
      start = stop + 1;
    }
    this.frameCount = count;
    this.previous = text;
    this.previousLength = end;
    return node;
  }

  private frameId(text: string): number {
    let id = this.frameIds.get(text);
    if (id === undefined) {
      id = this.builder.frame(describeFolderFrame(text));
      this.frameIds.set(text, id);
    }
    return id;
  }
}

type LineVerdict = "no count" | "a negative count" | "a non-integer count" | "an empty stack" | "one count in a differential file";

/** Why the last token is not a count. */
function countProblem(text: string, start: number, end: number): LineVerdict {
  const token = text.slice(start, end);
  if (/^-\d/.test(token)) return "a negative count";
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+)(e[+-]?\d+)?$/i.test(token)) return "a non-integer count";
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
    const firstInvalid: { line: number; why: LineVerdict }[] = [];
    const invalid = (why: LineVerdict) => {
      invalidLines++;
      if (firstInvalid.length < FIRST_INVALID_LINES_SHOWN) firstInvalid.push({ line: lineNo, why });
    };

    for await (const lines of foldedLines(source.chunks(), limits.maxLineLength)) {
      for (const text of lines) {
        lineNo++;
        const end = skipBlanksBack(text, text.length);
        if (end === 0) continue;
        const countStart = tokenStart(text, end);
        const count = parseCount(text, countStart, end);
        if (count < 0) {
          invalid(countProblem(text, countStart, end));
          continue;
        }
        let stackEnd = skipBlanksBack(text, countStart);
        let before = -1;
        if (differential !== false && stackEnd > 0) {
          const beforeStart = tokenStart(text, stackEnd);
          before = parseCount(text, beforeStart, stackEnd);
          if (before >= 0) {
            const rest = skipBlanksBack(text, beforeStart);
            if (rest === 0) before = -1;
            else if (differential === null || differential) stackEnd = rest;
          }
        }
        if (stackEnd === 0) {
          invalid("an empty stack");
          continue;
        }
        if (differential === null) differential = before >= 0;
        else if (differential && before < 0) {
          invalid("one count in a differential file");
          continue;
        }
        const leaf = stacks.leaf(text, stackEnd);
        if (leaf === NO_STACK) {
          invalid("an empty stack");
          continue;
        }
        if (samples < 0) {
          samples = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
          if (differential) samplesBase = builder.metric({ name: "samples_base", unit: "count", kind: "sampled" });
        }
        builder.sample(leaf, null, null, samples, count);
        if (differential) builder.sample(leaf, null, null, samplesBase, before);
        validLines++;
      }
      await builder.checkpoint();
    }

    if (validLines === 0) {
      if (invalidLines === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0, line: 1 });
      const first = firstInvalid[0];
      throw new EvidenceParseError(FORMAT, `no valid folded stack line (line ${first.line} has ${first.why})`, { line: first.line });
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
