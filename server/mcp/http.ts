import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { EmberscopeError } from "../domain/errors";
import { MAX_MCP_BODY_BYTES, refusalBody, refusalOf, type HeaderReader } from "../http/guard";
import { readBoundedBody } from "../http/bounded-body";
import type { WorkspaceLocator } from "../store/layout";
import { createHash } from "node:crypto";
import { verifyAgentToken } from "../services/agent-access";
import { heldWorkspace } from "./held-workspace";
import { createEmberscopeMcpServer } from "./server";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Workspace } from "../store/workspace";

/**
 * The Streamable HTTP endpoint (/api/mcp), stateless: a new server and transport per request.
 * Before any MCP processing the boundary (`server/http/guard.ts`) refuses a foreign Host, a
 * `null` or foreign Origin, another site's page (403) and a declared body over the bound (413);
 * then a missing or wrong bearer token is refused (401). Agent access (off at launch) is then
 * checked per tool call.
 */

export { MAX_MCP_BODY_BYTES, type HeaderReader };

/** A whole (not streamed) answer: status, headers (lower-case names) and a body, or none. */
export interface McpReply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export function jsonReply(status: number, payload: unknown, headers: Record<string, string> = {}): McpReply {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(payload) };
}

export function toWebResponse(reply: McpReply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** Tool results are live answers (never cached) and gain nothing from gzip on loopback. */
export const NO_STORE = "no-store, no-transform";

function refusal(status: 401 | 403, error: EmberscopeError): McpReply {
  const doc = error.toDocument();
  return jsonReply(status, { jsonrpc: "2.0", id: null, error: { code: -32001, message: doc.message, data: doc } }, status === 401 ? { "www-authenticate": 'Bearer realm="emberscope"' } : {});
}

function bearerOf(headers: HeaderReader): string | null {
  const header = headers.get("authorization") ?? "";
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match ? match[1] : null;
}

/** Thrown by a body reader when a request body passes its size bound (answered 413). */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body over ${limit} bytes`);
  }
}

/** Long tool calls in flight, by token and JSON-RPC id, so a later `notifications/cancelled` reaches them. */
const inflight = new Map<string, AbortController>();

interface RpcMessage {
  id?: string | number;
  method?: string;
  params?: { name?: string; requestId?: string | number; _meta?: { progressToken?: unknown }; clientInfo?: { name?: unknown } };
}

/**
 * The client name of each token's latest `initialize`, as stateless HTTP answers the client's
 * later calls in fresh servers that never saw its handshake (what an agent writes is marked with it).
 */
const clientNames = new Map<string, string>();
const MAX_CLIENT_NAMES = 1000;

function rememberClient(caller: string, messages: RpcMessage[]): void {
  for (const m of messages) {
    const name = m.method === "initialize" ? m.params?.clientInfo?.name : undefined;
    if (typeof name !== "string") continue;
    clientNames.delete(caller);
    if (clientNames.size >= MAX_CLIENT_NAMES) clientNames.delete(clientNames.keys().next().value!);
    clientNames.set(caller, name.slice(0, 200));
  }
}

function messagesOf(body: unknown): RpcMessage[] {
  return (Array.isArray(body) ? body : [body]).filter((m): m is RpcMessage => !!m && typeof m === "object");
}

export function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !== undefined);
}

/** The body of a Web request as JSON, refused (BodyTooLarge) past MAX_MCP_BODY_BYTES. */
async function readLimitedJson(req: Request): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedBody(req, MAX_MCP_BODY_BYTES);
  } catch (error) {
    if (error instanceof EmberscopeError && error.code === "REQUEST_TOO_LARGE") throw new BodyTooLarge(MAX_MCP_BODY_BYTES);
    throw error;
  }
  return JSON.parse(Buffer.from(bytes).toString("utf8"));
}

/** A request that passed the Host/Origin and token checks: the workspace it may use, and who asks. */
export interface Admitted {
  ws: Workspace;
  /** Short digest of the bearer token: correlates a client's cancellation with its calls. */
  caller: string;
}

/**
 * The boundary (Host, Origin, fetch metadata, declared body size), then the bearer token (401):
 * run on every request before its body is read. The token is checked against the hash stored
 * now, so a rotation applies to the next request. `servedPort` is the port the request came to
 * (null where the launch session knows it: on `emberscope serve`). `boundaryPassed`: the caller
 * ran the same boundary on this very request already (`emberscope serve` runs it on every request).
 */
export function admitMcpRequest(
  headers: HeaderReader,
  locator: WorkspaceLocator,
  method = "POST",
  servedPort: number | null = null,
  boundaryPassed = false,
): { admitted: Admitted } | { refused: McpReply } {
  const boundary = boundaryPassed ? null : refusalOf({ method, path: "/api/mcp", headers, servedPort });
  if (boundary) {
    return { refused: jsonReply(boundary.status, refusalBody(boundary, "mcp"), boundary.status === 403 ? {} : { connection: "close" }) };
  }
  const token = bearerOf(headers);
  const ws = heldWorkspace(locator);
  if (!token || !ws || !verifyAgentToken(ws, token)) {
    return {
      refused: refusal(
        401,
        new EmberscopeError("UNAUTHORIZED", "A valid bearer token is required: a person runs `emberscope mcp token` and gives it to the agent.", {
          details: { reason: token ? "token_rejected" : "token_missing" },
        }),
      ),
    };
  }
  return { admitted: { ws, caller: createHash("sha256").update(token).digest("hex").slice(0, 16) } };
}

/** A POST body read by `readBody`, or the 413 / 400 answer when it is too large or not JSON. */
export async function readMcpBody(readBody: () => Promise<unknown>): Promise<{ body: unknown } | { refused: McpReply }> {
  try {
    return { body: await readBody() };
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      const doc = new EmberscopeError("REQUEST_TOO_LARGE", `The request body exceeds ${error.limit} bytes.`, { details: { limit: error.limit } }).toDocument();
      return { refused: jsonReply(413, { jsonrpc: "2.0", id: null, error: { code: -32600, message: doc.message, data: doc } }, { connection: "close" }) };
    }
    return { refused: jsonReply(400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the body must be JSON-RPC." } }) };
  }
}

/**
 * The MCP server for one request: the request's workspace handle (one per request, not looked up
 * again per call), and the correlation of a later `notifications/cancelled` with its tool calls.
 * `forget` drops that correlation when the request fails before its calls end.
 */
export function mcpServerForRequest(locator: WorkspaceLocator, admitted: Admitted, body: unknown): { server: Server; forget: () => void } {
  const { ws, caller } = admitted;
  for (const m of messagesOf(body)) {
    if (m.method === "notifications/cancelled" && m.params?.requestId !== undefined) inflight.get(`${caller}:${m.params.requestId}`)?.abort();
  }
  rememberClient(caller, messagesOf(body));
  const mine = messagesOf(body).filter((m) => m.method === "tools/call" && m.id !== undefined).map((m) => `${caller}:${m.id}`);
  for (const key of mine) inflight.set(key, new AbortController());
  const server = createEmberscopeMcpServer({
    locator,
    transport: "http",
    requireAccessSwitch: true,
    heldWorkspace: () => ws,
    cancellationFor: (id) => inflight.get(`${caller}:${id}`)?.signal,
    callEnded: (id) => inflight.delete(`${caller}:${id}`),
    clientName: () => clientNames.get(caller) ?? null,
  });
  return { server, forget: () => mine.forEach((key) => inflight.delete(key)) };
}

/**
 * Answers one request with the SDK's Web-standard transport (the app route, and on `emberscope
 * serve` the requests `node-http.ts` does not answer itself). `readBody` reads a POST body already
 * taken off the socket; by default the Web request's own body is read. Either way it is read only
 * after the Host/Origin and token checks have passed.
 */
export async function handleMcpHttpRequest(req: Request, locator: WorkspaceLocator, readBody: () => Promise<unknown> = () => readLimitedJson(req)): Promise<Response> {
  const url = new URL(req.url);
  const admission = admitMcpRequest(req.headers, locator, req.method, url.port ? Number(url.port) : null);
  if ("refused" in admission) return toWebResponse(admission.refused);
  let body: unknown;
  if (req.method === "POST") {
    const read = await readMcpBody(readBody);
    if ("refused" in read) return toWebResponse(read.refused);
    body = read.body;
  }
  const { server, forget } = mcpServerForRequest(locator, admission.admitted, body);
  // Plain JSON answers unless the client asked for progress, which needs an event stream.
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body });
    // The app's compression would spend CPU on both ends and buffer progress events.
    response.headers.set("Cache-Control", NO_STORE);
    return response;
  } catch (error) {
    forget();
    throw error;
  }
}
