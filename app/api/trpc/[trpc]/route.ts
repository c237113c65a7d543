import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { checkLoopbackRequest } from "../../../../server/http/guard";
import { webServiceContext } from "../../../../server/trpc/context";
import { appRouter } from "../../../../server/trpc/router";
import { toEmberscopeError } from "../../../../server/domain/errors";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

function handler(req: Request): Promise<Response> | Response {
  try {
    checkLoopbackRequest(req.headers, { sameOrigin: true });
  } catch (error) {
    const doc = toEmberscopeError(error).toDocument();
    return Response.json({ error: { message: doc.message, data: { error: doc } } }, { status: 403 });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => ({ service: webServiceContext() }),
  });
}

export { handler as GET, handler as POST };
