import { NextResponse, type NextRequest } from "next/server";
import { BOUNDARY_HEADERS, refusalOf, refusalResponse, routePolicy } from "./server/http/guard";

/**
 * The trust boundary for what Next serves: every page and route handler (server/http/guard.ts —
 * Host, Origin, fetch metadata, the CSRF token of a state-changing request, the declared body
 * size). `emberscope serve` runs the same check ahead of Next for every request; this file holds
 * the app to it under `next start` and `next dev` too.
 *
 * Not matched: the routes that read a body (/api/trpc, /api/imports, /api/mcp), because Next
 * buffers a request's body for a proxy and waits for all of it (an upload of gigabytes, or a
 * declared length that never comes); they run the same check themselves before reading it.
 */
export function proxy(request: NextRequest): Response {
  const path = request.nextUrl.pathname;
  const port = request.nextUrl.port;
  const refusal = refusalOf({ method: request.method, path, headers: request.headers, servedPort: port ? Number(port) : null });
  if (refusal) return refusalResponse(refusal, routePolicy(path).kind);
  const response = NextResponse.next();
  for (const [name, value] of Object.entries(BOUNDARY_HEADERS)) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: ["/((?!api/trpc|api/imports|api/mcp|_next/static|_next/image).*)"],
};
