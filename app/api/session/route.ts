import { CSRF_HEADER } from "../../../server/http/header-names";
import { isPersonRequest, launchSession } from "../../../server/http/session";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * The workbench's pages ask here for the CSRF token they send with every state-changing request,
 * and whether this browser is signed in as the person. Same-origin only: there is no CORS, so
 * another site's page cannot read the answer, and the boundary refuses a rebinding host name.
 */
export function GET(req: Request): Response {
  return Response.json(
    { csrf_token: launchSession().csrfToken, csrf_header: CSRF_HEADER, person: isPersonRequest(req.headers) },
    { headers: { "cache-control": "no-store" } },
  );
}
