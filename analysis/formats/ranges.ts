import { parseFoldedPart } from "./folded";
import type { RangeParse, RangeParserId, RangeParsers, SplittableInput } from "./types";

type RangeParser<P extends RangeParserId> = (
  chunks: AsyncIterable<Uint8Array>,
  start: number,
  options: RangeParsers[P]["options"],
  onPiece: (piece: RangeParsers[P]["piece"]) => void,
) => Promise<RangeParsers[P]["result"]>;

/** The range parsers by name: what a thread runs when asked to parse a range of a file. */
export const RANGE_PARSERS: { [P in RangeParserId]: RangeParser<P> } = {
  folded: parseFoldedPart,
};

/**
 * An in-memory input as a SplittableInput whose ranges are parsed on this thread, interleaved
 * with the importer's own reading (tests), in `chunkSize` chunks.
 */
export function splittableBytes(bytes: Uint8Array, options: { splitNear?: number; chunkSize?: number } = {}): SplittableInput {
  const chunkSize = options.chunkSize ?? 64 * 1024;
  return {
    byteLength: bytes.length,
    splitNear: options.splitNear,
    read: (start, end) => Promise.resolve(bytes.slice(start, Math.min(end, bytes.length))),
    parseRange<P extends RangeParserId>(parser: P, start: number, end: number, parserOptions: RangeParsers[P]["options"], onPiece: (piece: RangeParsers[P]["piece"]) => void): RangeParse<RangeParsers[P]["result"]> {
      let cancelled = false;
      async function* chunks() {
        for (let at = start; at < end && !cancelled; at += chunkSize) yield bytes.subarray(at, Math.min(end, at + chunkSize));
      }
      const run = RANGE_PARSERS[parser] as RangeParser<P>;
      // Cancelled, it stops reading; its pieces are no longer heard and its result rejects, as a thread's that was ended.
      const result = run(chunks(), start, parserOptions, (piece) => cancelled || onPiece(piece)).then((parsed) => {
        if (cancelled) throw new Error("the range parse was cancelled before its result");
        return parsed;
      });
      return { result, cancel: () => void (cancelled = true) };
    },
  };
}
