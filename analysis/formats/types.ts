import type { EvidenceBuilder } from "../evidence/builder";
import type { FoldedPart, FoldedPartOptions, FoldedPiece } from "./folded";

export const FORMAT_IDS = [
  "cpuprofile",
  "heapprofile",
  "chrome-trace",
  "speedscope",
  "folded",
  "pprof",
  "perf-script",
  "callgrind",
  "otlp-json",
  // Issue 19, second half of item 11: V8 --prof logs and Java Flight Recorder.
  "v8-log",
  "jfr",
  // Firefox Profiler, stackprof, Instruments and Safari formats (issue 19, item 11).
  "gecko",
  "firefox-processed",
  "stackprof",
  "instruments-deep-copy",
  "safari-timeline",
  // Agent tool-call traces and service traces (issue 22, items 1-2).
  "trace-v1",
  "claude-code",
  "codex-rollout",
  "hf-session",
  "openai-chat",
  "jaeger-json",
] as const;
export type FormatId = (typeof FORMAT_IDS)[number];

/** Bounds every importer honours (the import service sets them from configuration). */
export interface ImportLimits {
  /** Maximum nesting depth of JSON/protobuf structures and of stacks. */
  maxDepth: number;
  /** Maximum length of one text line (line-based formats). */
  maxLineLength: number;
}

export const DEFAULT_IMPORT_LIMITS: ImportLimits = {
  maxDepth: 1024,
  maxLineLength: 16 * 1024 * 1024,
};

/** The input of one import: already decompressed bytes, read in chunks (never one giant string). */
export interface ImportSource {
  fileName: string | null;
  /**
   * The input's chunks, never overwritten unless `reuse`: then a chunk's bytes may be overwritten
   * once the next chunk is asked for, so a reader keeps copies of what it needs beyond that (a
   * plain file is then read into two buffers in turn, where a new buffer per chunk costs fresh
   * pages and, to V8, new memory outside its heap: see BatchSink.copies). Each call reads the
   * input again from its start: an importer may make two passes (pprof, whose string table
   * follows the samples) rather than hold the input.
   */
  chunks(options?: { reuse?: boolean }): AsyncIterable<Uint8Array>;
}

/**
 * Parsers of a byte range of an input that an importer may have run elsewhere (SplittableInput),
 * by name: their options, the pieces they hand out while they parse, and their result.
 */
export interface RangeParsers {
  folded: { options: FoldedPartOptions; piece: FoldedPiece; result: FoldedPart };
}
export type RangeParserId = keyof RangeParsers;

/** A range parse under way; `cancel` ends it (its result is then never delivered) and is safe once it settled. */
export interface RangeParse<T> {
  result: Promise<T>;
  cancel(): void;
}

/**
 * Offered when the source's bytes are a file's own (nothing decompressed or re-encoded), so a
 * byte range of it can be parsed elsewhere, on another thread, while the importer reads the rest.
 */
export interface SplittableInput {
  byteLength: number;
  /** Bytes [start, end) of the input (fewer at its end). */
  read(start: number, end: number): Promise<Uint8Array>;
  /**
   * Runs the parser on bytes [start, end) of the input elsewhere; `onPiece` hears, in order, the
   * pieces it hands out while it parses, all before its result settles.
   */
  parseRange<P extends RangeParserId>(parser: P, start: number, end: number, options: RangeParsers[P]["options"], onPiece: (piece: RangeParsers[P]["piece"]) => void): RangeParse<RangeParsers[P]["result"]>;
  /** Split near this byte offset, whatever the input's size, instead of where the importer would (tests, tuning). */
  splitNear?: number;
}

export interface ImportContext {
  source: ImportSource;
  builder: EvidenceBuilder;
  limits: ImportLimits;
  /** Present when the input may be split (see SplittableInput); importers that do not split ignore it. */
  split?: SplittableInput;
}

/** One file format: how to recognise it and how to normalize it into evidence. */
export interface FormatImporter {
  id: FormatId;
  title: string;
  /** File name endings that suggest the format (without the dot). */
  extensions: string[];
  /**
   * Confidence 0..1 that `head` (the first up to 64 KiB of decompressed input, and its text
   * decoded as UTF-8) is this format. 0 means "certainly not".
   */
  sniff(head: Uint8Array, headText: string, fileName: string | null): number;
  /** Streams the input into the builder; throws EvidenceParseError on malformed input. */
  parse(ctx: ImportContext): Promise<void>;
  /** From this input size the importer splits a SplittableInput (the server starts the thread ahead for it). */
  splitsFromBytes?: number;
  /** Bumped whenever the normalization changes, so re-extraction makes a new generation. */
  version: string;
}
