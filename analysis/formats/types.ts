import type { EvidenceBuilder } from "../evidence/builder";

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
  chunks(): AsyncIterable<Uint8Array>;
}

export interface ImportContext {
  source: ImportSource;
  builder: EvidenceBuilder;
  limits: ImportLimits;
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
  /** Bumped whenever the normalization changes, so re-extraction makes a new generation. */
  version: string;
}
