import type { IncomingMessage, ServerResponse } from "node:http";
import type { WorkspaceLocator } from "../store/layout";
import { BodyTooLarge, handleMcpHttpRequest, MAX_MCP_BODY_BYTES } from "./http";

/**
 * `/api/mcp` answered straight from the Node HTTP server of `emberscope serve`, ahead of Next's
 * router: the same handler (`handleMcpHttpRequest`: Host/Origin, bearer token, access switch,
 * stateless SDK transport) as the app route `app/api/mcp/route.ts`, minus the router, the
 * request/response stream adapters and the response compression that cost more per call than a
 * cached tool answer itself. The app route stays for `next dev` and any other host of the app.
 */

export const MCP_PATH = "/api/mcp";

export function isMcpRequest(url: string | undefined): boolean {
  if (!url) return false;
  const query = url.indexOf("?");
  return (query < 0 ? url : url.slice(0, query)) === MCP_PATH;
}

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

/** Answers one `/api/mcp` request on a Node server; never throws (a fault becomes a 500). */
export async function handleMcpNodeRequest(req: IncomingMessage, res: ServerResponse, locator: WorkspaceLocator): Promise<void> {
  try {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    // The URL's host is not consulted (the guard reads the Host header), so a fixed base is enough.
    const request = new Request(new URL(req.url ?? MCP_PATH, "http://127.0.0.1"), { method: req.method, headers });
    const response = await handleMcpHttpRequest(request, locator, () => readJson(req));
    await writeResponse(response, res);
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
