import { EmberscopeError } from "../domain/errors";
import { DEFAULT_INPUT_BOUNDS } from "../evidence/input";
import { csrfVerdict, launchSession, type LaunchSession } from "./session";

/**
 * The trust boundary of every HTTP request, decided in one function (`refusalOf`) before a body
 * is read: `emberscope serve` runs it on every request ahead of Next and of /api/mcp
 * (`node-gate.ts`), `proxy.ts` runs it for the pages Next serves elsewhere (`next start`/`next
 * dev`), and the route handlers whose bodies Next's proxy must not buffer (/api/trpc,
 * /api/imports, /api/mcp) run it themselves. See docs/security.md.
 *
 * - Host must name this server: a loopback name or address and the served port (DNS rebinding).
 * - Origin, when sent, must be this very server (the MCP endpoint: any loopback page); `null` never.
 * - Fetch metadata: another site may link to a page (a top-level navigation) but not embed it,
 *   fetch from it or post to it.
 * - A state-changing request (any method but GET, HEAD, OPTIONS) must carry this launch's CSRF
 *   token in a header (the MCP endpoint has its bearer token instead).
 * - A body over the route's bound is refused by its Content-Length (413); only the upload and
 *   MCP endpoints accept a body without one (they stream it and cut it at the bound).
 */

/** A request's headers, any case: a Web `Headers`, or a Node request's headers read the same way. */
export interface HeaderReader {
  get(name: string): string | null;
}

/** The routes the boundary tells apart: each has its own body bound and origin rule. */
export type RouteKind = "mcp" | "upload" | "trpc" | "app";

export interface RoutePolicy {
  kind: RouteKind;
  /** The largest body accepted, in bytes. */
  maxBodyBytes: number;
  /** Whether a body without Content-Length (chunked) is accepted, to be cut at the bound while it is read. */
  streamsBody: boolean;
}

/** JSON-RPC messages are small; a larger body is refused before it is parsed. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;
/** tRPC inputs are small JSON documents (files go through /api/imports). */
export const MAX_TRPC_BODY_BYTES = 1024 * 1024;
/** Pages and the other routes take no body worth the name. */
export const MAX_APP_BODY_BYTES = 64 * 1024;

const POLICIES: Readonly<Record<RouteKind, RoutePolicy>> = {
  mcp: { kind: "mcp", maxBodyBytes: MAX_MCP_BODY_BYTES, streamsBody: true },
  upload: { kind: "upload", maxBodyBytes: DEFAULT_INPUT_BOUNDS.maxBytes, streamsBody: true },
  trpc: { kind: "trpc", maxBodyBytes: MAX_TRPC_BODY_BYTES, streamsBody: false },
  app: { kind: "app", maxBodyBytes: MAX_APP_BODY_BYTES, streamsBody: false },
};

/** Whether a path is `prefix` itself or below it. */
function under(pathname: string, prefix: string): boolean {
  return pathname.startsWith(prefix) && (pathname.length === prefix.length || pathname[prefix.length] === "/");
}

export function routePolicy(pathname: string): RoutePolicy {
  if (!pathname.startsWith("/api/")) return POLICIES.app;
  if (under(pathname, "/api/mcp")) return POLICIES.mcp;
  if (under(pathname, "/api/imports")) return POLICIES.upload;
  if (under(pathname, "/api/trpc")) return POLICIES.trpc;
  return POLICIES.app;
}

/** What the boundary answers instead of the route. */
export interface Refusal {
  status: 400 | 403 | 411 | 413 | 415;
  error: EmberscopeError;
}

