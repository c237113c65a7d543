import { describe, expect, it } from "vitest";
import { foldedImporter } from "./folded";
import { splittableBytes } from "./ranges";
import { importToMemory } from "./run";
import type { ImportLimits, RangeParse, SplittableInput } from "./types";

type Next = (n: number) => number;

function random(seed: number): Next {
  let state = seed;
  return (n) => (state = (state * 48271) % 2147483647) % n;
}

// Texts that describe one frame (`f`, `f_[i]`; two long names cut to the same 4096 characters),
// non-ASCII, blanks inside a frame, module and python forms.
const LONG = "L".repeat(4100);
const FRAMES = ["main", "parse", "lex", "é", "h€€h", "日本語", "🔥x", "f", "f_[i]", "k_[k]", "libc`malloc", "work (a.py:3)", "a b", "x\ty", "fn_1", "fn_10", "fn_100"];

function stackOf(next: Next, bases: string[][], withLong: boolean): string {
  // Shared prefixes: most stacks extend a prefix of a few base stacks.
  const base = bases[next(bases.length)];
  const frames = [...base.slice(0, next(base.length + 1))];
  for (let i = next(6); i > 0; i--) frames.push(FRAMES[next(FRAMES.length)]);
  if (withLong && next(10) === 0) frames.push(`${LONG}${next(3)}`);
  if (frames.length === 0) frames.push("main");
  let text = frames.join(";");
  const odd = next(12);
  if (odd === 0) text = text.replace(";", ";;");
  if (odd === 1) text = `;${text}`;
  if (odd === 2) text = `${text};`;
  return text;
}

const INVALID = [(s: string) => s, (s: string) => `${s} x`, (s: string) => `${s} -4`, (s: string) => `${s} 2.5`, (s: string) => `${s} 1234567890123456`, () => " 6", () => ";; 3", () => "; 3", () => "", () => "   ", () => "\t"];

interface RandomFolded {
  bytes: Uint8Array;
  limits: Partial<ImportLimits>;
  chunkSize: number;
  partChunkSize: number;
  name: string;
}

/** A random folded file with every kind of line, and random read settings. */
function randomFolded(seed: number): RandomFolded {
  const next = random(seed);
  const differential = next(3) === 0;
  const withLong = next(8) === 0;
  const bases = Array.from({ length: 1 + next(4) }, () => Array.from({ length: 2 + next(8) }, () => FRAMES[next(FRAMES.length)]));
  const lines: string[] = [];
  // Often the first valid line comes late, in the second part at most split positions.
  for (let i = next(3) === 0 ? next(25) : 0; i > 0; i--) lines.push(INVALID[next(INVALID.length)](stackOf(next, bases, false)));
  for (let i = 5 + next(30); i > 0; i--) {
    const stack = stackOf(next, bases, withLong);
    const kind = next(10);
    if (kind === 0) lines.push(INVALID[next(INVALID.length)](stack));
    else if (differential ? kind !== 1 : kind === 1) lines.push(`${stack} ${next(20)} ${next(20)}`);
    else lines.push(`${stack} ${next(3) === 0 ? 999_999_999_999_999 : next(50)}`);
  }
  if (next(3) === 0) lines.sort();
  const newline = next(3) === 0 ? "\r\n" : "\n";
  const text = lines.join(newline) + (next(2) === 0 ? newline : "");
  const encoded = new TextEncoder().encode(text);
  const bytes = next(8) === 0 ? new Uint8Array([0xef, 0xbb, 0xbf, ...encoded]) : encoded;
  const limits: Partial<ImportLimits> = {};
  if (next(4) === 0) limits.maxDepth = 1 + next(4);
  if (next(6) === 0) limits.maxLineLength = 30 + next(40);
  const chunkSize = [7, 64, 1000, 1 << 16][next(4)];
  const partChunkSize = [5, 61, 1 << 16][next(3)];
  return { bytes, limits, chunkSize, partChunkSize, name: `seed ${seed} (${lines.length} lines, differential ${differential}, ${JSON.stringify(limits)})` };
}

/** Everything an import yields: every table's rows in order, the summary, or the error it throws. */
async function outcome(input: RandomFolded, split?: SplittableInput): Promise<unknown> {
  try {
    const result = await importToMemory(foldedImporter, input.bytes, { limits: input.limits, chunkSize: input.chunkSize, split });
    return result;
  } catch (error) {
    const { name, message, at, bound, limit } = error as { name: string; message: string; at?: unknown; bound?: unknown; limit?: unknown };
    return { error: { name, message, at, bound, limit } };
  }
}

