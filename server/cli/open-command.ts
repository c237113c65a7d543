import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { EmberscopeError } from "../domain/errors";
import { writeFile } from "node:fs/promises";
import { callService, exportSpeedscope, importArtifact, type ServiceDef } from "../services";
import { CLI_ENTRY, isAppBuilt } from "../package-root";
import { displayPath, locateWorkspace, projectRootForInit } from "../store/layout";
import { liveServers, type ServerRegistration } from "../store/servers";
import { initWorkspace, openWorkspace } from "../store/workspace";
import { integerFlag, stringFlag } from "./args";
import { requirePositionals, type CliCommand, type CliEnv } from "./service-command";

/** How long `open` waits for a server it started to register (its Next app prepares first). */
const SERVER_START_MS = 60_000;

/** Set to anything but "" or "0" to print the URL without opening a browser (tests, SSH sessions). */
export const NO_BROWSER_ENV = "EMBERSCOPE_NO_BROWSER";

/** The project root to import into: the workspace found from here, or a new one in the current directory. */
function workspaceRoot(env: CliEnv): { projectRoot: string; created: boolean } {
  try {
    return { projectRoot: locateWorkspace(env.ctx.locator).projectRoot, created: false };
  } catch (error) {
    if (!(error instanceof EmberscopeError && error.code === "WORKSPACE_NOT_FOUND")) throw error;
    const projectRoot = projectRootForInit(env.ctx.locator);
    initWorkspace(projectRoot).close();
    env.log(`Initialized a workspace in ${displayPath(projectRoot, env.ctx.locator.cwd)}/.emberscope`);
    return { projectRoot, created: true };
  }
}

function runningServer(projectRoot: string): ServerRegistration | null {
  const ws = openWorkspace({ cwd: projectRoot, projectRoot }, { readonly: true });
  try {
    const live = liveServers(ws.db);
    return live.length ? live[live.length - 1] : null;
  } finally {
    ws.close();
  }
}

/**
 * Starts `emberscope serve` for the project in the background (it outlives this command; its log
 * is .emberscope/logs/server.log) and waits until it registers in the workspace with its URL.
 */
