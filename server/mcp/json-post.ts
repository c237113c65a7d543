import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { MAX_BATCH_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { isInitializeRequest, isJSONRPCRequest, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { jsonReply, type HeaderReader, type McpReply } from "./http";

/**
 * A stateless Streamable HTTP POST answered with plain JSON, without Web `Request`/`Response`
 * objects or their streams: what `emberscope serve` does for every call that did not ask for
 * progress. The checks and answers are those of the SDK's `WebStandardStreamableHTTPServerTransport`
 * in stateless JSON mode (406 without both media types in Accept, 415 unless the body is JSON,
 * 400 for an oversized batch, a message that is not JSON-RPC, two initializations in one batch or
 * an unsupported MCP-Protocol-Version, 202 for notifications alone, else every request's response
 * in one JSON body) — test/mcp/json-post.test.ts holds the two to the same answers. The messages
 * go through the SDK's own `Server` (its request and result schemas) exactly as they would there.
 */

function jsonRpcError(status: number, code: number, message: string): McpReply {
  return jsonReply(status, { jsonrpc: "2.0", error: { code, message }, id: null });
}

/** Collects the responses to one POST's requests; everything else a server sends has nowhere to go without an event stream. */
class JsonReplyTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly responses = new Map<RequestId, JSONRPCMessage | null>();
  private answered: (messages: JSONRPCMessage[]) => void = () => undefined;
  readonly replies = new Promise<JSONRPCMessage[]>((resolve) => (this.answered = resolve));

  expect(id: RequestId): void {
    this.responses.set(id, null);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isResponse = "id" in message && ("result" in message || "error" in message);
    const requestId = isResponse ? (message as { id: RequestId }).id : options?.relatedRequestId;
    // A notification unrelated to a request (no standalone stream in stateless mode) is dropped.
    if (requestId === undefined) return;
    if (!this.responses.has(requestId)) throw new Error(`No connection established for request ID: ${String(requestId)}`);
    // Progress for a request answered as JSON is dropped too: the client asked for no stream.
    if (!isResponse) return;
    this.responses.set(requestId, message);
    const all = [...this.responses.values()];
    if (all.every((m) => m !== null)) {
      this.responses.clear();
      this.answered(all as JSONRPCMessage[]);
    }
  }
}

/** Answers one POST whose body was already parsed (and passed the endpoint's own checks) with `server`. */
export async function answerJsonPost(server: Server, headers: HeaderReader, raw: unknown): Promise<McpReply> {
  const accept = headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
    return jsonRpcError(406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream");
  }
  if (!isJsonContentType(headers.get("content-type"))) {
    return jsonRpcError(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
  }
  if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE) {
    return jsonRpcError(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
  }
  let messages: JSONRPCMessage[];
  try {
    messages = (Array.isArray(raw) ? raw : [raw]).map((m) => JSONRPCMessageSchema.parse(m));
  } catch {
    return jsonRpcError(400, -32700, "Parse error: Invalid JSON-RPC message");
  }
  if (messages.some(isInitializeRequest)) {
    if (messages.length > 1) return jsonRpcError(400, -32600, "Invalid Request: Only one initialization request is allowed");
  } else {
    const version = headers.get("mcp-protocol-version");
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return jsonRpcError(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`);
    }
  }
  const transport = new JsonReplyTransport();
  await server.connect(transport);
  const requests = messages.filter(isJSONRPCRequest);
  if (!requests.length) {
    for (const message of messages) transport.onmessage?.(message);
    return { status: 202, headers: {}, body: null };
  }
  for (const request of requests) transport.expect(request.id);
  for (const message of messages) transport.onmessage?.(message);
  const replies = await transport.replies;
  return jsonReply(200, replies.length === 1 ? replies[0] : replies);
}
