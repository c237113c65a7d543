import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import type { WarmUpState } from "../../server/services/warm-up-state";
import { CLI } from "./cli";
import { waitFor } from "./wait";

export interface RunningServer {
  url: string;
  /** The one-time sign-in link `serve` announced: opened in a browser, it makes that browser the person. */
  signInUrl: string;
  pid: number;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/**
 * Starts the real built app with `emberscope serve --port 0 --json` and waits for its announce
 * document; `cli` is another checkout's `bin/emberscope.js` (a benchmark comparing two trees);
 * `env` is added to this process's environment for the server's. Under vitest the server starts
 * without its start-up warm-up (EMBERSCOPE_WARM_UP=0: about a second of CPU per server, on the two
 * cores the suite's ~70 servers share) unless `env` asks for it; test/integration/warm-up.test.ts
 * tests it, and the benchmarks keep it.
 */
export async function startServer(projectRoot: string, extraArgs: string[] = [], cli = CLI, env: Record<string, string> = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [cli, "serve", "--port", "0", "--json", "--project-root", projectRoot, ...extraArgs], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...(process.env.VITEST ? { EMBERSCOPE_WARM_UP: "0" } : {}), ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const announced = await new Promise<{ url: string; sign_in_url: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), 30_000);
    child.stdout!.on("data", (d) => {
      stdout += d;
      try {
        const doc = JSON.parse(stdout) as { url?: string; sign_in_url?: string; pid?: number; code?: string };
        clearTimeout(timer);
        // Another checkout (`cli`) may be older than the sign-in link; this one always announces it.
        if (doc.url && doc.pid && (doc.sign_in_url || cli !== CLI)) resolve({ url: doc.url, sign_in_url: doc.sign_in_url ?? "", pid: doc.pid });
        else reject(new Error(`server refused to start: ${stdout}`));
      } catch {
        // the document is not complete yet
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    });
  return { url: announced.url, signInUrl: announced.sign_in_url, pid: announced.pid, process: child, stop };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly the headers given (Host, Origin and Sec-Fetch-* included, which fetch() would not send as given). */
export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The CSRF token a page of this server gets (GET /api/session). */
export async function csrfTokenOf(baseUrl: string): Promise<string> {
  const answer = await rawRequest(`${baseUrl}/api/session`);
  if (answer.status !== 200) throw new Error(`GET /api/session answered ${answer.status}: ${answer.body}`);
  return (JSON.parse(answer.body) as { csrf_token: string }).csrf_token;
}

/** Opens a sign-in link as a browser would (without following the redirect) and returns the person's cookie it sets ("name=value"). */
export async function signIn(signInUrl: string): Promise<{ cookie: string | null; answer: RawAnswer }> {
  const answer = await rawRequest(signInUrl);
  const setCookie = answer.headers["set-cookie"];
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  return { cookie: first ? first.split(";")[0] : null, answer };
}

/**
 * Waits until the server's start-up warm-up of the drop's path has ended (GET /api/imports/warm-up
 * says so) and returns that state; null when the server has no such route (an older checkout). A
 * warm-up still under way after `timeoutMs` fails the caller.
 */
export async function waitForWarmUp(baseUrl: string, timeoutMs = 60_000): Promise<WarmUpState | null> {
  const ask = async () => {
    const answer = await rawRequest(`${baseUrl}/api/imports/warm-up`);
    return answer.status === 404 ? null : (JSON.parse(answer.body) as WarmUpState);
  };
  // Idle: serve has not loaded the upload route yet (it does so once it listens).
  return waitFor(ask, (state) => state === null || (state.state !== "idle" && state.state !== "running"), timeoutMs, 50);
}

/** Linux's USER_HZ (`getconf CLK_TCK`), the unit of /proc/PID/stat's CPU times. */
const CLOCK_TICKS_PER_S = 100;

/** CPU time (user + system, every thread) a process has used so far, in ms, from /proc (clock ticks of 10 ms). */
export function processCpuMs(pid: number): number {
  // utime and stime, fields 14 and 15 of /proc/PID/stat, after the parenthesised command name (which may hold ") ").
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

/**
 * startServer, then waits for its start-up warm-up to end (at once when it has none): for
 * benchmarks whose figures must not include the warm-up's second of CPU.
 */
export async function startSettledServer(...args: Parameters<typeof startServer>): Promise<RunningServer> {
  const server = await startServer(...args);
  await waitForWarmUp(server.url);
  return server;
}
