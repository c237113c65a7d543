import { createServer, get as httpGet, type IncomingMessage, type ServerResponse } from "node:http";
import { networkInterfaces } from "node:os";
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
import { admitNodeRequest, lingerOnClose } from "../http/node-gate";
import { SESSION_PATH, SIGN_IN_PATH } from "../http/header-names";
import { launchSession, mintLaunchSignInCode } from "../http/session";
import { PROCESS_STARTED_AT } from "../services/agent-access";
import { loadDuckDb } from "../evidence/duckdb";
import { writeTransaction } from "../store/control-store";
import { pruneDeadServers, registerServer, unregisterServer } from "../store/servers";

/**
 * Routes a dropped file goes through, loaded once the server is up so that the first drop does not
 * wait for their code: the CSRF token's and the upload's route handlers (Next loads a route's code,
 * for the upload the services and the importers, on its first request; the upload route answers a
 * GET 405, and from then on keeps a spare writer DuckDB for the next import and, once, runs an
 * import and the run page's first flame tree in a throwaway workspace), and the run page the
 * drop opens, whose first render in a process costs more than the next: asked for a run that does
 * not exist, as a page and as the client's navigation asks (RSC).
 */
const WARM_ROUTES: readonly { path: string; headers?: Record<string, string> }[] = [
  { path: SESSION_PATH },
  { path: "/api/imports" },
  { path: "/runs/warm-up" },
  // Without router state, Next answers an RSC request only at `?_rsc` (elsewhere it redirects there).
  { path: "/runs/warm-up?_rsc", headers: { RSC: "1" } },
];

/** Asks each route once, in turn, discarding the answers; a failure is left for the real request to meet. */
async function warmRoutes(url: string, routes: typeof WARM_ROUTES): Promise<void> {
  for (const route of routes) {
    await new Promise<void>((resolve) => {
      const req = httpGet(`${url}${route.path}`, { headers: { connection: "close", ...route.headers } }, (res) => {
        res.resume();
        res.on("end", resolve);
        res.on("error", () => resolve());
      });
      req.on("error", () => resolve());
    });
  }
}

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

/** How often a server started before its workspace existed looks again, to register once it does. */
const REGISTER_RETRY_MS = 2000;

/**
 * Registers this server in the workspace's control store (so `agent-access status` reports what
 * it does) and removes the registration at stop; a server started before `init` registers as
 * soon as the workspace exists. Registrations of dead processes are removed on the way.
 */
function registerWhileServing(projectRoot: string, url: string): { stop: () => void } {
  const launchId = launchSession().launchId;
  let registered = false;
  const attempt = () => {
    if (registered || !hasWorkspace(projectRoot)) return;
    try {
      const ws = openWorkspace({ cwd: projectRoot, projectRoot });
      try {
        writeTransaction(ws.db, () => {
          pruneDeadServers(ws.db);
          registerServer(ws.db, { launch_id: launchId, pid: process.pid, url, started_at: PROCESS_STARTED_AT });
        });
        registered = true;
      } finally {
        ws.close();
      }
    } catch {
      // The workspace is being created or is unusable: try again at the next tick.
    }
  };
  attempt();
  const timer = registered ? null : setInterval(() => (attempt(), registered && timer && clearInterval(timer)), REGISTER_RETRY_MS);
  timer?.unref();
  return {
    stop: () => {
      if (timer) clearInterval(timer);
      if (!registered) return;
      try {
        const ws = openWorkspace({ cwd: projectRoot, projectRoot });
        try {
          unregisterServer(ws.db, launchId);
        } finally {
          ws.close();
        }
      } catch {
        // A workspace removed meanwhile has no registration left to remove.
      }
    },
  };
}

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * The host names beside loopback that address this server: a non-loopback --host itself, or for
 * a wildcard address every interface address (IP literals only: a name could be rebound).
 */
