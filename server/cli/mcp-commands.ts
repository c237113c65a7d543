import { EmberscopeError } from "../domain/errors";
import { agentAccessStatus, agentToken, callService, setAgentAccess, setAgentDetail, signInLink, type ServiceDef } from "../services";
import { recoverWorkspaceAt } from "../services/operations";
import { stringFlag } from "./args";
import { keyValues, table } from "./render";
import { requirePositionals, type CliCommand } from "./service-command";

/**
 * The MCP server's code, loaded by the commands that use it: the SDK takes 0.1–0.2 s to load,
 * which every other command (an import, a query) would pay at start-up. The CLI bundle is split,
 * so this module and the SDK arrive together when asked for.
 */
const mcpServer = () => import("../mcp/server");

const hint = (a: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean }) =>
  [a.readOnlyHint ? "read-only" : "writes", a.destructiveHint ? "destructive" : "", a.idempotentHint ? "idempotent" : "", a.openWorldHint ? "open-world" : ""].filter(Boolean).join(", ");

export const MCP_COMMANDS: CliCommand[] = [
  {
    path: ["mcp", "serve"],
    keepsRunning: true,
    summary: "Serve the MCP tools over stdio for one agent (stdout carries protocol only; starting it is consent to agent access).",
    options: {},
    positionals: [],
    services: [],
    execute: async (args, env) => {
      requirePositionals(args, []);
      // stdout belongs to the protocol: anything else that would print there goes to stderr.
      console.log = console.info = console.debug = (...parts: unknown[]) => console.error(...parts);
      // Agent paths (import_artifact) are read relative to the project root, whatever the shell's directory.
      const [{ createEmberscopeMcpServer, mcpProjectRoot }, { StdioServerTransport }] = await Promise.all([mcpServer(), import("@modelcontextprotocol/sdk/server/stdio.js")]);
      const root = mcpProjectRoot(env.ctx.locator);
      // As `serve` does on start: operations whose holder died end (INTERRUPTED), abandoned staging goes.
      await recoverWorkspaceAt({ cwd: root, projectRoot: root }, env.log);
      const server = createEmberscopeMcpServer({ locator: { cwd: root, projectRoot: root }, transport: "stdio", requireAccessSwitch: false });
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = () => resolve();
        process.stdin.once("end", () => resolve());
        process.once("SIGTERM", () => resolve());
        process.once("SIGINT", () => resolve());
      });
      await server.connect(transport);
      env.log("emberscope mcp: serving on stdio");
      await closed;
      await server.close().catch(() => undefined);
      return { document: { stopped: true }, human: "", exitCode: 0 };
    },
  },
  {
    path: ["mcp", "inspect"],
    summary: "Print the MCP catalog: tools (input and output schemas, annotations), resource templates.",
    options: {},
    positionals: [],
    services: [],
    execute: async (args) => {
      requirePositionals(args, []);
      const catalog = (await mcpServer()).mcpCatalog();
      const rows = catalog.tools.map((t) => ({ tool: t.name, service: t._meta["emberscope/service"], hints: hint(t.annotations) }));
      return {
        document: catalog,
        human: `${table(rows, ["tool", "service", "hints"])}\n\nResource templates: ${catalog.resource_templates.map((r) => r.uriTemplate).join(", ")}\nNo prompts.`,
        exitCode: 0,
      };
    },
  },
  {
    path: ["mcp", "token"],
    summary: "Show the workspace's MCP bearer token for /api/mcp (created on first use), or --rotate it; the token is alone on the last line.",
    options: { rotate: { type: "boolean", description: "Replace the token; the old one stops working at once." } },
    positionals: [],
    services: [agentToken as unknown as ServiceDef],
    execute: async (args, env) => {
      requirePositionals(args, []);
      const r = await callService(agentToken, env.ctx, { rotate: args.values.rotate === true });
      const lead = r.rotated ? "Rotated the MCP token; the previous one no longer works." : `MCP token (generation ${r.generation}, created ${r.created_at}).`;
      return {
        document: r,
        human: `${lead}\nSend it as \`Authorization: Bearer <token>\` to http://127.0.0.1:PORT/api/mcp; agent access must also be on (emberscope agent-access on).\n${r.token}`,
        exitCode: 0,
      };
    },
  },
  {
    path: ["agent-access"],
    summary: "Switch agent access on or off for the servers running now, or show it (every launch starts OFF).",
    options: { detail: { type: "string", valueName: "LEVEL", description: "Also set what agents see: redacted (default) or full." } },
    positionals: [{ name: "ACTION", description: "on, off or status." }],
    services: [agentAccessStatus, setAgentAccess, setAgentDetail] as unknown as ServiceDef[],
    execute: async (args, env) => {
      const [action] = requirePositionals(args, [{ name: "ACTION", description: "" }]);
      if (!["on", "off", "status"].includes(action)) {
        throw new EmberscopeError("INVALID_ARGUMENTS", "ACTION must be on, off or status.", { details: { argument: "ACTION" } });
      }
      const detail = stringFlag(args.values, "detail");
      if (detail !== undefined) await callService(setAgentDetail, env.ctx, { detail });
      const state =
        action === "status" ? await callService(agentAccessStatus, env.ctx, {}) : await callService(setAgentAccess, env.ctx, { enabled: action === "on" });
      const servers = state.servers.length
        ? state.servers.map((s) => `${s.url} (pid ${s.pid}, since ${s.started_at}): agents ${s.agent_access ? "answered" : "refused"}`).join("; ")
        : "none running (a server launched later starts with access off)";
      return {
        document: state,
        human: keyValues([
          ["agent access", state.enabled ? "on (for servers running now; a new launch starts off)" : state.enabled_at && !state.servers.length ? "off (no server is running)" : "off"],
          ["servers", servers],
          ["detail", state.detail],
          ["switched on at", state.enabled_at ?? "never"],
          ["token", state.token_generation ? `generation ${state.token_generation}, created ${state.token_created_at}` : "none yet (emberscope mcp token)"],
        ]),
        exitCode: 0,
      };
    },
  },
  {
    path: ["serve", "link"],
    summary: "Print a one-time sign-in link for each running `emberscope serve` of this project: opened in a browser, it signs that browser in as you (Settings' agent switches).",
    options: {},
    positionals: [],
    services: [signInLink as unknown as ServiceDef],
    execute: async (args, env) => {
      requirePositionals(args, []);
      const r = await callService(signInLink, env.ctx, {});
      return {
        document: r,
        human: r.servers.length
          ? r.servers.map((s) => `${s.url} (pid ${s.pid}), usable once until ${s.expires_at}:\n${s.sign_in_url}`).join("\n")
          : "No server is running for this project: start one with `emberscope serve` (it prints its own sign-in link).",
        exitCode: 0,
      };
    },
  },
];
