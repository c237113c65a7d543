import { InputBoundError } from "../formats/errors";

export interface TextLine {
  text: string;
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte in the input. */
  offset: number;
}

export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be";

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
 * Splits a chunked input into lines: LF or CRLF endings, UTF-8 or UTF-16 (with BOM), decoding
 * one line at a time so that no string larger than a line is ever built. Offsets are in bytes.
 */
export async function* readLines(chunks: AsyncIterable<Uint8Array>, maxLineLength: number): AsyncGenerator<TextLine> {
  const utf8 = new TextDecoder("utf-8", { fatal: false });
  let encoding: TextEncoding | null = null;
  let utf16: TextDecoder | null = null;
  let carry: Uint8Array = new Uint8Array(0);
  let carryOffset = 0;
  let lineNo = 0;

  const emit = (bytes: Uint8Array, offset: number): TextLine => {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 0x0d) end--;
    lineNo++;
    return { text: utf8.decode(bytes.subarray(0, end)), line: lineNo, offset };
  };

  for await (const raw of chunks) {
    let chunk = raw;
    if (encoding === null) {
      const detected = detectEncoding(chunk);
      encoding = detected.encoding;
      if (encoding !== "utf-8") utf16 = new TextDecoder(encoding, { fatal: false });
      chunk = chunk.subarray(detected.bomLength);
      carryOffset = detected.bomLength;
    }
    // UTF-16 input is re-encoded as UTF-8 chunk by chunk; its offsets are then approximate.
    const bytes = utf16 ? new TextEncoder().encode(utf16.decode(chunk, { stream: true })) : chunk;
    let start = 0;
    let data = bytes;
    if (carry.length > 0) {
      data = new Uint8Array(carry.length + bytes.length);
      data.set(carry);
      data.set(bytes, carry.length);
    }
    const base = carryOffset;
    for (;;) {
      const nl = data.indexOf(0x0a, start);
      if (nl < 0) break;
      yield emit(data.subarray(start, nl), base + start);
      start = nl + 1;
    }
    carry = data.slice(start);
    carryOffset = base + start;
    if (carry.length > maxLineLength) {
      throw new InputBoundError("line_length", maxLineLength, `Line ${lineNo + 1} is longer than ${maxLineLength} bytes.`);
    }
  }
  if (utf16) {
    const tail = new TextEncoder().encode(utf16.decode());
    if (tail.length) {
      const data = new Uint8Array(carry.length + tail.length);
      data.set(carry);
      data.set(tail, carry.length);
      carry = data;
    }
  }
  if (carry.length > 0) yield emit(carry, carryOffset);
}
