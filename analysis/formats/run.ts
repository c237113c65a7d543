import { EvidenceBuilder, MemorySink, type EvidenceSummary } from "../evidence/builder";
import type { TableName } from "../evidence/schema";
import { EmptyEvidenceError } from "./errors";
import { DEFAULT_IMPORT_LIMITS, type FormatImporter, type ImportContext, type ImportLimits, type ImportSource, type SplittableInput } from "./types";

/**
 * Runs an importer over its input: the one way every import parses (server and memory alike). An
 * input that yields no samples, spans or measurements fails with EmptyEvidenceError, whatever the
 * importer, so that no run succeeds silently empty.
 */
export async function parseEvidence(importer: FormatImporter, ctx: ImportContext): Promise<void> {
  await importer.parse(ctx);
  if (!ctx.builder.hasEvidence) throw new EmptyEvidenceError(importer.id, ctx.builder.limitationList);
}

/** An in-memory input, handed out in chunks like a file would be. */
export function sourceFromBytes(input: Uint8Array | string, fileName: string | null = null, chunkSize = 64 * 1024): ImportSource {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input) : input;
  return {
    fileName,
    async *chunks(options) {
      // Asked to reuse memory, it hands out the chunks in two buffers in turn and writes junk over
      // a chunk's bytes as soon as the next is asked for (see ImportSource.chunks): a reader that
      // keeps a view of a chunk too long reads the wrong bytes.
      const buffers = options?.reuse ? [new Uint8Array(chunkSize), new Uint8Array(chunkSize)] : null;
      for (let i = 0, turn = 0; i < bytes.length; i += chunkSize, turn ^= 1) {
        const chunk = bytes.subarray(i, Math.min(bytes.length, i + chunkSize));
        if (!buffers) {
          yield chunk;
          continue;
        }
        buffers[turn ^ 1].fill(0x7e);
        buffers[turn].set(chunk);
        yield buffers[turn].subarray(0, chunk.length);
      }
    },
  };
}

export interface MemoryImport {
  tables: Record<TableName, Record<string, unknown>[]>;
  summary: EvidenceSummary;
}

/** Runs one importer over an in-memory input and returns the rows (tests, the browser, small files). */
export async function importToMemory(
  importer: FormatImporter,
  input: Uint8Array | string,
  options: { fileName?: string | null; limits?: Partial<ImportLimits>; chunkSize?: number; split?: SplittableInput } = {},
): Promise<MemoryImport> {
  const sink = new MemorySink();
  const builder = new EvidenceBuilder(sink, 1024, importer.id);
  await parseEvidence(importer, {
    source: sourceFromBytes(input, options.fileName ?? null, options.chunkSize),
    builder,
    limits: { ...DEFAULT_IMPORT_LIMITS, ...options.limits },
    split: options.split,
  });
  const summary = await builder.finish();
  return { tables: sink.tables, summary };
}