function extraHostsFor(host: string): string[] {
  const addresses = WILDCARD_HOSTS.has(host) ? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address)) : [host.replace(/^\[|\]$/g, "")];
  return addresses.map((a) => {
    try {
      return new URL(`http://${a.includes(":") ? `[${a}]` : a}`).hostname;
    } catch {
      return "";
    }
  }).filter((a) => a !== "" && !isLoopbackHost(a));
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
    compress: { type: "boolean", description: "Gzip responses on a loopback --host too (for a browser that reaches it through a tunnel or port forwarding); by default only a non-loopback --host compresses." },
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
    // The upload route, loaded below by warmRoutes, then warms the drop's path on a made profile in
    // a throwaway workspace (server/services/warm-up.ts); EMBERSCOPE_WARM_UP=0 leaves it out.
    if (process.env.EMBERSCOPE_WARM_UP !== "0") process.env.EMBERSCOPE_WARM_UP = "1";
    // stdout carries only the result document; Next's own logging goes to stderr.
    console.log = console.info = (...parts: unknown[]) => console.error(...parts);
    const session = launchSession();
    // MCP is answered ahead of Next's router (same handler as app/api/mcp/route.ts; see server/mcp/node-http.ts).
    const { handleMcpNodeRequest, isMcpRequest } = await import("../mcp/node-http");
    const mcpLocator = { cwd: projectRoot, projectRoot };
    let handle: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null = null;
    let appReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (appReady = resolve));
    // Bound to loopback, responses go uncompressed: Next's gzip on the fly costs the server's CPU on
    // every page and chunk (~0.1–0.2 s for a run page that streams a 2.4 MB flame tree and time
    // order, on cores the browser shares) to save bytes that cost nothing on loopback.
    // --compress: the browser is elsewhere although serve binds loopback (ssh -L, a forwarded port).
    const compress = !isLoopbackHost(host) || args.values.compress === true;
    // Every request passes the boundary (server/http/guard.ts) first: pages, route handlers and MCP alike.
    const server = createServer((req, res) => {
      if (!compress) delete req.headers["accept-encoding"];
      if (!admitNodeRequest(req, res)) return;
      if (isMcpRequest(req.url)) return void handleMcpNodeRequest(req, res, mcpLocator, true);
      void (handle ? handle(req, res) : ready.then(() => handle!(req, res)));
    });
    // A connection closed after a refused upload keeps reading briefly, so the client sees the answer.
    server.on("connection", lingerOnClose);
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
    const boundPort = typeof bound === "object" && bound ? bound.port : port;
    const boundUrl = url.replace(/:\d+$/, `:${boundPort}`);
    session.servedPort = boundPort;
    session.extraHosts = isLoopbackHost(host) ? [] : extraHostsFor(host);
    const { default: next } = await import("next");
    // Next learns the bound port (not 0): its proxy and route handlers see it as the request URL's port.
    const app = next({ dev: false, dir: PACKAGE_ROOT, hostname: host, port: boundPort, quiet: flags.quiet });
    await app.prepare();
    handle = app.getRequestHandler();
    appReady();
    const registration = registerWhileServing(projectRoot, boundUrl);
    const signInUrl = `${boundUrl}${SIGN_IN_PATH}?code=${mintLaunchSignInCode(session)}`;
    const workerCount = integerFlag(args.values, "workers") ?? defaultWorkerCount();
    const supervisor = hasWorkspace(projectRoot) && workerCount > 0 ? startSupervisor(projectRoot, workerCount, env.log) : null;
    env.log(`Emberscope is serving ${shownRoot} at ${boundUrl}${supervisor ? ` with ${workerCount} pool worker(s)` : ""}`);
    env.log(`Sign this browser in as you (a one-time link; Settings' agent switches need it): ${signInUrl}`);
    env.announce?.({ url: boundUrl, sign_in_url: signInUrl, project_root: shownRoot, pid: process.pid });
    // DuckDB's native library takes most of a second to load: loaded now, not by the first import or view.
    setImmediate(() => void loadDuckDb().catch(() => undefined));
    setImmediate(() => void warmRoutes(WILDCARD_HOSTS.has(host) ? `http://127.0.0.1:${boundPort}` : boundUrl, WARM_ROUTES));
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
    registration.stop();
    await supervisor?.stop();
    await app.close?.();
    return { document: { url: boundUrl, stopped: true }, human: "Server stopped.", exitCode: 0 };
  },
};
