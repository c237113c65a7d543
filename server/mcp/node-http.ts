import type { IncomingMessage, ServerResponse } from "node:http";
import type { WorkspaceLocator } from "../store/layout";
import { headerReader, pathOf } from "../http/node-gate";
import { admitMcpRequest, BodyTooLarge, handleMcpHttpRequest, MAX_MCP_BODY_BYTES, mcpServerForRequest, NO_STORE, readMcpBody, wantsProgress, type McpReply } from "./http";
import { answerJsonPost } from "./json-post";

/**
 * `/api/mcp` answered straight from the Node HTTP server of `emberscope serve`, ahead of Next's
 * router: the same checks (Host/Origin, bearer token, access switch) and the same MCP server as
 * the app route `app/api/mcp/route.ts`, minus the router and the response compression. A POST
 * that did not ask for progress (nearly every call) is answered as JSON straight from the Node
 * request (`json-post.ts`), without Web Request/Response objects and their streams; progress
 * streams, GET and DELETE go through the SDK's Web-standard transport (`handleMcpHttpRequest`).
 * The app route stays for `next dev` and any other host of the app.
 */

export const MCP_PATH = "/api/mcp";

export function isMcpRequest(url: string | undefined): boolean {
  return !!url && pathOf(url) === MCP_PATH;
}

/** The body as JSON; past MAX_MCP_BODY_BYTES it is refused (the answer closes the connection, which cuts the upload). */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_MCP_BODY_BYTES) {
        req.removeAllListeners("data");
        req.resume();
        reject(new BodyTooLarge(MAX_MCP_BODY_BYTES));
        return;
      }
      chunks.push(chunk);
    });
    req.once("error", reject);
    req.once("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
  });
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const streamed = (headers["content-type"] ?? "").startsWith("text/event-stream");
  if (!response.body || !streamed) {
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...headers, "content-length": String(body.length) });
    res.end(body);
    return;
  }
  // Progress notifications and the result arrive as events: pass each on as it comes.
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  let closed = false;
  res.once("close", () => {
    closed = true;
    void reader.cancel().catch(() => undefined);
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done || closed) break;
    // A client gone while the socket is full never drains: wait for whichever comes first.
    if (!res.write(value)) await new Promise<void>((resolve) => (res.once("drain", resolve), res.once("close", resolve)));
  }
  if (!closed) res.end();
}

function writeReply(reply: McpReply, res: ServerResponse): void {
  const body = reply.body === null ? Buffer.alloc(0) : Buffer.from(reply.body);
  res.writeHead(reply.status, { ...reply.headers, "content-length": String(body.length) });
  res.end(body);
}

/** Through the SDK's Web-standard transport (GET, DELETE, progress streams); `readBody` as in `handleMcpHttpRequest`. */
async function answerWeb(req: IncomingMessage, res: ServerResponse, locator: WorkspaceLocator, readBody: () => Promise<unknown>): Promise<void> {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  // The URL's host is not consulted (the guard reads the Host header), so a fixed base is enough.
  const request = new Request(new URL(req.url ?? MCP_PATH, "http://127.0.0.1"), { method: req.method, headers });
  await writeResponse(await handleMcpHttpRequest(request, locator, readBody), res);
}

/**
 * Answers one `/api/mcp` request on a Node server; never throws (a fault becomes a 500).
 * `boundaryPassed`: the server already ran the boundary (`admitNodeRequest`) on this request.
 */
export async function handleMcpNodeRequest(req: IncomingMessage, res: ServerResponse, locator: WorkspaceLocator, boundaryPassed = false): Promise<void> {
  try {
    if (req.method !== "POST") return await answerWeb(req, res, locator, () => readJson(req));
    const headers = headerReader(req.rawHeaders);
    const admission = admitMcpRequest(headers, locator, "POST", null, boundaryPassed);
    if ("refused" in admission) return writeReply(admission.refused, res);
    const read = await readMcpBody(() => readJson(req));
    if ("refused" in read) return writeReply(read.refused, res);
    // Progress needs an event stream: the SDK's transport (which checks admission again, cheaply).
    if (wantsProgress(read.body)) return await answerWeb(req, res, locator, async () => read.body);
    const { server, forget } = mcpServerForRequest(locator, admission.admitted, read.body);
    let reply: McpReply;
    try {
      reply = await answerJsonPost(server, headers, read.body);
    } catch (error) {
      forget();
      throw error;
    }
    writeReply({ ...reply, headers: { ...reply.headers, "cache-control": NO_STORE } }, res);
  } catch (error) {
    console.error("emberscope mcp: request failed:", error instanceof Error ? error.message : String(error));
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error." } }));
    } else {
      res.destroy();
    }
  }
}