/** Split positions: the file's ends, every line's start and end (both sides of "\n"), a few others. */
function splitPositions(bytes: Uint8Array, next: Next): number[] {
  const positions = new Set([0, 1, 2, 3, bytes.length - 1, bytes.length, bytes.length + 5]);
  bytes.forEach((byte, at) => {
    if (byte === 0x0a) [at - 1, at, at + 1].forEach((p) => positions.add(p));
  });
  for (let i = 0; i < 4; i++) positions.add(next(bytes.length + 1));
  return [...positions].filter((p) => p >= 0).sort((a, b) => a - b);
}

interface SplitCounts {
  /** Parts handed out, and those parsed without failing. */
  handed: number;
  parsed: number;
  /** Pieces handed out, and parts that failed after handing out some. */
  pieces: number;
  failedAfterPieces: number;
}

function splitCounts(): SplitCounts {
  return { handed: 0, parsed: 0, pieces: 0, failedAfterPieces: 0 };
}

/** splittableBytes, with pieces every `pieceBytes` bytes of a part, counting what the parts do (see SplitCounts). */
function countingSplit(bytes: Uint8Array, splitNear: number, chunkSize: number, counts: SplitCounts, pieceBytes = 1 << 30): SplittableInput {
  const inner = splittableBytes(bytes, { splitNear, chunkSize });
  return {
    ...inner,
    parseRange(parser, start, end, options, onPiece) {
      counts.handed++;
      let pieces = 0;
      const job = inner.parseRange(parser, start, end, { ...options, pieceBytes }, (piece) => {
        pieces++;
        onPiece(piece);
      }) as RangeParse<unknown>;
      job.result.then(
        () => counts.parsed++,
        () => (counts.failedAfterPieces += pieces > 0 ? 1 : 0),
      );
      job.result.finally(() => (counts.pieces += pieces)).catch(() => undefined);
      return job as ReturnType<SplittableInput["parseRange"]>;
    },
  };
}

describe("folded stacks parsed in two parts", () => {
  it("yields the sequential parse's rows, limitations and errors for random files split at every line boundary", async () => {
    const counts = splitCounts();
    let positions = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const input = randomFolded(seed);
      const sequential = await outcome(input);
      // Pieces after every read, now and then, or never: merged while the part parses on, or all at its end.
      const pieceBytes = [1, 100, 1 << 30][seed % 3];
      for (const splitNear of splitPositions(input.bytes, random(seed + 7))) {
        positions++;
        const split = await outcome(input, countingSplit(input.bytes, splitNear, input.partChunkSize, counts, pieceBytes));
        expect(split, `${input.name}, pieces every ${pieceBytes} bytes, split near ${splitNear}`).toEqual(sequential);
      }
    }
    // The split path ran: most positions handed out a part that parsed and was merged, many of
    // them in pieces, and some parts failed after pieces of them had been merged.
    expect(counts.handed).toBeGreaterThan(positions * 0.7);
    expect(counts.parsed).toBeGreaterThan(counts.handed * 0.8);
    expect(counts.pieces).toBeGreaterThan(counts.handed);
    expect(counts.failedAfterPieces).toBeGreaterThan(0);
  }, 120_000);

  it("decides a differential file by its first valid line when that line is in the second part", async () => {
    const text = ["a;b", " 6", "a;c x", "main;old 10 0", "main;one 3", "main;new 0 7", ""].join("\n");
    const bytes = new TextEncoder().encode(text);
    const counts = splitCounts();
    const sequential = await importToMemory(foldedImporter, bytes);
    const split = await importToMemory(foldedImporter, bytes, { split: countingSplit(bytes, text.indexOf("main;old"), 4, counts) });
    expect(counts).toEqual({ ...splitCounts(), handed: 1, parsed: 1 });
    expect(split).toEqual(sequential);
    expect(split.summary.metadata.differential).toBe("true");
    expect(split.summary.limitations[0].message).toBe("4 line(s) were not folded stacks and were skipped: line 1 (no count), line 2 (an empty stack), line 3 (no count), line 5 (one count in a differential file).");
  });

  it("reports the first malformed line in file order when every line of both parts is invalid", async () => {
    const text = ["a;b", "", "c -1", "d 1.5", " 7", "e"].join("\n");
    const bytes = new TextEncoder().encode(text);
    for (let splitNear = 0; splitNear <= bytes.length; splitNear++) {
      const error = await importToMemory(foldedImporter, bytes, { split: splittableBytes(bytes, { splitNear }) }).catch((e: unknown) => e);
      expect(error, `split near ${splitNear}`).toMatchObject({ name: "EvidenceParseError", reason: "no valid folded stack line (line 1 has no count)", at: { line: 1, offset: 0 } });
    }
  });
});
