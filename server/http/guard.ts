import { EmberscopeError } from "../domain/errors";

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

function isLoopbackOrigin(origin: string): boolean {
  try {
    return LOOPBACK_HOST.test(new URL(origin).host);
  } catch {
    return false;
  }
}

/**
 * Refuses requests that did not come from a loopback page: a foreign Host (DNS rebinding)
 * or a foreign Origin (a web page elsewhere posting to the local server). With `sameOrigin`
 * (the workbench's own API), a page must also come from this very server — not from another
 * program listening on another loopback port.
 */
export function checkLoopbackRequest(headers: { get(name: string): string | null }, options: { sameOrigin?: boolean } = {}): void {
  const host = headers.get("host") ?? "";
  if (!LOOPBACK_HOST.test(host)) {
    throw new EmberscopeError("UNAUTHORIZED", "Requests must address the server by a loopback host name.", {
      details: { reason: "host_not_loopback" },
    });
  }
  const origin = headers.get("origin");
  if (origin !== null && origin !== "null" && !isLoopbackOrigin(origin)) {
    throw new EmberscopeError("UNAUTHORIZED", "Cross-origin requests from non-loopback pages are refused.", {
      details: { reason: "origin_not_loopback" },
    });
  }
  if (options.sameOrigin && origin !== null && origin !== "null" && new URL(origin).host.toLowerCase() !== host.toLowerCase()) {
    throw new EmberscopeError("UNAUTHORIZED", "The workbench API answers only pages it served itself.", {
      details: { reason: "origin_not_same" },
    });
  }
}
