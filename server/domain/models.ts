import { z } from "zod";

/** Zod models of the records every transport returns. Names match the CLI's JSON output. */

export const Sensitivity = z.enum(["normal", "internal", "sensitive"]);
export type Sensitivity = z.infer<typeof Sensitivity>;

export const RunKind = z.enum(["import", "capture", "extraction"]);
export const RunStatus = z.enum(["pending", "running", "succeeded", "failed", "cancelled"]);
export const StageState = z.enum(["not_applicable", "pending", "running", "succeeded", "failed", "cancelled"]);

export const Limitation = z.object({
  code: z.string(),
  message: z.string(),
});
export type Limitation = z.infer<typeof Limitation>;

export const Run = z.object({
  run_id: z.string(),
  kind: RunKind,
  source: z.string().describe("Source format for imports, adapter for captures."),
  title: z.string(),
  status: RunStatus,
  execution_state: StageState,
  capture_state: StageState,
  extraction_state: StageState,
  limitations: z.array(Limitation),
  details: z.record(z.string(), z.unknown()),
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Run = z.infer<typeof Run>;

export const Registration = z.object({
  registration_id: z.string(),
  artifact_id: z.string(),
  run_id: z.string(),
  kind: z.string(),
  producer: z.string(),
  media_type: z.string(),
  format: z.string().nullable(),
  file_name: z.string().nullable(),
  sensitivity: Sensitivity,
  created_at: z.string(),
});
export type Registration = z.infer<typeof Registration>;

export const Artifact = z.object({
  artifact_id: z.string(),
  size_bytes: z.number().int(),
  sensitivity: Sensitivity.describe("Effective: the highest of its registrations."),
  registrations: z.array(Registration),
  created_at: z.string(),
});
export type Artifact = z.infer<typeof Artifact>;

export const GenerationFile = z.object({
  table: z.string(),
  object_id: z.string(),
  size_bytes: z.number().int(),
  row_count: z.number().int(),
});
export type GenerationFile = z.infer<typeof GenerationFile>;

export const Generation = z.object({
  generation_id: z.string(),
  artifact_id: z.string(),
  run_id: z.string().nullable(),
  extractor: z.string(),
  extractor_version: z.string(),
  evidence_schema_version: z.number().int(),
  files: z.array(GenerationFile),
  created_at: z.string(),
});
export type Generation = z.infer<typeof Generation>;

export const Commit = z.object({
  commit_id: z.string(),
  seq: z.number().int(),
  parent_id: z.string().nullable(),
  message: z.string(),
  generation_count: z.number().int(),
  created_at: z.string(),
});
export type Commit = z.infer<typeof Commit>;

export const PinnedCommit = Commit.extend({
  generations: z.array(Generation),
});
export type PinnedCommit = z.infer<typeof PinnedCommit>;

/** Keyset page of a list: `next_cursor` is null on the last page; `truncated` says more exist. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    next_cursor: z.string().nullable(),
    truncated: z.boolean(),
    limit: z.number().int(),
  });
}

export const Limit = z.number().int().min(1).max(500).default(50);
export const CursorArg = z.string().min(1).max(2048).optional();
