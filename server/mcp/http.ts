import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import { checkLoopbackRequest } from "../http/guard";
import type { WorkspaceLocator } from "../store/layout";
import { createHash } from "node:crypto";
import { verifyAgentToken } from "../services/agent-access";
import { heldWorkspace } from "./held-workspace";
import { createEmberscopeMcpServer } from "./server";

/**
 * The Streamable HTTP endpoint (/api/mcp), stateless: a new server and transport per request.
 * Before any MCP processing it refuses a foreign Host or Origin (403) and a missing or wrong
 * bearer token (401). Agent access (off at launch) is then checked per tool call.
 */

function refusal(status: 401 | 403, error: EmberscopeError): Response {
  const doc = error.toDocument();
  return Response.json(
    { jsonrpc: "2.0", id: null, error: { code: -32001, message: doc.message, data: doc } },
    { status, headers: status === 401 ? { "WWW-Authenticate": 'Bearer realm="emberscope"' } : {} },
  );
}

function bearerOf(req: Request): string | null {
  const header = req.headers.get("authorization") ?? "";
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
  params?: { name?: string; requestId?: string | number; _meta?: { progressToken?: unknown } };
}

function messagesOf(body: unknown): RpcMessage[] {
  return (Array.isArray(body) ? body : [body]).filter((m): m is RpcMessage => !!m && typeof m === "object");
}

function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !== undefined);
}

/** JSON-RPC messages are small; a larger body is refused before it is parsed. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/** The body of a Web request as JSON, refused (BodyTooLarge) past MAX_MCP_BODY_BYTES. */
async function readLimitedJson(req: Request): Promise<unknown> {
  if (Number(req.headers.get("content-length") ?? 0) > MAX_MCP_BODY_BYTES) throw new BodyTooLarge(MAX_MCP_BODY_BYTES);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_MCP_BODY_BYTES) {
        await reader.cancel();
        throw new BodyTooLarge(MAX_MCP_BODY_BYTES);
      }
      chunks.push(value);
    }
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/**
 * Answers one request. `readBody` reads a POST body already taken off the socket (the Node entry in
 * `node-http.ts`); by default the Web request's own body is read. Either way it is read only after
 * the Host/Origin and token checks have passed.
 */
export async function handleMcpHttpRequest(req: Request, locator: WorkspaceLocator, readBody: () => Promise<unknown> = () => readLimitedJson(req)): Promise<Response> {
  try {
    checkLoopbackRequest(req.headers);
  } catch (error) {
    return refusal(403, toEmberscopeError(error));
  }
  const token = bearerOf(req);
  const ws = heldWorkspace(locator);
  if (!token || !ws || !verifyAgentToken(ws, token)) {
    return refusal(
      401,
      new EmberscopeError("UNAUTHORIZED", "A valid bearer token is required: a person runs `emberscope mcp token` and gives it to the agent.", {
        details: { reason: token ? "token_rejected" : "token_missing" },
      }),
    );
  }
  let body: unknown;
  if (req.method === "POST") {
    try {
      body = await readBody();
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: `The request body exceeds ${error.limit} bytes.` } }, { status: 413 });
      }
      return Response.json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the body must be JSON-RPC." } }, { status: 400 });
    }
  }
  const caller = createHash("sha256").update(token).digest("hex").slice(0, 16);
  for (const m of messagesOf(body)) {
    if (m.method === "notifications/cancelled" && m.params?.requestId !== undefined) inflight.get(`${caller}:${m.params.requestId}`)?.abort();
  }
  const mine = messagesOf(body).filter((m) => m.method === "tools/call" && m.id !== undefined).map((m) => `${caller}:${m.id}`);
  for (const key of mine) inflight.set(key, new AbortController());
  const server = createEmberscopeMcpServer({
    locator,
    transport: "http",
    requireAccessSwitch: true,
    heldWorkspace: () => heldWorkspace(locator),
    cancellationFor: (id) => inflight.get(`${caller}:${id}`)?.signal,
    callEnded: (id) => inflight.delete(`${caller}:${id}`),
  });
  // Plain JSON answers unless the client asked for progress, which needs an event stream.
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body });
    // Loopback answers gain nothing from gzip (the app's compression would spend CPU on both ends
    // and buffer progress events); no-store: tool results are live answers, never cached.
    response.headers.set("Cache-Control", "no-store, no-transform");
    return response;
  } catch (error) {
    for (const key of mine) inflight.delete(key);
    throw error;
  }
}