async function startServer(projectRoot: string, port: number, env: CliEnv): Promise<ServerRegistration> {
  const logs = path.join(projectRoot, ".emberscope", "logs");
  mkdirSync(logs, { recursive: true });
  const log = openSync(path.join(logs, "server.log"), "a");
  let exited: number | null = null;
  try {
    const child = spawn(process.execPath, [CLI_ENTRY, "serve", "--port", String(port), "--project-root", projectRoot], {
      cwd: projectRoot,
      detached: true,
      stdio: ["ignore", log, log],
      // Without serve's start-up warm-up of the drop's path (about a second of CPU, unless asked
      // for): this server is started to show the run just imported, and the warm-up would compete
      // with that import and with the browser's first load of its page.
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", EMBERSCOPE_WARM_UP: process.env.EMBERSCOPE_WARM_UP ?? "0" },
    });
    child.once("exit", (code) => (exited = code ?? -1));
    child.unref();
  } finally {
    closeSync(log);
  }
  env.log("Starting the workbench server…");
  const deadline = Date.now() + SERVER_START_MS;
  while (Date.now() < deadline) {
    if (exited !== null) break;
    const server = runningServer(projectRoot);
    if (server) return server;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new EmberscopeError("CAPABILITY_UNAVAILABLE", exited !== null ? "The workbench server stopped as it started; see .emberscope/logs/server.log." : "The workbench server did not start in time; see .emberscope/logs/server.log.", {
    details: { log: ".emberscope/logs/server.log", ...(exited !== null ? { exit_code: exited } : {}) },
  });
}

/** Opens a URL in the person's browser (xdg-open, open, start); false when there is no opener. */
function openBrowser(url: string): Promise<boolean> {
  const [command, args] = process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["cmd", ["/c", "start", "", url]] : ["xdg-open", [url]];
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}

export const openCommand: CliCommand = {
  path: ["open"],
  summary: "Import a profile or trace and open it in the workbench: starts (or reuses) the server and prints the run's URL, like `speedscope FILE`.",
  options: {
    format: { type: "string", valueName: "FORMAT", description: "Skip detection and read the file as this format." },
    port: { type: "string", valueName: "PORT", description: "Port for a server started here (default: any free port). A running server is reused." },
    "no-browser": { type: "boolean", description: `Print the URL without opening a browser (also: ${NO_BROWSER_ENV}=1).` },
  },
  positionals: [{ name: "FILE", description: "The profile or trace file (as for import)." }],
  services: [importArtifact as unknown as ServiceDef],
  execute: async (args, env) => {
    const [file] = requirePositionals(args, openCommand.positionals);
    if (!isAppBuilt()) {
      throw new EmberscopeError("CAPABILITY_UNAVAILABLE", "The workbench is not built yet.", { details: { missing: ".next/BUILD_ID", fix: "npm run build (npm start builds when needed)" } });
    }
    const started = Date.now();
    const { projectRoot, created } = workspaceRoot(env);
    const ctx = { ...env.ctx, locator: { cwd: env.ctx.locator.cwd, projectRoot } };
    // The server starts while the file is imported (it needs only the workspace): the slower of the two sets the wait.
    const running = runningServer(projectRoot);
    const reused = running !== null;
    const serverReady = running ? Promise.resolve(running) : startServer(projectRoot, integerFlag(args.values, "port") ?? 0, env);
    serverReady.catch(() => undefined); // awaited below; an import failure must not leave it unhandled
    const imported = await callService(importArtifact, ctx, { path: path.resolve(env.ctx.locator.cwd, file), format: stringFlag(args.values, "format") });
    const importedMs = Date.now() - started;
    const server = await serverReady;
    const url = `${server.url}/runs/${encodeURIComponent(imported.run_id)}`;
    const quietBrowser = args.values["no-browser"] === true || !["", "0", undefined].includes(process.env[NO_BROWSER_ENV]);
    const opened = quietBrowser ? false : await openBrowser(url);
    if (!quietBrowser && !opened) env.log("No browser opener was found (xdg-open); open the URL yourself.");
    return {
      document: {
        url,
        run_id: imported.run_id,
        commit_id: imported.commit_id,
        format: imported.format,
        server: { url: server.url, pid: server.pid, reused },
        workspace_created: created,
        browser_opened: opened,
        timings_ms: { import: importedMs, to_url: Date.now() - started },
      },
      human: url,
      exitCode: 0,
    };
  },
};

export const exportSpeedscopeCommand: CliCommand = {
  path: ["export", "speedscope"],
  summary: "Write a run's samples as a speedscope file (one sampled profile per track), to open in speedscope.app and the tools that read its format.",
  options: {
    metric: { type: "string", valueName: "METRIC", description: "Metric to export (the run's time metric by default)." },
    commit: { type: "string", valueName: "COMMIT", field: "commit_id", description: 'The commit to read (default "HEAD").' },
    out: { type: "string", valueName: "FILE", description: "Where to write it (default: the run's title + .speedscope.json, in the current directory)." },
  },
  positionals: [{ name: "RUN_ID", description: "The run." }],
  services: [exportSpeedscope as unknown as ServiceDef],
  execute: async (args, env) => {
    const [runId] = requirePositionals(args, exportSpeedscopeCommand.positionals);
    const result = await callService(exportSpeedscope, env.ctx, { run_id: runId, metric: stringFlag(args.values, "metric"), commit_id: stringFlag(args.values, "commit") });
    const out = path.resolve(env.ctx.locator.cwd, stringFlag(args.values, "out") ?? result.file_name);
    await writeFile(out, JSON.stringify(result.document));
    const profiles = (result.document.profiles as unknown[]).length;
    return {
      document: { file: out, run_id: runId, commit_id: result.commit_id, metric: result.metric, profiles },
      human: `Wrote ${displayPath(out, env.ctx.locator.cwd)}: ${result.metric} of run ${runId} at ${result.commit_id}, ${profiles} profile(s).`,
      exitCode: 0,
    };
  },
};
