import { recordSignIn, redeemStoredSignInCode } from "../../server/services";
import { consumeLaunchSignInCode, launchSession, personCookieHeader } from "../../server/http/session";
import { openWorkspace, type Workspace } from "../../server/store/workspace";
import { webServiceContext } from "../../server/trpc/context";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Only a path on this server (not `//host`, not `/\host`): the sign-in never sends a browser elsewhere. */
function localPath(raw: string | null): string {
  return raw && /^\/(?![/\\])/.test(raw) ? raw : "/";
}

function openOrNull(): Workspace | null {
  try {
    return openWorkspace(webServiceContext().locator);
  } catch {
    return null;
  }
}

/**
 * `/sign-in?code=…` — the link `emberscope serve` prints (or `emberscope serve link` makes): a
 * one-time code, traded here for the person's session cookie (HttpOnly, SameSite=Strict, for this
 * launch), then a redirect to the clean URL, so the code stays in neither the address bar nor a
 * referrer. A used or unknown code leads to Settings, which says how to get a new link.
 */
export async function GET(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const code = url.searchParams.get("code") ?? "";
  const session = launchSession();
  const ws = openOrNull();
  try {
    const signedIn = code !== "" && (consumeLaunchSignInCode(code, session) || (ws !== null && redeemStoredSignInCode(ws, session.launchId, code)));
    const headers = new Headers({ "cache-control": "no-store", "referrer-policy": "no-referrer" });
    if (!signedIn) {
      headers.set("location", "/settings?sign_in=refused");
      return new Response(null, { status: 303, headers });
    }
    if (ws) recordSignIn(ws);
    headers.set("location", localPath(url.searchParams.get("next")));
    headers.append("set-cookie", personCookieHeader(session.servedPort ?? (url.port || 80), session));
    return new Response(null, { status: 303, headers });
  } finally {
    ws?.close();
  }
}
