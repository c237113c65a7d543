import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { heldWorkspace } from "../../server/mcp/held-workspace";
import { createEmberscopeMcpServer } from "../../server/mcp/server";
import { CLI } from "../helpers/cli";

/** An MCP client connected one of three ways; `call` returns the structured result or the typed error. */
export interface AgentClient {
  client: Client;
  call(tool: string, args?: Record<string, unknown>): Promise<ToolOutcome>;
  close(): Promise<void>;
}

export type ToolOutcome =
  | { ok: true; value: any; text: string; links: string[]; raw: CallToolResult }
  | { ok: false; error: { code: string; message: string; retryable: boolean; details: Record<string, unknown>; recovery?: { tool: string; arguments: Record<string, unknown>; safe_to_repeat: boolean } }; raw: CallToolResult };

function wrap(client: Client, close: () => Promise<void>): AgentClient {
  return {
    client,
    close,
    async call(tool, args = {}) {
      const raw = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
      const texts = raw.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text);
      if (raw.isError) return { ok: false, error: JSON.parse(texts[0]), raw };
      const links = raw.content.filter((c) => c.type === "resource_link").map((c) => (c as { uri: string }).uri);
      return { ok: true, value: raw.structuredContent, text: texts.join("\n"), links, raw };
    },
  };
}

/** With `held`, the server uses the process-wide held workspace handle, as the HTTP endpoint does. */
export async function memoryClient(projectRoot: string, options: { requireAccessSwitch?: boolean; held?: boolean } = {}): Promise<AgentClient> {
  const locator = { cwd: projectRoot, projectRoot };
  const server = createEmberscopeMcpServer({
    locator,
    transport: "memory",
    requireAccessSwitch: options.requireAccessSwitch ?? false,
    ...(options.held ? { heldWorkspace: () => heldWorkspace(locator) } : {}),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "emberscope-test", version: "1.0.0" });
  await client.connect(clientSide);
  return wrap(client, async () => {
    await client.close();
    await server.close();
  });
}

/** The real CLI (`emberscope mcp serve`) as a child process, spoken to over its stdin/stdout. */
export async function stdioClient(projectRoot: string, cwd = projectRoot): Promise<AgentClient & { stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "serve", "--project-root", projectRoot], cwd, stderr: "pipe", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } as Record<string, string> });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "emberscope-test", version: "1.0.0" });
  await client.connect(transport);
  return { ...wrap(client, () => client.close()), stderr: () => stderr };
}

export async function httpClient(baseUrl: string, token: string, headers: Record<string, string> = {}): Promise<AgentClient> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } } });
  const client = new Client({ name: "emberscope-test", version: "1.0.0" });
  await client.connect(transport);
  return wrap(client, () => client.close());
}

