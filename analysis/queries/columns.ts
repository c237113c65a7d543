import { z } from "zod";

/** The generations a query reads: one pinned commit's generations of one run (or two, for compare). */
export const GenerationList = z.array(z.string().regex(/^gen_[0-9a-z]+$/)).max(1000);

/** The columns that identify and describe a frame in every frame-level result row. */
export const FrameColumns = z.object({
  frame_key: z.string(),
  name: z.string(),
  file: z.string().nullable(),
  line: z.number().int().nullable(),
  module: z.string().nullable(),
  kind: z.string(),
});
