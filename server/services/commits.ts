import { getRun } from "../store/runs";
import { z } from "zod";
import { Commit, CursorArg, Limit, PinnedCommit, pageOf } from "../domain/models";
import { headCommit, listCommitRows, pin } from "../store/corpus";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

export const listCommits = defineService({
  name: "commits.list",
  summary: "List corpus commits (immutable snapshots), newest first; with run_id, only the commits that hold that run's evidence.",
  kind: "query",
  input: z.object({ limit: Limit, cursor: CursorArg, run_id: z.string().min(1).max(128).optional().describe("Only commits that hold this run's evidence (the commits a run page can pin).") }).strict(),
  output: pageOf(Commit),
  handler: (input, { ws }) =>
    keysetPage({
      ws,
      binding: { query: "commits.list", filters: input.run_id ? { run_id: input.run_id } : {}, order: "seq desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "commits.list", arguments: { limit: input.limit, ...(input.run_id ? { run_id: input.run_id } : {}) } },
      fetch: (after: [number] | null, limit) => {
        if (input.run_id) getRun(ws.db, input.run_id);
        return listCommitRows(ws.db, after?.[0] ?? null, limit, input.run_id ?? null);
      },
      keyOf: (commit): [number] => [commit.seq],
    }),
});

export const showCommit = defineService({
  name: "commits.get",
  summary: "Show one commit with exactly the generations and files visible in it.",
  kind: "query",
  input: z.object({ commit_id: z.string().min(1).max(128).describe('A commit id, or "HEAD".') }).strict(),
  output: PinnedCommit,
  handler: (input, { ws }) => pin(ws.db, input.commit_id),
});

export const showHead = defineService({
  name: "commits.head",
  summary: "Show the HEAD commit (the latest snapshot).",
  kind: "query",
  input: z.object({}).strict(),
  output: Commit,
  handler: (_input, { ws }) => headCommit(ws.db),
});
