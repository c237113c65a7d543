import { createServer } from "node:http";
import { EmberscopeError } from "../domain/errors";
import { locateWorkspace, projectRootForInit, displayPath } from "../store/layout";
import { initWorkspace, openWorkspace } from "../store/workspace";
import { existsSync } from "node:fs";
import { recoverInterruptedWork } from "../services/operations";
import { defaultWorkerCount, startSupervisor } from "../../workers/supervisor";
import { layoutFor } from "../store/layout";
import { integerFlag, stringFlag } from "./args";
import type { CliCommand, CliEnv } from "./service-command";
import { isAppBuilt, PACKAGE_ROOT } from "../package-root";

/** How long requests still being answered at SIGTERM/SIGINT may take before their connections are cut. */
const STOP_GRACE_MS = 2000;

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Runs the built Next.js app in this process for one project root, bound to loopback.
 * The app reads the project root from EMBERSCOPE_PROJECT_ROOT; everything it serves goes
 * through the same services as this CLI.
 */
/**
 * The project root to serve. With --init a missing workspace is created; without it the server
 * still starts, and the home page offers the recovery (create the workspace).
 */
async function prepareWorkspace(env: CliEnv, init: boolean): Promise<string> {
  let projectRoot: string;
  try {
    projectRoot = locateWorkspace(env.ctx.locator).projectRoot;
  } catch (error) {
    if (!(error instanceof EmberscopeError && error.code === "WORKSPACE_NOT_FOUND")) throw error;
    projectRoot = projectRootForInit(env.ctx.locator);
    if (!init) {
      env.log(`No workspace in ${displayPath(projectRoot, env.ctx.locator.cwd)} yet: the home page offers to create it (or run emberscope init).`);
      return projectRoot;
    }
    initWorkspace(projectRoot).close();
    env.log(`Initialized a workspace in ${displayPath(projectRoot, env.ctx.locator.cwd)}/.emberscope`);
  }
  const ws = openWorkspace({ cwd: projectRoot, projectRoot });
  try {
    await recoverInterruptedWork(ws, env.log);
  } finally {
    ws.close();
  }
  return projectRoot;
}

function hasWorkspace(projectRoot: string): boolean {
  return existsSync(layoutFor(projectRoot).database);
}

export const serveCommand: CliCommand = {
  path: ["serve"],
  summary: "Serve the workbench for this project on http://127.0.0.1:3000 (loopback only).",
  keepsRunning: true,
  options: {
    port: { type: "string", valueName: "PORT", description: "TCP port (default 3000)." },
    host: { type: "string", valueName: "HOST", description: "Address to bind (default 127.0.0.1)." },
    "allow-remote": { type: "boolean", description: "Permit a non-loopback --host (exposes the workbench to the network)." },
    init: { type: "boolean", description: "Create the workspace first when there is none." },
    workers: { type: "string", valueName: "N", description: "Pool workers for captures (default: cores − 1, at least 1; 0 for none)." },
  },
  positionals: [],
  services: [],
  execute: async (args, env) => {
    const flags = env.flags;
    const port = integerFlag(args.values, "port") ?? 3000;
    if (port < 0 || port > 65535) {
      throw new EmberscopeError("INVALID_ARGUMENTS", "--port must be between 0 and 65535.", { details: { argument: "--port" } });
    }
    const host = stringFlag(args.values, "host") ?? "127.0.0.1";
    if (!isLoopbackHost(host) && args.values["allow-remote"] !== true) {
      throw new EmberscopeError("POLICY_DENIED", "Emberscope binds loopback only unless --allow-remote is given.", {
        details: { argument: "--host", host },
      });
    }
    if (!isAppBuilt()) {
      throw new EmberscopeError("CAPABILITY_UNAVAILABLE", "The workbench is not built yet.", {
        details: { missing: ".next/BUILD_ID", fix: "npm run build (npm start builds when needed)" },
      });
    }
    const projectRoot = await prepareWorkspace(env, args.values.init === true);
    const shownRoot = displayPath(projectRoot, env.ctx.locator.cwd);
    const url = `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
    process.env.EMBERSCOPE_PROJECT_ROOT = projectRoot;
    process.env.NEXT_TELEMETRY_DISABLED = "1";
    // stdout carries only the result document; Next's own logging goes to stderr.
    console.log = console.info = (...parts: unknown[]) => console.error(...parts);
    const { default: next } = await import("next");
    const app = next({ dev: false, dir: PACKAGE_ROOT, hostname: host, port, quiet: flags.quiet });
    await app.prepare();
    const handle = app.getRequestHandler();
    // MCP is answered ahead of Next's router (same handler as app/api/mcp/route.ts; see server/mcp/node-http.ts).
    const { handleMcpNodeRequest, isMcpRequest } = await import("../mcp/node-http");
    const mcpLocator = { cwd: projectRoot, projectRoot };
    const server = createServer((req, res) => void (isMcpRequest(req.url) ? handleMcpNodeRequest(req, res, mcpLocator) : handle(req, res)));
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          new EmberscopeError("CAPABILITY_UNAVAILABLE", `Cannot listen on ${host}:${port}.`, {
            details: { argument: "--port", reason: error.code ?? "listen failed" },
          }),
        ),
      );
      server.listen(port, host, () => resolve());
    });
    const bound = server.address();
    const boundUrl = typeof bound === "object" && bound ? url.replace(/:\d+$/, `:${bound.port}`) : url;
    const workerCount = integerFlag(args.values, "workers") ?? defaultWorkerCount();
    const supervisor = hasWorkspace(projectRoot) && workerCount > 0 ? startSupervisor(projectRoot, workerCount, env.log) : null;
    env.log(`Emberscope is serving ${shownRoot} at ${boundUrl}${supervisor ? ` with ${workerCount} pool worker(s)` : ""}`);
    env.announce?.({ url: boundUrl, project_root: shownRoot, pid: process.pid });
    await new Promise<void>((resolve) => {
      // close() waits for every open connection: idle keep-alive sockets are closed now, and
      // those still answering get a grace period before they are cut.
      const stop = () => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS).unref();
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    await supervisor?.stop();
    await app.close?.();
    return { document: { url: boundUrl, stopped: true }, human: "Server stopped.", exitCode: 0 };
  },
};
