import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import { checkLoopbackRequest } from "../http/guard";
import type { WorkspaceLocator } from "../store/layout";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { openWorkspace, type Workspace } from "../store/workspace";
import { verifyAgentToken } from "../services/agent-access";
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

/**
 * One workspace handle per project kept open for the server's life: token checks, the access
 * switch and audit writes use it, and while it is open the services' own short-lived connections
 * close without a WAL checkpoint each.
 */
const held = new Map<string, Workspace>();

function heldWorkspace(locator: WorkspaceLocator): Workspace | null {
  const key = JSON.stringify(locator);
  const ws = held.get(key);
  if (ws?.db.open && existsSync(ws.layout.database)) return ws;
  if (ws) held.delete(key);
  try {
    const opened = openWorkspace(locator);
    held.set(key, opened);
    return opened;
  } catch {
    return null;
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

export async function handleMcpHttpRequest(req: Request, locator: WorkspaceLocator): Promise<Response> {
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
      body = await req.json();
    } catch {
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
    return await transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body });
  } catch (error) {
    for (const key of mine) inflight.delete(key);
    throw error;
  }
}
