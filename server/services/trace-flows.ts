import { z } from "zod";
import { FlowRow, traceFlowsQuery } from "../../analysis/queries/trace-flows";
import { openEvidence } from "../evidence/engine";
import { runGenerationIds } from "./corpus";
import { defineService } from "./service";

export const traceFlows = defineService({
  name: "evidence.trace_flows",
  summary: "Flow edges of a run (arrows between spans) with an end in a time window.",
  kind: "query",
  input: z
    .object({
      run_id: z.string().min(1).max(128),
      start_ns: z.number().int(),
      end_ns: z.number().int(),
      limit: z.number().int().min(1).max(10_000).default(2000),
      commit_id: z.string().min(1).max(128).default("HEAD").describe('The commit to read; "HEAD" by default.'),
    })
    .strict()
    .refine((i) => i.end_ns > i.start_ns, { message: "end_ns must be after start_ns", path: ["end_ns"] }),
  output: z.object({ flows: z.array(FlowRow), truncated: z.boolean(), commit_id: z.string() }),
  handler: async (input, { ws }) => {
    const reader = await openEvidence(ws, input.commit_id);
    const generations = runGenerationIds(ws, reader.commit, input.run_id);
    const rows = generations.length
      ? await reader.run(traceFlowsQuery, { generations, start_ns: input.start_ns, end_ns: input.end_ns, limit: input.limit + 1 })
      : [];
    return { flows: rows.slice(0, input.limit), truncated: rows.length > input.limit, commit_id: reader.commit.commit_id };
  },
});
