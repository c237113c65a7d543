import { Agent, request } from "node:http";

/**
 * A minimal MCP client over Streamable HTTP for load generation: `initialize`, then `tools/call`
 * JSON-RPC POSTs on keep-alive sockets, with the headers the spec requires (Accept for JSON and
 * event streams, Content-Type, MCP-Protocol-Version after initialization, the bearer token). It
 * spends far less CPU per call than the SDK's `Client` (no zod, no Web streams), so on a machine
 * whose cores the load generator shares, figures measured with it are mostly the server's.
 */

export const LEAN_PROTOCOL_VERSION = "2025-06-18";

export interface LeanCallResult {
  /** A CallToolResult without isError. */
  ok: boolean;
  /** The JSON-RPC result (a CallToolResult), or the JSON-RPC error when the request failed. */
  result?: { isError?: boolean; content?: unknown[]; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

export class LeanMcpClient {
  private nextId = 1;
  private protocolVersion: string | null = null;
  private readonly endpoint: URL;

  constructor(
    baseUrl: string,
    private readonly token: string,
    /** One keep-alive socket per client, like an agent's HTTP client. */
    private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 }),
  ) {
    this.endpoint = new URL("/api/mcp", baseUrl);
  }

  private post(message: Record<string, unknown>): Promise<{ status: number; contentType: string; body: string }> {
    const body = JSON.stringify(message);
    const headers: Record<string, string> = {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      authorization: `Bearer ${this.token}`,
    };
    if (this.protocolVersion) headers["mcp-protocol-version"] = this.protocolVersion;
    return new Promise((resolve, reject) => {
      const req = request(this.endpoint, { method: "POST", headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.once("error", reject);
        res.once("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), body: Buffer.concat(chunks).toString("utf8") }));
      });
      req.once("error", reject);
      req.end(body);
    });
  }

  /** The JSON-RPC response to a request: a JSON body, or the last `data:` event of an event stream. */
  private async rpc(method: string, params: Record<string, unknown>): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
    const id = this.nextId++;
    const reply = await this.post({ jsonrpc: "2.0", id, method, params });
    if (reply.status !== 200) return { error: { code: -reply.status, message: `HTTP ${reply.status}: ${reply.body.slice(0, 200)}` } };
    let text = reply.body;
    if (reply.contentType.startsWith("text/event-stream")) {
      const events = reply.body.split("\n").filter((line) => line.startsWith("data:"));
      text = (events.at(-1) ?? "").slice(5);
    }
    const message = JSON.parse(text) as { id?: unknown; result?: unknown; error?: { code: number; message: string } };
    if (message.id !== id) return { error: { code: -32603, message: `response id ${String(message.id)} for request ${id}` } };
    return message;
  }

  /** `initialize` and `notifications/initialized`, as the spec's lifecycle requires. */
  async initialize(): Promise<void> {
    const reply = await this.rpc("initialize", { protocolVersion: LEAN_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "emberscope-lean-bench", version: "1" } });
    const version = (reply.result as { protocolVersion?: string } | undefined)?.protocolVersion;
    if (!version) throw new Error(`initialize failed: ${reply.error?.message ?? "no protocolVersion"}`);
    this.protocolVersion = version;
    const note = await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    if (note.status !== 202) throw new Error(`notifications/initialized answered HTTP ${note.status}`);
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<LeanCallResult> {
    const reply = await this.rpc("tools/call", { name, arguments: args });
    const result = reply.result as LeanCallResult["result"];
    if (!result || !Array.isArray(result.content)) return { ok: false, error: reply.error ?? { code: -32603, message: "not a CallToolResult" } };
    return { ok: result.isError !== true, result };
  }

  close(): void {
    this.agent.destroy();
  }
}
