// Runs a command with inherited stdio; resolves to its exit code.
import { spawn } from "node:child_process";

export function run(command, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit", ...options });
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

export const npmCommand = process.platform === "win32" ? "npm.cmd" : "npm";
