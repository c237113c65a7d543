import { concatBytes } from "./bytes";
import { InputBoundError } from "../formats/errors";

export interface TextLine {
  text: string;
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte in the input. */
  offset: number;
}

export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be";

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** Lines are decoded verbatim: utf8Chunks already dropped the input's BOM, a later U+FEFF is content. */
const UTF8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const ENCODER = new TextEncoder();

export function detectEncoding(head: Uint8Array): { encoding: TextEncoding; bomLength: number } {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: "utf-8", bomLength: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: "utf-16le", bomLength: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: "utf-16be", bomLength: 2 };
  return { encoding: "utf-8", bomLength: 0 };
}

/** Decodes the first bytes of an input as text, honouring a BOM (for sniffing). */
export function headText(head: Uint8Array): string {
  const { encoding, bomLength } = detectEncoding(head);
  return new TextDecoder(encoding, { fatal: false }).decode(head.subarray(bomLength));
}

/**
 * The input as UTF-8 bytes, chunk by chunk, so byte scanners know one encoding: a BOM (decided by
 * the first chunk) is dropped and UTF-16 is re-encoded. `offset` is where the chunk starts in the
 * input; for UTF-16 it counts re-encoded bytes after the BOM, so it is approximate.
 */
export async function* utf8Chunks(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<{ bytes: Uint8Array; offset: number }> {
  let utf16: TextDecoder | null = null;
  const encoder = new TextEncoder();
  let first = true;
  let offset = 0;
  for await (const raw of chunks) {
    let bytes = raw;
    if (first) {
      first = false;
      const { encoding, bomLength } = detectEncoding(raw);
      if (encoding !== "utf-8") utf16 = new TextDecoder(encoding, { fatal: false });
      bytes = raw.subarray(bomLength);
      offset = bomLength;
    }
    if (utf16) bytes = encoder.encode(utf16.decode(bytes, { stream: true }));
    if (bytes.length === 0) continue;
    yield { bytes, offset };
    offset += bytes.length;
  }
  if (utf16) {
    const tail = encoder.encode(utf16.decode());
    if (tail.length > 0) yield { bytes: tail, offset };
  }
}

/**
 * A string of the same text that refers to nothing else. A line from `LineBatch.texts()`, and a
 * part split from it, is a slice of the whole batch's decoded text in V8: keeping it (as a map
 * key, say) keeps that megabyte alive. Worth its cost only for the few strings an importer keeps.
 */
export function ownCopy(text: string): string {
  return UTF8.decode(ENCODER.encode(text));
}

/**
 * Whole lines of the input as UTF-8 bytes, about one input chunk at a time. Nothing is decoded
 * until asked: byte scanners walk the lines with `nextLine()`, text formats decode the batch in
 * one call (`texts()`), which is several times faster than a decode per short line.
 */
export class LineBatch {
  /** The current line (after `nextLine()`): `bytes[start, end)`, without its "\n" or "\r\n". */
  start = 0;
  end = 0;
  /** 1-based number of the current line. */
  line: number;
  private next = 0;
  private knownLineCount: number | null = null;

  constructor(
    /** Whole lines, each ending with "\n" but the input's last line when the input does not. May alias an input chunk. */
    readonly bytes: Uint8Array,
    /** Where `bytes` starts in the input (approximate for UTF-16 input, see utf8Chunks). */
    readonly offset: number,
    /** 1-based number of the batch's first line. */
    readonly firstLine: number,
  ) {
    this.line = firstLine - 1;
  }

  /** Moves to the next line of the batch; false after the last. */
  nextLine(): boolean {
    const bytes = this.bytes;
    const start = this.next;
    if (start >= bytes.length) {
      this.knownLineCount = this.line - this.firstLine + 1;
      return false;
    }
    const newline = bytes.indexOf(NEWLINE, start);
    const stop = newline < 0 ? bytes.length : newline;
    this.start = start;
    this.end = stop > start && bytes[stop - 1] === CARRIAGE_RETURN ? stop - 1 : stop;
    this.next = stop + 1;
    this.line++;
    return true;
  }

  /** Byte offset of the current line in the input. */
  get lineOffset(): number {
    return this.offset + this.start;
  }

  /** Whether the batch's last line ends with a newline (only the input's last line may not). */
  get endsWithNewline(): boolean {
    return this.bytes[this.bytes.length - 1] === NEWLINE;
  }

  /** The batch's lines as strings without their "\n" or "\r\n", decoded in one call. */
  texts(): string[] {
    const lines = UTF8.decode(this.bytes).split("\n");
    if (this.endsWithNewline) lines.pop();
    if (this.bytes.includes(CARRIAGE_RETURN)) {
      for (let i = 0; i < lines.length; i++) if (lines[i].endsWith("\r")) lines[i] = lines[i].slice(0, -1);
    }
    this.knownLineCount = lines.length;
    return lines;
  }

  /** `texts()` with each line's number and byte offset. */
  textLines(): TextLine[] {
    const texts = this.texts();
    const out: TextLine[] = new Array(texts.length);
    let at = 0;
    for (let i = 0; i < texts.length; i++) {
      out[i] = { text: texts[i], line: this.firstLine + i, offset: this.offset + at };
      at = this.bytes.indexOf(NEWLINE, at) + 1;
    }
    return out;
  }

  /** How many lines the batch holds (known without a scan once the lines were walked or decoded). */
  lineCount(): number {
    if (this.knownLineCount === null) {
      let count = 0;
      for (let at = this.bytes.indexOf(NEWLINE); at >= 0; at = this.bytes.indexOf(NEWLINE, at + 1)) count++;
      this.knownLineCount = this.endsWithNewline ? count : count + 1;
    }
    return this.knownLineCount;
  }
}

/** UTF-8 bytes of a range of an input that starts at `offset`: no BOM is looked for, as none can be there. */
async function* rangeChunks(chunks: AsyncIterable<Uint8Array>, offset: number): AsyncGenerator<{ bytes: Uint8Array; offset: number }> {
  let at = offset;
  for await (const bytes of chunks) {
    yield { bytes, offset: at };
    at += bytes.length;
  }
}

/**
 * Splits a chunked input into batches of whole lines: LF or CRLF endings, UTF-8 or UTF-16 (with
 * BOM, see utf8Chunks). A line still incomplete after a chunk longer than `maxLineLength` bytes
 * is refused (InputBoundError "line_length"), so memory stays bounded by chunk and line size.
 * With `range`, the chunks are a UTF-8 input's bytes from `range.offset` on (a line start), and
 * lines are numbered from 1 there.
 */
export async function* lineBatches(chunks: AsyncIterable<Uint8Array>, maxLineLength: number, range?: { offset: number }): AsyncGenerator<LineBatch> {
  let carry: Uint8Array = new Uint8Array(0);
  let carryOffset = 0;
  let line = 1;
  for await (const { bytes, offset } of range ? rangeChunks(chunks, range.offset) : utf8Chunks(chunks)) {
    let rest = bytes;
    let restOffset = offset;
    if (carry.length > 0) {
      // Only the line begun in the previous chunk is joined, not the whole chunk: a copy of
      // every chunk was about 70 ms of CPU and 220 MB of garbage for a 220 MB input.
      const newline = bytes.indexOf(NEWLINE);
      const joined = concatBytes([carry, newline < 0 ? bytes : bytes.subarray(0, newline + 1)]);
      if (newline < 0) {
        carry = joined;
        if (carry.length > maxLineLength) throw new InputBoundError("line_length", maxLineLength, `Line ${line} is longer than ${maxLineLength} bytes.`);
        continue;
      }
      const batch = new LineBatch(joined, carryOffset, line);
      yield batch;
      line += batch.lineCount();
      rest = bytes.subarray(newline + 1);
      restOffset = offset + newline + 1;
    }
    const lastNewline = rest.lastIndexOf(NEWLINE);
    if (lastNewline >= 0) {
      const batch = new LineBatch(rest.subarray(0, lastNewline + 1), restOffset, line);
      yield batch;
      line += batch.lineCount();
    }
    // Copied: the carry must not alias a chunk buffer its producer may reuse.
    carry = rest.slice(lastNewline + 1);
    carryOffset = restOffset + lastNewline + 1;
    if (carry.length > maxLineLength) {
      throw new InputBoundError("line_length", maxLineLength, `Line ${line} is longer than ${maxLineLength} bytes.`);
    }
  }
  if (carry.length > 0) yield new LineBatch(carry, carryOffset, line);
}

/**
 * The input's lines one at a time, as strings with their line number and byte offset (see
 * lineBatches). An async step per line: a large input's importer walks lineBatches' batches in a
 * plain loop instead (callgrind's parse of 1 GB spent more in these steps than in the rest).
 */
export async function* readLines(chunks: AsyncIterable<Uint8Array>, maxLineLength: number): AsyncGenerator<TextLine> {
  for await (const batch of lineBatches(chunks, maxLineLength)) yield* batch.textLines();
}
