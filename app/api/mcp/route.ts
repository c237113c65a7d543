import { handleMcpHttpRequest } from "../../../server/mcp/http";
import { webServiceContext } from "../../../server/trpc/context";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** MCP over Streamable HTTP for local agents: loopback, bearer token, access switch (server/mcp/http.ts). */
function handler(req: Request): Promise<Response> {
  return handleMcpHttpRequest(req, webServiceContext().locator);
}

export { handler as GET, handler as POST, handler as DELETE };
