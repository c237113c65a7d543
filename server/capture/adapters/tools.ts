import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { asProcessEnv } from "../process";

/** Runs a short probe command; resolves with its exit code and output, or null when it cannot start. */
export function probeCommand(file: string, args: string[], timeoutMs = 5000): Promise<{ code: number; output: string } | null> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: asProcessEnv({ PATH: process.env.PATH ?? "/usr/bin:/bin" }), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

/** The absolute path of a program found on PATH (or given with a slash), or null. */
export function whichExecutable(name: string, searchPath: string, cwd: string): string | null {
  const candidates = name.includes("/") ? [path.resolve(cwd, name)] : searchPath.split(":").filter(Boolean).map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

export function isNodeExecutable(executable: string): boolean {
  return /^node(js)?(\d+)?$/.test(path.basename(executable)) || executable === process.execPath;
}
