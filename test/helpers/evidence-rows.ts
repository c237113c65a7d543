// Reading an importer's output back in tests: sample rows with stacks as "root;…;leaf" and metrics
// by name, totals per stack, fixture files (and the real ones in fixtures/peer), and the EvidenceParseError a malformed input must throw.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { EvidenceParseError } from "../../analysis/formats/errors";
import { importToMemory, type MemoryImport } from "../../analysis/formats/run";
import type { FormatImporter } from "../../analysis/formats/types";

/** Root-first frame names of any stack of the import, by stack id. */
export function stackNames(result: MemoryImport): (stackId: unknown) => string[] {
  const frameName = new Map(result.tables.frames.map((f) => [f.frame_id, String(f.name)]));
  const stackRow = new Map(result.tables.stacks.map((s) => [s.stack_id, s]));
  return (stackId) => {
    const names: string[] = [];
    for (let row = stackRow.get(stackId); row; row = row.parent_stack_id === null ? undefined : stackRow.get(row.parent_stack_id)) {
      names.unshift(frameName.get(row.frame_id)!);
    }
    return names;
  };
}

export interface SampleRow {
  /** Root-first frame names joined by ";", as folded stacks write them. */
  stack: string;
  metric: string;
  value: number;
  time: number | null;
  track: number | null;
}

/** Every sample row in order, its stack as "root;…;leaf" and its metric by name. */
export function sampleRows(result: MemoryImport): SampleRow[] {
  const namesOf = stackNames(result);
  const metricName = new Map(result.tables.metrics.map((m) => [m.metric_id, String(m.name)]));
  return result.tables.samples.map((s) => ({
    stack: namesOf(s.stack_id).join(";"),
    metric: metricName.get(s.metric_id)!,
    value: s.value as number,
    time: s.time_ns as number | null,
    track: s.track_id as number | null,
  }));
}

/** Sample values summed per metric name, then per "root;…;leaf" stack. */
export function totalsByStack(result: MemoryImport): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const { metric, stack, value } of sampleRows(result)) {
    const stacks = (out[metric] ??= {});
    stacks[stack] = (stacks[stack] ?? 0) + value;
  }
  return out;
}

/** A real file from test/fixtures/peer (speedscope's sample corpus), by its path there. */
export function peerFixture(relativePath: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(import.meta.dirname, "..", "fixtures", "peer", relativePath)));
}

/**
 * A function that writes a fixture file (objects as JSON) into a fresh temp directory and reads it
 * back, as the import service would hand it over.
 */
export function fixtureWriter(prefix: string): (name: string, content: string | Uint8Array | object) => Uint8Array {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return (name, content) => {
    const file = path.join(dir, name);
    writeFileSync(file, typeof content === "string" || content instanceof Uint8Array ? content : JSON.stringify(content, null, 1));
    return new Uint8Array(readFileSync(file));
  };
}

/** The EvidenceParseError importing `input` throws; fails the test unless it throws one saying where (offset or line). */
export async function parseErrorOf(importer: FormatImporter, input: string | Uint8Array): Promise<EvidenceParseError> {
  const error = await importToMemory(importer, input).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EvidenceParseError);
  const parseError = error as EvidenceParseError;
  expect(parseError.at.offset !== undefined || parseError.at.line !== undefined).toBe(true);
  return parseError;
}
