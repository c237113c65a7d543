import type { EvidenceBuilder } from "../../../analysis/evidence/builder";
import type { FormatId } from "../../../analysis/formats/types";
import type { ProcessResult } from "../process";

export interface AdapterProbe {
  adapter: string;
  available: boolean;
  version: string | null;
  /** Why it is unavailable, in words a person can act on. */
  reason: string | null;
}

export interface Command {
  argv: string[];
  env: Record<string, string>;
}

export type AdapterOptions = Record<string, string | number | boolean>;

/** One file a capture produced, and how to turn it into evidence. */
export interface CollectedArtifact {
  file: string;
  kind: string;
  mediaType: string;
  /** Imported with this format's importer… */
  format?: FormatId;
  /** …or extracted by the adapter itself (measure). */
  extractor?: { id: string; version: string; produce: (builder: EvidenceBuilder) => Promise<void> };
}

/** A way of running a declared workload under a profiler (or a stopwatch). */
export interface CaptureAdapter {
  name: string;
  summary: string;
  /** Adapter options a plan may set, with their defaults. */
  options: Record<string, { default: number | string | boolean; description: string }>;
  probe(): Promise<AdapterProbe>;
  /** Null when it can run this executable; otherwise why not. */
  unsuitableFor(executable: string): string | null;
  /** How many times the (wrapped) command runs, and how many of those are warm-ups. */
  repetitions(options: AdapterOptions): { runs: number; warmups: number };
  /** The command to run for repetition `index` (0-based), writing into `outDir`. */
  command(base: Command, outDir: string, options: AdapterOptions, index: number): Command;
  /** After the runs: the artifacts to keep and extract. */
  collect(outDir: string, results: ProcessResult[], options: AdapterOptions): Promise<CollectedArtifact[]>;
}