export interface RequestFacts {
  method: string;
  /** The request target's path (a query string is ignored). */
  path: string;
  headers: HeaderReader;
  /** The port the server answers on; null when unknown (then any port is taken). */
  servedPort: number | null;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

function refused(status: Refusal["status"], code: "UNAUTHORIZED" | "INVALID_ARGUMENTS" | "REQUEST_TOO_LARGE" | "ARTIFACT_TOO_LARGE", message: string, details: Record<string, unknown>): Refusal {
  return { status, error: new EmberscopeError(code, message, { details }) };
}

interface Authority {
  hostname: string;
  port: number;
}

/** Host and Origin values seen, as parsed: they repeat on every request, and a URL parse costs microseconds. */
const seenHosts = new Map<string, Authority | null>();
const seenOrigins = new Map<string, Authority | null>();
const MAX_SEEN = 256;

function keep(seen: Map<string, Authority | null>, key: string, value: Authority | null): Authority | null {
  if (seen.size >= MAX_SEEN) seen.delete(seen.keys().next().value!);
  seen.set(key, value);
  return value;
}

function authorityOfUrl(text: string, originOnly: boolean): Authority | null {
  try {
    const url = new URL(text);
    if (originOnly && (url.protocol !== "http:" || url.pathname !== "/" || url.username || url.password)) return null;
    return { hostname: url.hostname, port: url.port === "" ? 80 : Number(url.port) };
  } catch {
    return null;
  }
}

/** A host as a URL would read it (lower case, IPv4 and IPv6 in their canonical forms), or null when it is not a bare host[:port]. */
function parseAuthority(authority: string): Authority | null {
  const seen = seenHosts.get(authority);
  if (seen !== undefined) return seen;
  const valid = authority !== "" && /^[A-Za-z0-9.\-:[\]]+$/.test(authority);
  return keep(seenHosts, authority, valid ? authorityOfUrl(`http://${authority}`, false) : null);
}

/** An Origin header's host and port, or null unless it is a plain `http://host[:port]`. */
function originOf(value: string): Authority | null {
  const seen = seenOrigins.get(value);
  return seen !== undefined ? seen : keep(seenOrigins, value, authorityOfUrl(value, true));
}

export function isLoopbackName(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

function hostAllowed(hostname: string, session: LaunchSession): boolean {
  return isLoopbackName(hostname) || session.extraHosts.includes(hostname);
}

/** The Host check alone (every route, pages too): a loopback name or address, and the served port. */
export function hostRefusal(headers: HeaderReader, servedPort: number | null, session = launchSession()): Refusal | null {
  const host = parseAuthority(headers.get("host") ?? "");
  if (!host || !hostAllowed(host.hostname, session)) {
    return refused(403, "UNAUTHORIZED", "Requests must address the server by a loopback host name.", { reason: "host_not_loopback" });
  }
  const port = session.servedPort ?? servedPort;
  if (port !== null && host.port !== port) {
    return refused(403, "UNAUTHORIZED", "The Host header names another port than this server's.", { reason: "host_port_mismatch" });
  }
  return null;
}

/**
 * Everything the boundary decides about a request before its body is read, or null when it may
 * go on to its route. The MCP endpoint's bearer token is checked after this, by the endpoint.
 */
export function refusalOf(facts: RequestFacts, session = launchSession()): Refusal | null {
  const { headers } = facts;
  const policy = routePolicy(facts.path);
  const hostRefused = hostRefusal(headers, facts.servedPort, session);
  if (hostRefused) return hostRefused;
  const host = parseAuthority(headers.get("host")!)!;
  const changing = isStateChanging(facts.method);

  const originHeader = headers.get("origin");
  if (originHeader !== null) {
    if (originHeader === "null") {
      return refused(403, "UNAUTHORIZED", "Requests from an opaque origin (Origin: null — a sandboxed frame, a file, a redirect) are refused.", { reason: "origin_null" });
    }
    const origin = originOf(originHeader);
    if (!origin || !hostAllowed(origin.hostname, session)) {
      return refused(403, "UNAUTHORIZED", "Cross-origin requests from non-loopback pages are refused.", { reason: "origin_not_loopback" });
    }
    if (policy.kind !== "mcp" && (origin.hostname !== host.hostname || origin.port !== host.port)) {
      return refused(403, "UNAUTHORIZED", "The workbench answers only pages it served itself.", { reason: "origin_not_same" });
    }
  }

  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    const navigation = headers.get("sec-fetch-mode") === "navigate" && (headers.get("sec-fetch-dest") ?? "document") === "document";
    const allowed = policy.kind === "mcp" ? site !== "cross-site" : !changing && navigation;
    if (!allowed) {
      return refused(403, "UNAUTHORIZED", "Another site's page may link to the workbench, but not embed it, read from it or change anything in it.", {
        reason: "cross_site",
        sec_fetch_site: site,
      });
    }
  }

  if (changing && policy.kind !== "mcp") {
    if (site !== null && site !== "same-origin") {
      return refused(403, "UNAUTHORIZED", "Changes are accepted only from the workbench's own pages.", { reason: "cross_site", sec_fetch_site: site });
    }
    // A browser that sends fetch metadata sends Origin with every POST; without it the request was rewritten on its way.
    if (originHeader === null && site !== null) {
      return refused(403, "UNAUTHORIZED", "A browser's state-changing request must carry its Origin.", { reason: "origin_missing" });
    }
    const csrf = csrfVerdict(headers, session);
    if (csrf === "missing") {
      return refused(403, "UNAUTHORIZED", "A state-changing request must carry the workbench's CSRF token (GET /api/session gives it to this server's own pages).", {
        reason: "csrf_token_missing",
      });
    }
    if (csrf === "invalid") {
      return refused(403, "UNAUTHORIZED", "The CSRF token is not this server's: it was restarted since the page loaded. Reload the page.", { reason: "csrf_token_invalid" });
    }
  }

  return bodyRefusal(headers, policy);
}

/** The body's bound, by its declared length: 413 before a byte is read, 411 for a chunked body where one is required. */
export function bodyRefusal(headers: HeaderReader, policy: RoutePolicy): Refusal | null {
  const length = headers.get("content-length");
  if (length !== null) {
    if (!/^\d+$/.test(length.trim())) return refused(400, "INVALID_ARGUMENTS", "The Content-Length header is not a number.", { argument: "content-length" });
    return Number(length) > policy.maxBodyBytes ? tooLarge(policy) : null;
  }
  if (headers.get("transfer-encoding") !== null && !policy.streamsBody) {
    return refused(411, "INVALID_ARGUMENTS", "This route needs the body's Content-Length.", { argument: "content-length", limit: policy.maxBodyBytes });
  }
  return null;
}

function tooLarge(policy: RoutePolicy): Refusal {
  return policy.kind === "upload"
    ? refused(413, "ARTIFACT_TOO_LARGE", `The file is larger than the ${policy.maxBodyBytes}-byte import limit.`, { bound: "size", limit: policy.maxBodyBytes })
    : refused(413, "REQUEST_TOO_LARGE", `The request body exceeds ${policy.maxBodyBytes} bytes.`, { limit: policy.maxBodyBytes });
}

/** tRPC's JSON-RPC code and name for each status the boundary answers with. */
const TRPC_SHAPES: Record<Refusal["status"], { code: number; name: string }> = {
  400: { code: -32600, name: "BAD_REQUEST" },
  403: { code: -32003, name: "FORBIDDEN" },
  411: { code: -32600, name: "BAD_REQUEST" },
  413: { code: -32013, name: "PAYLOAD_TOO_LARGE" },
  415: { code: -32015, name: "UNSUPPORTED_MEDIA_TYPE" },
};

/** The boundary's answer as a body its route's clients read: JSON-RPC for MCP, a tRPC error for tRPC, else `{ error }`. */
export function refusalBody(refusal: Refusal, kind: RouteKind): unknown {
  const doc = refusal.error.toDocument();
  if (kind === "mcp") return { jsonrpc: "2.0", id: null, error: { code: refusal.status === 413 ? -32600 : -32001, message: doc.message, data: doc } };
  if (kind === "trpc") {
    const trpc = TRPC_SHAPES[refusal.status];
    return { error: { message: doc.message, code: trpc.code, data: { code: trpc.name, httpStatus: refusal.status, error: doc } } };
  }
  return { error: doc };
}

/** Headers on every answer: no framing by another page, no sniffing, nothing read by another origin. */
export const BOUNDARY_HEADERS: Readonly<Record<string, string>> = {
  "x-frame-options": "DENY",
  "content-security-policy": "frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "same-origin",
  // No page of the workbench has a reason to tell another site where it came from (nor a sign-in link its code).
  "referrer-policy": "no-referrer",
};

/** A refusal as a Web `Response` (route handlers and proxy.ts). */
export function refusalResponse(refusal: Refusal, kind: RouteKind): Response {
  return Response.json(refusalBody(refusal, kind), {
    status: refusal.status,
    headers: { ...BOUNDARY_HEADERS, "cache-control": "no-store", ...(refusal.status === 403 ? {} : { connection: "close" }) },
  });
}

/** The boundary for a Web `Request` in a route handler: the served port is the one the request was addressed to by Next. */
export function refusalOfWebRequest(req: Request): Refusal | null {
  const url = new URL(req.url);
  return refusalOf({ method: req.method, path: url.pathname, headers: req.headers, servedPort: url.port ? Number(url.port) : null });
}
