import { spawn, type ChildProcess } from "node:child_process";
import { CLI } from "./cli";

export interface RunningServer {
  url: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/** Starts the real built app with `emberscope serve --port 0 --json` and waits for its address. */
export async function startServer(projectRoot: string, extraArgs: string[] = []): Promise<RunningServer> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--json", "--project-root", projectRoot, ...extraArgs], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), 30_000);
    child.stdout!.on("data", (d) => {
      stdout += d;
      try {
        const doc = JSON.parse(stdout) as { url?: string; code?: string };
        clearTimeout(timer);
        if (doc.url) resolve(doc.url);
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
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    });
  return { url, process: child, stop };
}
