import { z } from "zod";
import { Artifact, CursorArg, Limit, pageOf } from "../domain/models";
import { getArtifact, listArtifactRows } from "../store/artifacts";
import { keysetPage } from "./pagination";
import { defineService } from "./service";

export const listArtifacts = defineService({
  name: "artifacts.list",
  summary: "List stored artifacts (content-addressed native files) with their registrations.",
  kind: "query",
  input: z
    .object({
      limit: Limit,
      cursor: CursorArg,
      run_id: z.string().min(1).max(128).optional(),
    })
    .strict(),
  output: pageOf(Artifact),
  handler: (input, { ws }) => {
    const filters = { run_id: input.run_id };
    return keysetPage({
      ws,
      binding: { query: "artifacts.list", filters, order: "created_at desc, id desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "artifacts.list", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [string, string] | null, limit) => listArtifactRows(ws.db, filters, after, limit),
      keyOf: (artifact): [string, string] => [artifact.created_at, artifact.artifact_id],
    });
  },
});

export const showArtifact = defineService({
  name: "artifacts.get",
  summary: "Show one artifact's metadata and registrations (never its bytes).",
  kind: "query",
  input: z.object({ artifact_id: z.string().regex(/^sha256:[0-9a-f]{64}$/, "expected sha256:<64 hex>") }).strict(),
  output: Artifact,
  handler: (input, { ws }) => getArtifact(ws.db, input.artifact_id),
});
