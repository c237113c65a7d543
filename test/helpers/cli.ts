import { spawn } from "node:child_process";
import path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");
export const CLI = path.join(REPO_ROOT, "bin", "emberscope.js");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON document, when it is one. */
  json: any;
}

/** Runs the real CLI as a child process. */
export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> } = { cwd: REPO_ROOT }): Promise<CliResult> {
  return runProcess(process.execPath, [CLI, ...args], options);
}

/** Runs a program as a child process and collects its output (stdout parsed as JSON when it is). */
export function runProcess(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
  });
}
