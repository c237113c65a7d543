import { toEmberscopeError } from "../../../server/domain/errors";

const STATUS: Record<string, number> = { usage: 400, workspace: 412, not_found: 404, input: 422, conflict: 409, process: 422, access: 403, resource: 429, internal: 500 };

/** A typed error as a JSON response: the document under `error`, HTTP status by family. */
export function errorResponse(thrown: unknown): Response {
  const error = toEmberscopeError(thrown);
  const status = error.code === "UNAUTHORIZED" ? 403 : (STATUS[error.family] ?? 500);
  return Response.json({ error: error.toDocument() }, { status, headers: { "Cache-Control": "no-store" } });
}
