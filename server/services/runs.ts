import { z } from "zod";
import { CursorArg, Limit, Run, RunKind, RunStatus, pageOf } from "../domain/models";
import { getRun, listRunRows } from "../store/runs";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

export const listRuns = defineService({
  name: "runs.list",
  summary: "List runs (imports and captures), newest first.",
  kind: "query",
  input: z
    .object({
      limit: Limit,
      cursor: CursorArg,
      kind: RunKind.optional(),
      status: RunStatus.optional(),
    })
    .strict(),
  output: pageOf(Run),
  handler: (input, { ws }) => {
    const filters = { kind: input.kind, status: input.status };
    return keysetPage({
      ws,
      binding: { query: "runs.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "runs.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listRunRows(ws.db, filters, after, limit),
      keyOf: (run): [string, string] => [run.created_at, run.run_id],
    });
  },
});

export const showRun = defineService({
  name: "runs.get",
  summary: "Show one run: its states, limitations and revision.",
  kind: "query",
  input: z.object({ run_id: z.string().min(1).max(128) }).strict(),
  output: Run,
  handler: (input, { ws }) => getRun(ws.db, input.run_id),
});
