import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { EmberscopeError, toEmberscopeError } from "../../../../server/domain/errors";
import { readBoundedBody } from "../../../../server/http/bounded-body";
import { MAX_TRPC_BODY_BYTES, refusalOfWebRequest, refusalResponse } from "../../../../server/http/guard";
import { webServiceContext } from "../../../../server/trpc/context";
import { appRouter } from "../../../../server/trpc/router";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;

/**
 * tRPC over HTTP. The boundary (server/http/guard.ts: Host, Origin, fetch metadata, the CSRF
 * token of a mutation, the declared size) comes first; a body must be JSON (415 otherwise) and is
 * read into memory only up to MAX_TRPC_BODY_BYTES (413, the rest never read). Whether the request
 * carries the person's session cookie reaches the services as `ServiceContext.person`.
 */
async function handler(req: Request): Promise<Response> {
  const refusal = refusalOfWebRequest(req);
  if (refusal) return refusalResponse(refusal, "trpc");
  let forwarded = req;
  if (req.method === "POST") {
    const declared = req.headers.get("content-length");
    const empty = declared === "0" || (declared === null && req.headers.get("transfer-encoding") === null);
    if (!empty && !JSON_TYPE.test(req.headers.get("content-type") ?? "")) {
      const error = new EmberscopeError("INVALID_ARGUMENTS", "tRPC bodies must be JSON (Content-Type: application/json).", { details: { argument: "content-type", expected: "application/json" } });
      return refusalResponse({ status: 415, error }, "trpc");
    }
    let body: Uint8Array;
    try {
      body = await readBoundedBody(req, MAX_TRPC_BODY_BYTES);
    } catch (error) {
      return refusalResponse({ status: 413, error: toEmberscopeError(error) }, "trpc");
    }
    forwarded = new Request(req.url, { method: "POST", headers: req.headers, body: body.length ? (body as BodyInit) : null });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: forwarded,
    router: appRouter,
    createContext: () => ({ service: webServiceContext(req.headers) }),
  });
}

export { handler as GET, handler as POST };
