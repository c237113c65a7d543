import { spawn } from "node:child_process";
import path from "node:path";
import { EmberscopeError } from "../domain/errors";
import { locateWorkspace, projectRootForInit, displayPath } from "../store/layout";
import { initWorkspace, openWorkspace } from "../store/workspace";
import { integerFlag, stringFlag } from "./args";
import type { CliCommand } from "./commands";
import { isAppBuilt, PACKAGE_ROOT } from "./package-root";

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Runs the built Next.js app for one project root, bound to loopback.
 * The app reads the project root from EMBERSCOPE_PROJECT_ROOT; everything else it serves
 * goes through the same services as this CLI.
 */
export const serveCommand: CliCommand = {
  path: ["serve"],
  summary: "Serve the workbench for this project on http://127.0.0.1:3000 (loopback only).",
  options: {
    port: { type: "string", valueName: "PORT", description: "TCP port (default 3000)." },
    host: { type: "string", valueName: "HOST", description: "Address to bind (default 127.0.0.1)." },
    "allow-remote": { type: "boolean", description: "Permit a non-loopback --host (exposes the workbench to the network)." },
    init: { type: "boolean", description: "Create the workspace first when there is none." },
  },
  positionals: [],
  services: [],
  execute: async (args, env) => {
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
    let layout;
    try {
      layout = locateWorkspace(env.ctx.locator);
    } catch (error) {
      if (!(args.values.init === true && error instanceof EmberscopeError && error.code === "WORKSPACE_NOT_FOUND")) throw error;
      const created = initWorkspace(projectRootForInit(env.ctx.locator));
      layout = created.layout;
      created.close();
      env.log(`Initialized a workspace in ${displayPath(layout.projectRoot, env.ctx.locator.cwd)}/.emberscope`);
    }
    openWorkspace({ cwd: layout.projectRoot, projectRoot: layout.projectRoot }).close();

    const url = `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
    const child = spawn(
      process.execPath,
      [path.join(PACKAGE_ROOT, "node_modules", "next", "dist", "bin", "next"), "start", "-H", host, "-p", String(port)],
      {
        cwd: PACKAGE_ROOT,
        env: { ...process.env, EMBERSCOPE_PROJECT_ROOT: layout.projectRoot, NEXT_TELEMETRY_DISABLED: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    const ready = await new Promise<boolean>((resolve) => {
      const onData = (chunk: Buffer) => {
        env.log(chunk.toString().trimEnd());
        if (/Ready in|started server on/i.test(chunk.toString())) resolve(true);
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", (chunk: Buffer) => env.log(chunk.toString().trimEnd()));
      child.on("exit", () => resolve(false));
    });
    if (!ready) {
      throw new EmberscopeError("PROCESS_FAILED", "The web server stopped before it was ready.", {
        details: { exit_code: child.exitCode },
      });
    }
    env.log(`Emberscope is serving ${displayPath(layout.projectRoot, env.ctx.locator.cwd)} at ${url}`);
    env.announce?.({ url, project_root: displayPath(layout.projectRoot, env.ctx.locator.cwd), pid: child.pid ?? null });
    const code = await new Promise<number>((resolve) => child.on("exit", (c, signal) => resolve(c ?? (signal ? 0 : 1))));
    return { document: { url, stopped: true, exit_code: code }, human: "Server stopped.", exitCode: code };
  },
};
